#include "runtime/history/event_log.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "history/history_commands.hpp"
#include "runtime/history/history_store.hpp"
#include "runtime/status_json.hpp"
#include "tests/state_names.hpp"

using namespace tony;
using namespace tony::history;
namespace fs = std::filesystem;

namespace {

task_status task(const char* type, int32_t index, const char* state,
                 int32_t attempt = 1) {
  task_status t;
  t.task = {type, index};
  t.attempt = attempt;
  t.state = task_state_of(state);
  return t;
}

job_status job(const char* state, std::vector<task_status> tasks, int32_t attempt = 1) {
  job_status st;
  st.app_id = "application_1_0001";
  st.name = "j";
  st.state = job_state_of(state);
  st.attempt = attempt;
  st.started_ms = 1000;
  st.tasks = std::move(tasks);
  return st;
}

std::vector<std::string> kinds(const std::vector<job_event>& events) {
  std::vector<std::string> result;
  for (auto& e : events)
    result.push_back(e.kind);
  return result;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

TEST(event_log, the_first_snapshot_names_the_job_then_every_task) {
  auto st =
      job("ALLOCATING", {task("worker", 0, "REQUESTED"), task("ps", 0, "REQUESTED")});
  EXPECT_EQ(kinds(diff(nullptr, st, 5)),
            (std::vector<std::string>{"job_state", "task_requested", "task_requested"}));
}

TEST(event_log, an_unchanged_snapshot_adds_nothing) {
  auto st = job("RUNNING", {task("worker", 0, "RUNNING")});
  EXPECT_TRUE(diff(&st, st, 5).empty());
}

TEST(event_log, a_job_ends_after_its_last_task_in_the_log) {
  auto before = job("RUNNING", {task("worker", 0, "RUNNING")});
  auto after = job("SUCCEEDED", {task("worker", 0, "SUCCEEDED")});
  after.tasks[0].exit_code = 0;
  EXPECT_EQ(kinds(diff(&before, after, 5)),
            (std::vector<std::string>{"task_finished", "job_state"}));
  auto done = after;
  done.finished_ms = 9000;
  EXPECT_EQ(kinds(diff(&after, done, 6)), (std::vector<std::string>{"job_finished"}));
}

TEST(event_log, a_field_change_without_a_state_change_is_an_update) {
  auto before = job("RUNNING", {task("worker", 0, "RUNNING")});
  auto after = before;
  after.tasks[0].diagnostics = "slow";
  EXPECT_EQ(kinds(diff(&before, after, 5)), (std::vector<std::string>{"task_updated"}));
}

TEST(event_log, every_field_of_the_apis_objects_is_a_change) {
  auto before = job("RUNNING", {task("worker", 0, "RUNNING"), task("ps", 0, "RUNNING")});
  // One change per field /api/job writes of a task: each is an update of
  // that task alone.
  std::vector<void (*)(task_status&)> task_changes{
      [](task_status& t) { t.host = "h"; },
      [](task_status& t) { t.port = 9; },
      [](task_status& t) { t.container_id = "c"; },
      [](task_status& t) { t.exit_code = 1; },
      [](task_status& t) { t.tracked = false; },
      [](task_status& t) { t.diagnostics = "d"; },
      [](task_status& t) { t.started_ms = 1; },
      [](task_status& t) { t.finished_ms = 1; },
      [](task_status& t) { t.log_dir = "/l"; },
      [](task_status& t) { t.restarts = 1; },
  };
  for (size_t i = 0; i < task_changes.size(); ++i) {
    auto after = before;
    task_changes[i](after.tasks[1]);
    auto events = diff(&before, after, 5);
    ASSERT_EQ(kinds(events), (std::vector<std::string>{"task_updated"}))
        << "change " << i;
    EXPECT_EQ(events[0].task.task, (task_id{"ps", 0})) << "change " << i;
  }
  // ... and of the job: a job_state line.
  std::vector<void (*)(job_status&)> job_changes{
      [](job_status& j) { j.app_id = "application_1_0002"; },
      [](job_status& j) { j.name = "k"; },
      [](job_status& j) { j.state = job_state_of("KILLED"); },
      [](job_status& j) { j.diagnostics = "d"; },
      [](job_status& j) { j.started_ms = 2; },
      [](job_status& j) { j.tracking_url = "http://t/"; },
      [](job_status& j) { j.tensorboard_task = "chief:0"; },
      [](job_status& j) { j.tensorboard_address = "h:1"; },
      [](job_status& j) { j.tensorboard_log_dir = "/tb"; },
      [](job_status& j) { j.recovery = "adopted"; },
  };
  for (size_t i = 0; i < job_changes.size(); ++i) {
    auto after = before;
    job_changes[i](after);
    EXPECT_EQ(kinds(diff(&before, after, 5)), (std::vector<std::string>{"job_state"}))
        << "change " << i;
  }
  // The same tasks in another order are no change; a new attempt of a
  // task is a task of its own.
  auto reordered = before;
  std::swap(reordered.tasks[0], reordered.tasks[1]);
  EXPECT_TRUE(diff(&before, reordered, 5).empty());
  auto again = before;
  again.tasks.push_back(task("worker", 0, "REQUESTED", 2));
  EXPECT_EQ(kinds(diff(&before, again, 5)), (std::vector<std::string>{"task_requested"}));
}

TEST(event_log, lines_round_trip_and_replay_to_the_last_snapshot) {
  std::vector<job_status> snaps{
      job("ALLOCATING", {task("worker", 0, "REQUESTED")}),
      job("RUNNING", {task("worker", 0, "RUNNING")}),
      job("FAILED", {task("worker", 0, "FAILED")}),
  };
  snaps[2].diagnostics = "worker:0 exited with code 3\n\"quoted\" \xc3\xa9";
  snaps[2].tasks[0].exit_code = 3;
  snaps[2].finished_ms = 5000;
  std::string text;
  const job_status* prev = nullptr;
  for (auto& s : snaps) {
    for (auto& e : diff(prev, s, 7))
      text += to_json_line(e) + "\n";
    prev = &s;
  }
  auto events = parse_event_log(text);
  ASSERT_TRUE(events);
  EXPECT_EQ(to_json(replay(*events)), to_json(snaps.back()));
}

TEST(event_log, a_torn_last_line_is_dropped_but_a_bad_middle_line_is_an_error) {
  auto st = job("RUNNING", {task("worker", 0, "RUNNING")});
  std::string good;
  for (auto& e : diff(nullptr, st, 1))
    good += to_json_line(e) + "\n";
  auto torn = parse_event_log(good + "{\"time_ms\":3,\"ev");
  ASSERT_TRUE(torn);
  EXPECT_EQ(torn->size(), 2u);
  auto bad = parse_event_log("{oops}\n" + good);
  ASSERT_FALSE(bad);
}

// Found by fuzz_event_log: a number too long for 64 bits (a corrupt line)
// is read as a float, and converting that to int64_t was undefined (it gave
// INT64_MIN on x86). Such a value now reads as 0, as a non-number does.
TEST(event_log, numbers_beyond_int64_read_as_zero) {
  auto events = parse_event_log(
      "{\"event\":\"job_state\",\"time_ms\":179590431144795904323478,"
      "\"job\":{\"state\":\"RUNNING\",\"started_ms\":1e300,\"attempt\":-1e19}}\n"
      "{\"event\":\"metrics\",\"time_ms\":18446744073709551615,\"step_ms\":-1e300,"
      "\"tasks\":{}}\n"
      "{\"event\":\"task_started\",\"time_ms\":12.9,"
      "\"task\":{\"type\":\"worker\",\"index\":0,\"state\":\"RUNNING\","
      "\"finished_ms\":9.3e18}}\n");
  ASSERT_TRUE(events) << to_string(events.error());
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ((*events)[0].time_ms, 0);
  EXPECT_EQ((*events)[0].job.started_ms, 0);
  EXPECT_EQ((*events)[0].job.attempt, 0);
  EXPECT_EQ((*events)[1].time_ms, 0);
  EXPECT_EQ((*events)[1].step_ms, 0);
  EXPECT_EQ((*events)[2].time_ms, 12);
  EXPECT_EQ((*events)[2].task.finished_ms, 0);
}

TEST(event_log, a_new_attempt_replaces_the_table) {
  job_status st;
  apply(st,
        diff(nullptr,
             job("RUNNING", {task("worker", 0, "FAILED"), task("worker", 1, "RUNNING")}),
             1)[1]);
  job_event e;
  e.kind = "task_requested";
  e.task = task("worker", 0, "REQUESTED", 2);
  apply(st, e);
  ASSERT_EQ(st.tasks.size(), 1u);
  EXPECT_EQ(st.tasks[0].attempt, 2);
}

TEST(event_log, the_writer_appends_flushed_lines_and_the_dir_lists_them) {
  auto dir = fs::temp_directory_path() / ("tony-events-" + std::to_string(::getpid()));
  fs::create_directories(dir / "application_5_0002");
  auto path = (dir / "application_5_0002" / "events.jsonl").string();
  {
    auto w = event_log_writer::open(path);
    ASSERT_TRUE(w);
    job_event sub;
    sub.kind = "job_submitted";
    sub.time_ms = 1000;
    sub.job = job("NEW", {});
    sub.job.app_id = "application_5_0002";
    sub.info["user"] = "alice";
    sub.task_counts["worker"] = 1;
    (*w)->write(sub);
    (*w)->observe(job("RUNNING", {task("worker", 0, "RUNNING")}));
    (*w)->observe(job("RUNNING", {task("worker", 0, "RUNNING")}));
    // Readable while still open: every line is flushed.
    auto events = parse_event_log(read_all(path));
    ASSERT_TRUE(events);
    EXPECT_EQ(kinds(*events),
              (std::vector<std::string>{"job_submitted", "job_state", "task_started"}));
    EXPECT_EQ((*events)[0].info.at("user"), "alice");
    EXPECT_EQ((*events)[0].task_counts.at("worker"), 1);
  }
  // A history dir's flat layout beside a jobs dir's.
  fs::copy_file(path, dir / "application_5_0010.jsonl");
  auto hd = open_history(dir.string(), "", "u");
  ASSERT_TRUE(hd);
  auto logs = (*hd)->list();
  ASSERT_TRUE(logs);
  ASSERT_EQ(logs->size(), 2u);
  EXPECT_EQ((*logs)[0].app_id, "application_5_0010"); // newest first
  EXPECT_EQ((*logs)[1].app_id, "application_5_0002");
  // tony-history show reads it back.
  history_options opts;
  opts.dirs = {dir.string()};
  std::ostringstream out, err;
  EXPECT_EQ(show_job(opts, "application_5_0002", false, out, err), 0);
  EXPECT_NE(out.str().find("task_started     worker:0 RUNNING"), std::string::npos);
  EXPECT_NE(show_job(opts, "application_9_0001", false, out, err), 0);
  EXPECT_NE(err.str().find("no event log of application_9_0001"), std::string::npos);
  fs::remove_all(dir);
}

TEST(event_log, the_history_dir_defaults_follow_the_default_filesystem) {
  EXPECT_EQ(history_location("", "hdfs://nn:9000", "bob"),
            "hdfs://nn:9000/user/bob/.tony/history");
  EXPECT_EQ(history_location("", "hdfs://nn:9000/", "bob"),
            "hdfs://nn:9000/user/bob/.tony/history");
  EXPECT_EQ(history_location("/shared/tony", "hdfs://nn:9000", "bob"),
            "hdfs://nn:9000/shared/tony");
  EXPECT_EQ(history_location("/shared/tony/", "file:///", "bob"), "file:///shared/tony");
  EXPECT_EQ(history_location("hdfs://other:8020/h", "file:///", "bob"),
            "hdfs://other:8020/h");
  auto local = history_location("", "file:///", "bob");
  EXPECT_EQ(local.rfind("file://", 0), 0u);
  EXPECT_NE(local.find("/.tony/history"), std::string::npos);
}

TEST(event_log, application_ids_sort_by_cluster_time_then_number) {
  EXPECT_TRUE(newer_app("application_2_0001", "application_1_0009"));
  EXPECT_TRUE(newer_app("application_1_0010", "application_1_0009"));
  EXPECT_FALSE(newer_app("application_1_0001", "application_1_0002"));
}

TEST(status_json, a_state_tony_does_not_know_is_refused_naming_it) {
  auto job = tony::job_status_from_json(R"({"app_id":"a","state":"ACCEPTED"})");
  ASSERT_FALSE(job);
  EXPECT_NE(to_string(job.error()).find("job status has no known state ('ACCEPTED')"),
            std::string::npos)
      << to_string(job.error());
  auto task = tony::job_status_from_json(
      R"({"state":"RUNNING","tasks":[{"type":"worker","index":1,"state":"BUSY"}]})");
  ASSERT_FALSE(task);
  EXPECT_NE(to_string(task.error()).find("task worker:1 has no known state ('BUSY')"),
            std::string::npos)
      << to_string(task.error());
  auto fine = tony::job_status_from_json(
      R"({"state":"RUNNING","tasks":[{"type":"worker","index":1,"state":"LOST"}]})");
  ASSERT_TRUE(fine) << to_string(fine.error());
  EXPECT_EQ(fine->state, tony::job_state::running);
  EXPECT_EQ(fine->tasks.at(0).state, tony::task_state::lost);
}
