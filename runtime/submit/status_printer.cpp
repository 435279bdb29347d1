#include "runtime/submit/status_printer.hpp"

namespace tony {

namespace {

std::string task_line(const task_status& t) {
  auto line = to_string(t.task) + " " + t.state;
  if (!t.host.empty() && t.port > 0)
    line += " at " + t.host + ":" + std::to_string(t.port);
  if (t.state == "SUCCEEDED" || t.state == "FAILED")
    line += " (exit " + std::to_string(t.exit_code) + ")";
  if (!t.container_id.empty() &&
      (t.state == "ALLOCATED" || t.state == "FAILED" || t.state == "LOST"))
    line += " [" + t.container_id + "]";
  return line;
}

} // namespace

std::vector<std::string> status_printer::update(const job_status& st) {
  std::vector<std::string> lines;
  if (st.state != job_state_) {
    job_state_ = st.state;
    lines.push_back("job " + st.app_id + " " + st.state);
  }
  for (auto& t : st.tasks) {
    auto key = to_string(t.task);
    auto& known = task_states_[key];
    if (known != t.state) {
      known = t.state;
      lines.push_back(task_line(t));
    }
  }
  return lines;
}

std::vector<std::string> status_printer::summary(const job_status& st,
                                                 const std::string& logs) {
  std::vector<std::string> lines;
  auto elapsed = st.finished_ms > st.started_ms && st.started_ms > 0
                     ? (st.finished_ms - st.started_ms) / 100
                     : -1;
  auto line = "job " + st.app_id + " (" + st.name + ") " + st.state;
  if (elapsed >= 0)
    line += " after " + std::to_string(elapsed / 10) + "." +
            std::to_string(elapsed % 10) + " s";
  lines.push_back(line);
  if (!st.diagnostics.empty())
    lines.push_back("diagnostics: " + st.diagnostics);
  if (!logs.empty())
    lines.push_back("logs: " + logs);
  return lines;
}

} // namespace tony
