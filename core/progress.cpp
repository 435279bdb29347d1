#include "core/progress.hpp"

namespace tony::core {

float job_progress(const job_status& st, const reported_progress& reported) {
  if (is_final(st))
    return 1.0f;
  // A restarted task is listed once per run: its last run counts.
  std::map<task_id, const task_status*> last;
  for (auto& t : st.tasks)
    if (t.tracked)
      last[t.task] = &t;
  double own = 0;
  int64_t reporting = 0;
  int64_t succeeded = 0;
  for (auto& [id, t] : last) {
    bool done = t->state == task_state::succeeded;
    succeeded += done ? 1 : 0;
    auto r = reported.find(id);
    if (r != reported.end() && r->second.first == st.attempt) {
      ++reporting;
      own += done ? 1.0 : static_cast<double>(r->second.second);
    }
  }
  if (reporting > 0)
    return static_cast<float>(own / static_cast<double>(reporting));
  if (last.empty())
    return 0.0f;
  return static_cast<float>(static_cast<double>(succeeded) /
                            static_cast<double>(last.size()));
}

} // namespace tony::core
