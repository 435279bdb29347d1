#include "submit/event_output.hpp"

#include <chrono>

#include "runtime/history/event_log.hpp"
#include "runtime/process/process.hpp"
#include "runtime/status_json.hpp"

namespace tony {

namespace {

using nlohmann::json;

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The AM's diagnostics of a failed task end with its stderr's last lines
// (lifecycle_monitor's exit_diagnostics); on YARN that is all a client has.
std::string tail_from_diagnostics(const std::string& diagnostics) {
  static const std::string marker = "--- last lines of its stderr ---\n";
  auto at = diagnostics.find(marker);
  return at == std::string::npos ? std::string{} : diagnostics.substr(at + marker.size());
}

} // namespace

void event_output::submitted(const std::string& app_id, const std::string& backend,
                             const std::string& name, int32_t tasks,
                             const std::map<std::string, std::string>& fields) {
  json j = {{"event", "submitted"},
            {"app_id", app_id},
            {"backend", backend},
            {"name", name},
            {"tasks", tasks}};
  for (auto& [k, v] : fields)
    j[k] = v;
  emit(std::move(j));
}

void event_output::show(const job_status& st) {
  auto events = history::diff(last_ ? &*last_ : nullptr, st, now_ms());
  for (auto& e : events)
    out_ << history::to_json_line(e) << std::endl;
  last_ = st;
}

void event_output::yarn_state(const std::string& app_id, const std::string& state,
                              const std::string& tracking_url) {
  emit({{"event", "yarn_state"},
        {"app_id", app_id},
        {"state", state},
        {"tracking_url", tracking_url}});
}

void event_output::finished(const job_status& st, int exit_code) {
  emit({{"event", "finished"},
        {"app_id", st.app_id},
        {"state", to_string(st.state)},
        {"diagnostics", st.diagnostics},
        {"exit_code", exit_code},
        {"failed_tasks", failed_tasks(st)},
        {"status", json::parse(to_json(st))}});
}

json event_output::failed_tasks(const job_status& st, size_t tail_bytes) {
  json result = json::array();
  for (auto& t : st.tasks) {
    if (!is_failure(t.state))
      continue;
    std::string tail;
    if (!t.log_dir.empty() && t.log_dir[0] == '/')
      tail = process::tail_file(t.log_dir + "/stderr", tail_bytes);
    if (tail.empty())
      tail = tail_from_diagnostics(t.diagnostics);
    result.push_back({{"task", to_string(t.task)},
                      {"state", to_string(t.state)},
                      {"exit_code", t.exit_code},
                      {"diagnostics", t.diagnostics},
                      {"log_dir", t.log_dir},
                      {"stderr_tail", tail}});
  }
  return result;
}

void event_output::emit(json j) {
  j["time_ms"] = now_ms();
  out_ << j.dump(-1, ' ', false, json::error_handler_t::replace) << std::endl;
}

} // namespace tony
