import importlib.util
import sys
from pathlib import Path

# The local tier's sandbox (its own directory and jobs_dir per test, and a
# leftover process is a failure) and its skip-to-77 hook.
_LOCAL = Path(__file__).resolve().parent.parent / "local"
sys.path.insert(0, str(_LOCAL))
_spec = importlib.util.spec_from_file_location("local_conftest", _LOCAL / "conftest.py")
_local = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_local)

sandbox = _local.sandbox
pytest_sessionfinish = _local.pytest_sessionfinish
