#include "runtime/status_printer.hpp"
#include "tests/state_names.hpp"

#include <sstream>

#include <gtest/gtest.h>

using namespace tony;

namespace {

job_status two_workers() {
  job_status st;
  st.app_id = "application_1_0001";
  st.name = "mnist";
  st.state = job_state::running;
  st.attempt = 1;
  st.started_ms = 10'000;
  for (int i = 0; i < 2; ++i) {
    task_status t;
    t.task = {"worker", i};
    t.attempt = 1;
    t.state = i == 0 ? task_state::running : task_state::succeeded;
    t.host = "127.0.0.1";
    t.port = 4000 + i;
    t.container_id = "c" + std::to_string(i);
    t.started_ms = 11'000;
    t.finished_ms = i == 0 ? 0 : 15'000;
    st.tasks.push_back(t);
  }
  return st;
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (auto pos = text.find(part); pos != std::string::npos;
       pos = text.find(part, pos + 1))
    ++n;
  return n;
}

} // namespace

TEST(status_table, one_row_per_task_with_state_address_exit_and_time) {
  auto lines = status_printer::table(two_workers(), 22'300);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "application_1_0001 (mnist) RUNNING  12.3 s");
  EXPECT_EQ(lines[1].find("  TASK"), 0u);
  EXPECT_EQ(lines[2], "  worker:0  RUNNING    127.0.0.1:4000        11.3 s");
  EXPECT_EQ(lines[3], "  worker:1  SUCCEEDED  127.0.0.1:4001  0     4.0 s");
}

TEST(status_table, many_tasks_collapse_to_one_row_per_type) {
  auto st = two_workers();
  for (int i = 2; i < 40; ++i) {
    auto t = st.tasks[0];
    t.task.index = i;
    st.tasks.push_back(t);
  }
  auto lines = status_printer::table(st, 22'300, 16);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "  worker  x40    RUNNING 39, SUCCEEDED 1");
}

TEST(status_view, a_terminal_gets_the_table_rewritten_in_place) {
  std::ostringstream out;
  status_view view{out, true, false};
  auto st = two_workers();
  view.show(st);
  st.tasks[0].state = task_state::succeeded;
  view.show(st);
  auto text = out.str();
  EXPECT_EQ(count(text, "\x1b[4F\x1b[J"), 1u); // moved up over the 4 lines once
  EXPECT_EQ(count(text, "worker:1"), 2u);
}

TEST(status_view, a_pipe_gets_plain_lines_for_changes_only) {
  std::ostringstream out;
  status_view view{out, false, false};
  auto st = two_workers();
  st.tracking_url = "http://127.0.0.1:5000/";
  view.show(st);
  view.show(st);
  st.state = job_state::succeeded;
  st.finished_ms = 16'000;
  st.tasks[0].state = task_state::succeeded;
  view.finish(st, "/tmp/jobs/x");
  auto text = out.str();
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(count(text, "tony: tracking URL: http://127.0.0.1:5000/\n"), 1u);
  EXPECT_EQ(count(text, "tony: worker:0 RUNNING at 127.0.0.1:4000\n"), 1u);
  EXPECT_EQ(count(text, "tony: worker:0 SUCCEEDED"), 1u);
  EXPECT_NE(text.find("tony: job application_1_0001 (mnist) SUCCEEDED after 6.0 s"),
            std::string::npos);
  EXPECT_NE(text.find("tony: logs: /tmp/jobs/x"), std::string::npos);
}

TEST(status_view, the_summary_names_where_failed_tasks_logged) {
  auto st = two_workers();
  st.state = job_state::failed;
  st.tasks[0].state = task_state::failed;
  st.tasks[0].log_dir = "/tmp/jobs/x/containers/c0";
  auto lines = status_printer::summary(st, "/tmp/jobs/x");
  bool found = false;
  for (auto& l : lines)
    found = found || l == "worker:0 FAILED: its logs are in /tmp/jobs/x/containers/c0";
  EXPECT_TRUE(found);
}

TEST(status_view, a_new_attempt_is_announced_with_the_reason_and_tasks_listed_again) {
  std::ostringstream out;
  status_view view{out, false, false};
  auto st = two_workers();
  view.show(st);
  st.attempt = 2;
  st.state = job_state::allocating;
  st.diagnostics = "attempt 1 failed: worker:1 exited with code 3";
  for (auto& t : st.tasks) {
    t.attempt = 2;
    t.state = task_state::running;
  }
  view.show(st);
  auto text = out.str();
  EXPECT_NE(
      text.find("tony: attempt 2 starts (attempt 1 failed: worker:1 exited with code 3)"),
      std::string::npos)
      << text;
  // worker:0 was RUNNING before and is RUNNING again: still printed, it is a new task.
  EXPECT_EQ(count(text, "tony: worker:0 RUNNING"), 2u) << text;
}

// A gang that waits says why once it has waited 5 s, again when the reason
// changes (at most every 10 s), and a job that gets its containers at once
// prints nothing of it.
TEST(status_printer, a_waiting_gang_says_why_after_5_s_and_when_it_changes) {
  auto st = two_workers();
  st.state = job_state::allocating;
  for (auto& t : st.tasks)
    t.state = task_state::requested;
  st.diagnostics =
      "waiting for 2 of 2 containers (2 worker of 1024 MiB, 1 vcores): "
      "the queue's headroom is 0 MiB, 0 vcores, less than one worker container";
  status_printer p;
  auto text = [](const std::vector<std::string>& lines) {
    std::string all;
    for (auto& l : lines)
      all += l + "\n";
    return all;
  };
  EXPECT_EQ(count(text(p.update(st, 1'000)), "waiting for"), 0u);
  EXPECT_EQ(count(text(p.update(st, 4'000)), "waiting for"), 0u);
  EXPECT_EQ(count(text(p.update(st, 6'100)), "headroom is 0 MiB"), 1u);
  EXPECT_EQ(count(text(p.update(st, 7'000)), "waiting for"), 0u); // said once
  auto changed = st;
  changed.diagnostics = "waiting for 1 of 2 containers (1 worker of 1024 MiB, 1 vcores): "
                        "the queue's headroom is 0 MiB, 0 vcores, less than one worker "
                        "container";
  EXPECT_EQ(count(text(p.update(changed, 9'000)), "waiting for"), 0u); // within 10 s
  EXPECT_EQ(count(text(p.update(changed, 16'200)), "waiting for 1 of 2"), 1u);
  auto running = two_workers();
  EXPECT_EQ(count(text(p.update(running, 17'000)), "waiting for"), 0u);

  status_printer quick;
  EXPECT_EQ(count(text(quick.update(st, 1'000)), "waiting for"), 0u);
  EXPECT_EQ(count(text(quick.update(running, 2'000)), "waiting for"), 0u);
}
