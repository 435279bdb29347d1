#include "submit/aggregated_logs.hpp"

#include <algorithm>
#include <cctype>

#include "messages/error.hpp"
#include "runtime/staging/remote_dir.hpp"

namespace tony {

namespace {

// Hadoop's boolean: "true" in any case.
bool is_true(std::string value) {
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return value == "true";
}

// A node's file is named after its NodeManager, "<host>_<port>" (and
// "_<time>" for a rolled upload).
bool of_hosts(const std::string& file, const std::set<std::string>& hosts) {
  for (auto& host : hosts)
    if (file.size() > host.size() && file.compare(0, host.size(), host) == 0 &&
        file[host.size()] == '_')
      return true;
  return false;
}

} // namespace

log_aggregation log_aggregation_of(const hadoop::configuration& conf) {
  log_aggregation result;
  result.enabled = is_true(conf.get_or("yarn.log-aggregation-enable", "false"));
  auto root = conf.get_or("yarn.log-aggregation.TFile.remote-app-log-dir", "");
  if (root.empty())
    root = conf.get_or("yarn.nodemanager.remote-app-log-dir", "/tmp/logs");
  if (!root.empty() && root[0] == '/') {
    auto fs = conf.get_or("fs.defaultFS", "file:///");
    while (!fs.empty() && fs.back() == '/')
      fs.pop_back();
    root = (fs == "file:" ? std::string{"file://"} : fs) + root;
  }
  result.root = root;
  result.suffix = conf.get_or("yarn.nodemanager.remote-app-log-dir-suffix", "logs");
  result.tfile_suffix =
      conf.get_or("yarn.log-aggregation.TFile.remote-app-log-dir-suffix", "");
  return result;
}

void aggregated_logs::refresh(const std::set<std::string>& hosts) {
  problems_.clear();
  std::vector<staging::dir_entry> entries;
  std::string found;
  for (auto& dir : yarn::aggregated_log_dirs(where_.root, user_, where_.suffix, app_id_,
                                             where_.tfile_suffix)) {
    auto listed = staging::list_dir(dir, nn_);
    if (listed) {
      found = dir;
      entries = std::move(*listed);
      break;
    }
    if (listed.error().code() != errc::unsatisfiable) {
      problems_.push_back(describe(listed.error()));
      return;
    }
  }
  if (found.empty())
    return; // nothing uploaded yet
  dir_ = found;
  for (auto& e : entries) {
    if (e.directory || e.name.size() < 4 ||
        e.name.compare(e.name.size() - 4, 4, ".tmp") == 0)
      continue;
    auto uri = found + "/" + e.name;
    if (by_file_.count(uri) != 0 || (!hosts.empty() && !of_hosts(e.name, hosts)))
      continue;
    auto bytes = staging::read_whole(uri, nn_);
    if (!bytes) {
      problems_.push_back(describe(bytes.error()));
      continue;
    }
    auto log = yarn::parse_aggregated_log(*bytes);
    if (!log) {
      problems_.push_back(uri + ": " + log.error().message());
      continue;
    }
    by_file_.emplace(uri, std::move(*log));
  }
}

const yarn::aggregated_container* aggregated_logs::find(const std::string& container_id,
                                                        std::string* from) const {
  for (auto& [uri, log] : by_file_)
    if (auto* c = log.find(container_id)) {
      if (from != nullptr)
        *from = uri;
      return c;
    }
  return nullptr;
}

std::vector<std::string> aggregated_logs::containers() const {
  std::vector<std::string> result;
  for (auto& [uri, log] : by_file_)
    for (auto& c : log.containers)
      result.push_back(c.container_id);
  std::sort(result.begin(), result.end());
  return result;
}

} // namespace tony
