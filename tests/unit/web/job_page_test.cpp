#include "tests/state_names.hpp"
#include "web/job_page.hpp"

#include <gtest/gtest.h>

using namespace tony;
using namespace tony::http;

namespace {

task_status task(const char* type, int32_t index, const char* state, int32_t port = 0) {
  task_status t;
  t.task = {type, index};
  t.attempt = 1;
  t.state = task_state_of(state);
  t.host = "127.0.0.1";
  t.port = port;
  t.container_id = "container_1_0001_01_00000" + std::to_string(index + 2);
  t.log_dir = "/tmp/jobs/" + t.container_id;
  return t;
}

job_status running_job() {
  job_status st;
  st.app_id = "application_1_0001";
  st.name = "mnist";
  st.state = job_state::running;
  st.attempt = 1;
  st.started_ms = 1'700'000'000'000;
  st.tasks = {task("worker", 0, "RUNNING", 4000), task("worker", 1, "SUCCEEDED", 4001)};
  return st;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST(job_page, shows_every_task_with_its_state_and_address) {
  auto html = render_job_page(running_job(), 1'700'000'012'300);
  EXPECT_TRUE(has(html, "id=\"task-worker-0\""));
  EXPECT_TRUE(has(html, "data-task=\"worker:1\" data-state=\"SUCCEEDED\""));
  EXPECT_TRUE(has(html, "127.0.0.1:4000"));
  EXPECT_TRUE(
      has(html, "<span id=\"job-state\" class=\"state state-RUNNING\">RUNNING</span>"));
  EXPECT_TRUE(has(html, "12.3 s"));
  EXPECT_TRUE(has(html, "2023-11-14 22:13:20 UTC"));
}

TEST(job_page, links_are_relative_so_any_proxy_prefix_works) {
  auto html = render_job_page(running_job(), 0);
  EXPECT_TRUE(has(html, "href=\"api/job\""));
  EXPECT_TRUE(has(html, "href=\"logs/container_1_0001_01_000002/stdout\""));
  EXPECT_TRUE(has(html, "href=\"logs/container_1_0001_01_000003/stderr\""));
  EXPECT_FALSE(has(html, "href=\"/"));
  EXPECT_FALSE(has(html, "src=\"/"));
}

TEST(job_page, yarn_log_links_go_to_the_node_manager) {
  auto st = running_job();
  st.tasks[0].log_dir =
      "http://nm:8042/node/containerlogs/container_1_0001_01_000002/bob";
  auto html = render_job_page(st, 0);
  EXPECT_TRUE(has(html, "href=\"http://nm:8042/node/containerlogs/"
                        "container_1_0001_01_000002/bob/stdout/?start=0\""));
}

TEST(job_page, a_live_page_refreshes_until_the_job_is_final) {
  auto st = running_job();
  EXPECT_TRUE(has(render_job_page(st, 0), "http-equiv=\"refresh\""));
  st.state = job_state::succeeded;
  st.finished_ms = st.started_ms + 5000;
  auto html = render_job_page(st, 0);
  EXPECT_FALSE(has(html, "http-equiv=\"refresh\""));
  EXPECT_TRUE(has(html, "5.0 s"));
  page_options from_log;
  from_log.live = false;
  EXPECT_FALSE(
      has(render_job_page(running_job(), 0, from_log), "http-equiv=\"refresh\""));
}

TEST(job_page, diagnostics_are_shown_escaped) {
  auto st = running_job();
  st.state = job_state::failed;
  st.diagnostics = "worker:1 exited with code 3\n<script>alert(1)</script>";
  st.tasks[1].state = task_state::failed;
  st.tasks[1].exit_code = 3;
  st.tasks[1].diagnostics = "ValueError: a < b";
  auto html = render_job_page(st, 0);
  EXPECT_TRUE(has(html, "id=\"diagnostics\""));
  EXPECT_TRUE(has(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_FALSE(has(html, "<script>alert"));
  EXPECT_TRUE(has(html, "ValueError: a &lt; b"));
}

TEST(job_page, a_waiting_gang_says_why_apart_from_errors) {
  auto st = running_job();
  st.state = job_state::allocating;
  st.diagnostics = "waiting for 1 of 2 containers (1 worker of 1024 MiB, 1 vcores): the "
                   "queue's headroom is 0 MiB, 0 vcores, less than one worker container";
  auto html = render_job_page(st, 0);
  EXPECT_TRUE(has(html, "<section id=\"waiting\"><h2>Waiting</h2>"));
  EXPECT_TRUE(has(html, "the queue&#39;s headroom is 0 MiB") ||
              has(html, "the queue's headroom is 0 MiB"));
  EXPECT_FALSE(has(html, "<section id=\"diagnostics\">"));
  st.state = job_state::failed;
  EXPECT_TRUE(has(render_job_page(st, 0), "<section id=\"diagnostics\">"));
}

TEST(job_page, tensorboard_is_linked_while_it_runs) {
  auto st = running_job();
  EXPECT_FALSE(has(render_job_page(st, 0), "tensorboard/"));
  EXPECT_EQ(tensorboard_address(st), "");
  st.tasks.push_back(task("tensorboard", 0, "REQUESTED"));
  EXPECT_TRUE(has_tensorboard(st));
  EXPECT_EQ(tensorboard_address(st), "");
  st.tasks.back().state = task_state::running;
  st.tasks.back().port = 6006;
  EXPECT_EQ(tensorboard_address(st), "127.0.0.1:6006");
  EXPECT_TRUE(has(render_job_page(st, 0), "href=\"tensorboard/\""));
}

TEST(job_page, durations_read_naturally) {
  EXPECT_EQ(format_duration(850), "850 ms");
  EXPECT_EQ(format_duration(12'345), "12.3 s");
  EXPECT_EQ(format_duration(245'000), "4 min 05 s");
  EXPECT_EQ(format_duration(7'380'000), "2 h 03 min");
  EXPECT_EQ(format_time(0), "");
}

TEST(job_page, the_history_index_links_each_job) {
  std::vector<job_summary> jobs{{"application_2_0001", "a", "SUCCEEDED", 1000, 3000, "x"},
                                {"application_1_0001", "b", "FAILED", 0, 0, "y"}};
  auto html = render_index_page(jobs);
  EXPECT_TRUE(has(html, "href=\"jobs/application_2_0001/\""));
  EXPECT_TRUE(has(html, "href=\"jobs/application_1_0001/\""));
  EXPECT_TRUE(has(html, "2.0 s"));
}
