#include "compat/tony_keys.hpp"

#include <algorithm>

#include "compat/text.hpp"

namespace tony {

const std::set<std::string>& reserved_segments() {
  static const std::set<std::string> xs{
      "application", "am",           "task",   "docker", "containers", "container",
      "history",     "portal",       "keytab", "https",  "http",       "secret",
      "horovod",     "version-info", "yarn",   "other",  "execution"};
  return xs;
}

const std::vector<std::string>& type_props() {
  static const std::vector<std::string> xs{
      "instances",  "memory",       "vcores",         "gpus",
      "command",    "node-label",   "resources",      "max-instances",
      "depends-on", "docker.image", "placement-spec", "allocation-tags"};
  return xs;
}

const std::vector<std::string>& known_tony_keys() {
  static const std::vector<std::string> xs = [] {
    std::vector<std::string> keys{
        "tony.application.name",
        "tony.application.type",
        "tony.application.queue",
        "tony.yarn.queue",
        "tony.application.tags",
        "tony.application.node-label",
        "tony.application.enable-preprocess",
        "tony.application.prepare-stage",
        "tony.application.training-stage",
        "tony.application.timeout",
        "tony.application.framework",
        "tony.application.num-client-rm-connect-retries",
        "tony.application.distributed-mode",
        "tony.application.hadoop.location",
        "tony.application.hadoop.classpath",
        "tony.application.untracked.jobtypes",
        "tony.application.sidecar.jobtypes",
        "tony.application.stop-on-failure-jobtypes",
        "tony.application.fail-on-worker-failure-enabled",
        "tony.application.security.enabled",
        "tony.application.hdfs-conf-path",
        "tony.application.yarn-conf-path",
        "tony.application.mapred-conf-path",
        "tony.application.tensorboard-log-dir",
        "tony.application.docker.enabled",
        "tony.application.docker.image",
        "tony.am.memory",
        "tony.am.vcores",
        "tony.am.gpus",
        "tony.am.retry-count",
        "tony.am.wait-client-signal-stop-timeout-sec",
        "tony.task.heartbeat-interval-ms",
        "tony.task.max-missed-heartbeats",
        "tony.task.max-total-instances",
        "tony.task.max-total-gpus",
        "tony.task.am.jvm.opts",
        "tony.task.executor.jvm.opts",
        "tony.task.metrics-interval-ms",
        "tony.task.gpu-metrics.enabled",
        "tony.container.allocation.timeout",
        "tony.container.registration.timeout",
        "tony.task.executor.execution-timeout-ms",
        "tony.task.executor.registry-timeout-sec",
        "tony.am.startup-timeout",
        "tony.containers.resources",
        "tony.containers.command",
        "tony.containers.envs",
        "tony.execution.envs",
        "tony.docker.enabled",
        "tony.docker.containers.image",
        "tony.docker.containers.mount",
        "tony.docker.<type>.image",
        "tony.other.namenodes",
        "tony.python-exec-path",
        "tony.gpu-exec-path",
        "tony.worker.timeout",
    };
    for (auto& prop : type_props())
      keys.push_back("tony.<type>." + prop);
    return keys;
  }();
  return xs;
}

const std::vector<std::pair<std::string, std::string>>& ignored_tony_keys() {
  static const std::vector<std::pair<std::string, std::string>> xs{
      {"tony.history.", "TonY's history server setting; tony keeps an event log per job "
                        "([cluster] history_dir, tony-history)"},
      {"tony.portal.", "TonY portal setting; tony serves the job page from its AM"},
      {"tony.keytab.", "TonY portal setting"},
      {"tony.https.", "TonY portal setting"},
      {"tony.http.", "TonY portal setting"},
      {"tony.secret.", "TonY portal setting"},
      {"tony.horovod.", "TonY's own Horovod test switches"},
      {"tony.version-info.", "TonY build information"},
      {"tony.application.num-client-rm-connect-retries",
       "tony-submit retries the ResourceManager for 60 s"},
      {"tony.application.hadoop.", "tony runs no JVM in the job"},
      {"tony.task.am.jvm.opts", "tony runs no JVM in the job"},
      {"tony.task.executor.jvm.opts", "tony runs no JVM in the job"},
      {"tony.task.metrics-interval-ms", "tony reports no task metrics yet"},
      {"tony.task.gpu-metrics.enabled", "tony reports no task metrics yet"},
      {"tony.am.wait-client-signal-stop-timeout-sec",
       "tony's AM stops without waiting for the client"},
      {"tony.application.security.enabled",
       "tony follows hadoop.security.authentication of the Hadoop configuration"},
      {"tony.application.hdfs-conf-path",
       "tony reads one Hadoop configuration directory (--hadoop-conf, HADOOP_CONF_DIR)"},
      {"tony.application.yarn-conf-path",
       "tony reads one Hadoop configuration directory (--hadoop-conf, HADOOP_CONF_DIR)"},
      {"tony.application.mapred-conf-path", "tony uses no MapReduce configuration"},
      {"tony.application.type",
       "tony sets the YARN application type from the framework (TENSORFLOW, PYTORCH, "
       "HOROVOD, TONY)"},
      {"tony.application.stop-on-failure-jobtypes",
       "tony stops the job when any tracked task, or an untracked one that is no "
       "sidecar, "
       "fails: every type behaves as listed"},
      {"tony.gpu-exec-path", "tony reports no GPU metrics yet"},
  };
  return xs;
}

std::vector<std::string> tony_namenodes(const std::string& value) {
  std::vector<std::string> uris;
  for (auto uri : compat::split_commas(value, false)) {
    // A path after hdfs://host:port names no other file system.
    if (auto slash = uri.find('/', 7); uri.rfind("hdfs://", 0) == 0 && slash != uri.npos)
      uri.resize(slash);
    if (std::find(uris.begin(), uris.end(), uri) == uris.end())
      uris.push_back(uri);
  }
  return uris;
}

} // namespace tony
