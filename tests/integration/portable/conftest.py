def pytest_sessionfinish(session, exitstatus):
    # A test skipped (no root for a mount namespace) is reported to ctest as
    # skipped (SKIP_RETURN_CODE 77) rather than passed.
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or exitstatus != 0:
        return
    stats = reporter.stats
    if stats.get("skipped") and not stats.get("passed"):
        session.exitstatus = 77
