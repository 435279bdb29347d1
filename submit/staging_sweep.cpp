#include "submit/staging_sweep.hpp"

#include <algorithm>

#include "messages/error.hpp"
#include "runtime/staging/remote_dir.hpp"

namespace tony {

bool removable(const yarn::application_id& app, rm_verdict verdict,
               int64_t current_cluster_ts, int64_t dir_modified_ms, int64_t now_ms) {
  switch (verdict.kind) {
  case rm_verdict::ended:
    return true;
  case rm_verdict::unknown:
    // Another cluster timestamp: another RM's, or this RM's before a
    // restart; a root shared by clusters holds others' running jobs, and
    // nothing here can say whether they run.
    return app.cluster_timestamp == current_cluster_ts &&
           now_ms - dir_modified_ms > unknown_app_grace_ms;
  default:
    return false;
  }
}

sweep_result
sweep_staging(const std::string& root, const webhdfs::namenode_http& nn,
              const std::function<rm_verdict(const yarn::application_id&)>& ask,
              int64_t current_cluster_ts, int64_t now_ms, const sweep_options& opts) {
  sweep_result result;
  auto entries = staging::list_dir(root, nn);
  if (!entries) {
    // No root yet (a first job) is nothing to sweep.
    if (entries.error().code() != errc::unsatisfiable)
      result.problems.push_back(describe(entries.error()));
    return result;
  }
  // Oldest first: the ids of one RM start count up.
  std::vector<std::pair<yarn::application_id, staging::dir_entry>> apps;
  for (auto& e : *entries) {
    if (!e.directory || e.name.rfind("application_", 0) != 0 || e.name == opts.except)
      continue;
    auto id = yarn::parse_application_id(e.name);
    if (!id || yarn::to_string(*id) != e.name)
      continue; // not one of ours
    apps.emplace_back(*id, e);
  }
  std::sort(apps.begin(), apps.end(), [](auto& x, auto& y) {
    return std::make_pair(x.first.cluster_timestamp, x.first.id) <
           std::make_pair(y.first.cluster_timestamp, y.first.id);
  });
  if (apps.size() > opts.max_checks)
    apps.resize(opts.max_checks);
  for (auto& [id, e] : apps) {
    auto verdict = ask(id);
    if (!removable(id, verdict, current_cluster_ts, e.modified_ms, now_ms)) {
      result.kept.push_back(e.name);
      continue;
    }
    auto dir = root + "/" + e.name;
    if (auto ok = staging::remove_tree(dir, nn); !ok)
      result.problems.push_back(describe(ok.error()));
    else
      result.removed.push_back(e.name);
  }
  return result;
}

} // namespace tony
