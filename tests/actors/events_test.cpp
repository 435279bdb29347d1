// Scenarios of the monitor's event sink (monitor_config::on_change) and the
// event log derived from it (runtime/history/event_log.hpp).

#define CAF_SUITE events

#include "runtime/history/event_log.hpp"
#include "runtime/status_json.hpp"
#include "tests/actors/harness.hpp"

using namespace tony;
using namespace tony::testing;
using std::chrono::seconds;

namespace {

const task_id w0{"worker", 0};
const task_id w1{"worker", 1};
const task_id ps0{"ps", 0};

using strings = std::vector<std::string>;

// Records every snapshot the monitor hands out.
struct recorder {
  std::vector<job_status> seen;

  std::function<void(const job_status&)> sink() {
    return [this](const job_status& st) { seen.push_back(st); };
  }

  std::vector<history::job_event> events() const {
    std::vector<history::job_event> result;
    const job_status* prev = nullptr;
    for (auto& st : seen) {
      for (auto& e : history::diff(prev, st, 0))
        result.push_back(std::move(e));
      prev = &st;
    }
    return result;
  }
};

// "kind STATE" per task and for the job, in order.
strings task_trail(const std::vector<history::job_event>& events, const task_id& t,
                   int32_t attempt = 1) {
  strings result;
  for (auto& e : events)
    if (e.kind.rfind("task_", 0) == 0 && e.task.task == t && e.task.attempt == attempt)
      result.push_back(e.kind + " " + to_string(e.task.state));
  return result;
}

strings job_trail(const std::vector<history::job_event>& events) {
  strings result;
  for (auto& e : events)
    if (e.kind.rfind("job_", 0) == 0)
      result.push_back(e.kind + " " + to_string(e.job.state));
  return result;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(event_tests, harness)

CAF_TEST(a succeeded job emits every task state change and replays to its last status) {
  recorder rec;
  on_change = rec.sink();
  start();
  register_all();
  exit_task(w0, 0);
  exit_task(w1, 0);
  exit_task(ps0, 143, "", 1, 15);
  auto final_status = status();
  CAF_REQUIRE_EQUAL(final_status.state, "SUCCEEDED");
  auto events = rec.events();
  CAF_CHECK_EQUAL(task_trail(events, w0),
                  (strings{"task_requested REQUESTED", "task_allocated ALLOCATED",
                           "task_launched LAUNCHED", "task_registered REGISTERED",
                           "task_started RUNNING", "task_finished SUCCEEDED"}));
  auto ps = task_trail(events, ps0);
  CAF_REQUIRE(!ps.empty());
  CAF_CHECK_EQUAL(ps.back(), "task_finished KILLED");
  CAF_CHECK_EQUAL(
      job_trail(events),
      (strings{"job_state ALLOCATING", "job_state REGISTERING", "job_state RUNNING",
               "job_state SUCCEEDED", "job_finished SUCCEEDED"}));
  // The job succeeds after its last tracked task, in the log as in time.
  size_t last_worker = 0, job_end = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].kind == "task_finished" && events[i].task.task == w1)
      last_worker = i;
    if (events[i].kind == "job_state" && events[i].job.state == "SUCCEEDED")
      job_end = i;
  }
  CAF_CHECK_LESS(last_worker, job_end);
  CAF_CHECK_EQUAL(to_json(history::replay(events)), to_json(final_status));
  // Written and read back, the log replays to the same table.
  std::string text;
  for (auto& e : events)
    text += history::to_json_line(e) + "\n";
  auto parsed = history::parse_event_log(text);
  CAF_REQUIRE(parsed);
  CAF_CHECK_EQUAL(to_json(history::replay(*parsed)), to_json(final_status));
}

CAF_TEST(the table of a failed attempt is logged before the next attempt) {
  job.policy.max_attempts = 2;
  recorder rec;
  on_change = rec.sink();
  start();
  register_all();
  exit_task(w0, 1, "boom\n");
  CAF_REQUIRE_EQUAL(status().attempt, 2);
  auto events = rec.events();
  auto first = task_trail(events, w0, 1);
  CAF_REQUIRE(!first.empty());
  CAF_CHECK_EQUAL(first.back(), "task_finished FAILED");
  auto second = task_trail(events, w0, 2);
  CAF_REQUIRE(!second.empty());
  CAF_CHECK_EQUAL(second.front(), "task_requested REQUESTED");
  // The replayed table is the new attempt's only.
  auto replayed = history::replay(events);
  CAF_CHECK_EQUAL(replayed.attempt, 2);
  for (auto& t : replayed.tasks)
    CAF_CHECK_EQUAL(t.attempt, 2);
  CAF_CHECK_EQUAL(to_json(replayed), to_json(status()));
}

CAF_TEST(the monitor works without an event sink) {
  start();
  register_all();
  exit_task(w0, 0);
  exit_task(w1, 0);
  exit_task(ps0, 143, "", 1, 15);
  CAF_CHECK_EQUAL(status().state, "SUCCEEDED");
}

CAF_TEST_FIXTURE_SCOPE_END()
