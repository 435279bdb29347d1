// The pages' pictures and the terminal's summaries from synthetic jobs: the
// recorder's timeline and metrics, the page of a 1,000-task job (grouped by
// type, drill-down by type, state, page and task), the history index's
// filters, the progress lines of a big job and --follow's reader.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "runtime/history/event_log.hpp"
#include "runtime/history/job_record.hpp"
#include "runtime/status_printer.hpp"
#include "submit/log_follower.hpp"
#include "tests/state_names.hpp"
#include "web/job_page.hpp"

using namespace tony;
using namespace tony::http;

namespace {

constexpr int64_t t0 = 1'700'000'000'000;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// TONY_PAGE_DUMP=<dir> keeps a page for a look in a browser (the big
// job's picture in doc/tracking.md is made so).
void dump(const std::string& name, const std::string& html) {
  if (auto dir = std::getenv("TONY_PAGE_DUMP"))
    std::ofstream{std::string{dir} + "/" + name} << html;
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
    ++n;
  return n;
}

task_status task(const std::string& type, int32_t index, const std::string& state) {
  task_status t;
  t.task = {type, index};
  t.attempt = 1;
  t.state = task_state_of(state);
  t.host = "127.0.0.1";
  t.port = state == "RUNNING" ? 5000 + index : 0;
  t.container_id = "container_1_0001_01_" + std::to_string(100000 + index);
  t.log_dir = "/tmp/jobs/" + t.container_id;
  return t;
}

// A job of `workers` workers and one ps, with the recorder fed two
// statuses (all allocated, then running with 3 failed) and samples.
// The recorder stamps its timeline with the wall clock: samples and the
// page's time go by it too.
int64_t wall_now() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

struct big_job {
  job_status st;
  history::job_recorder rec;
  int64_t start = wall_now();

  explicit big_job(int workers)
      : rec(nullptr, static_cast<size_t>(workers) + 1) {
    st.app_id = "application_1_0001";
    st.name = "big";
    st.state = job_state::running;
    st.attempt = 1;
    st.started_ms = start;
    for (int i = 0; i < workers; ++i)
      st.tasks.push_back(task("worker", i, "ALLOCATED"));
    st.tasks.push_back(task("ps", 0, "ALLOCATED"));
    rec.observe(st);
    for (auto& t : st.tasks)
      t.state = task_state::running;
    for (int i : {7, 300, 901})
      if (i < workers)
        st.tasks[static_cast<size_t>(i)].state = task_state::failed;
    rec.observe(st);
    for (int k = 0; k < 5; ++k)
      for (auto& t : st.tasks) {
        task_sample s;
        s.time_ms = start + 1000 * (k + 1);
        s.rss_bytes = int64_t{100 + t.task.index % 50} << 20;
        s.cpu_cores = 0.5f;
        s.processes = 2;
        rec.sample(t.task, 1, s);
      }
  }

  std::string page(page_options po = {}) {
    std::string html;
    rec.read([&](const history::job_record& r) {
      html = render_job_page(st, start + 6000, po, &r);
    });
    return html;
  }
};

} // namespace

TEST(observe_page, a_small_job_shows_its_timeline_and_resource_charts) {
  big_job job{2};
  auto html = job.page();
  EXPECT_TRUE(has(html, "id=\"timeline-section\""));
  EXPECT_TRUE(has(html, "class=\"timeline\""));
  EXPECT_TRUE(has(html, "id=\"metrics\""));
  EXPECT_TRUE(has(html, "<svg"));
  // A row per task, each linking to its own page.
  EXPECT_TRUE(has(html, "id=\"task-worker-1\""));
  EXPECT_TRUE(has(html, "href=\"?task=worker%3A1\"") ||
              has(html, "href=\"?task=worker:1\""));
  EXPECT_FALSE(has(html, "id=\"types\""));
}

TEST(observe_page, a_thousand_tasks_are_grouped_by_type_with_failed_ones_named) {
  big_job job{1000};
  auto html = job.page();
  // One row per type, no row per task, and the three failed ones named.
  EXPECT_TRUE(has(html, "id=\"types\""));
  EXPECT_TRUE(has(html, "data-type=\"worker\""));
  EXPECT_TRUE(has(html, "data-type=\"ps\""));
  EXPECT_TRUE(has(html, "href=\"?type=worker\""));
  EXPECT_FALSE(has(html, "id=\"task-worker-500\""));
  EXPECT_TRUE(has(html, "id=\"failed-tasks\""));
  EXPECT_TRUE(has(html, "id=\"task-worker-300\""));
  EXPECT_TRUE(has(html, "id=\"task-worker-901\""));
  // The timeline is the phases of all tasks, not 1,001 rows.
  EXPECT_TRUE(has(html, "timeline phases"));
  // The page stays small enough to load at once.
  EXPECT_LT(html.size(), 200u * 1024) << html.size();
  dump("big-job.html", html);
}

TEST(observe_page, a_type_is_listed_a_hundred_tasks_a_page_with_state_filters) {
  big_job job{1000};
  page_options po;
  std::multimap<std::string, std::string> q{{"type", "worker"}, {"page", "3"}};
  read_page_query(q, po);
  auto html = job.page(po);
  EXPECT_EQ(count(html, "<tr class=\"task"), tasks_per_page);
  EXPECT_TRUE(has(html, "id=\"task-worker-300\""));
  EXPECT_TRUE(has(html, "id=\"task-worker-399\""));
  EXPECT_FALSE(has(html, "id=\"task-worker-400\""));
  EXPECT_TRUE(has(html, "301&ndash;400 of 1000"));
  EXPECT_TRUE(has(html, "FAILED 3"));
  // ?state=FAILED: only the failed ones.
  po = {};
  read_page_query({{"type", "worker"}, {"state", "FAILED"}}, po);
  html = job.page(po);
  EXPECT_EQ(count(html, "<tr class=\"task"), 3u);
  EXPECT_TRUE(has(html, "id=\"task-worker-7\""));
}

TEST(observe_page, a_tasks_page_draws_its_memory_against_its_limit) {
  big_job job{1000};
  job.rec.read([](const history::job_record&) {});
  page_options po;
  read_page_query({{"task", "worker:42"}}, po);
  auto html = job.page(po);
  EXPECT_TRUE(has(html, "id=\"task-worker-42\""));
  EXPECT_TRUE(has(html, "id=\"chart-memory\""));
  EXPECT_TRUE(has(html, "id=\"chart-cpu\""));
  EXPECT_FALSE(has(html, "id=\"chart-gpu")); // it never had a GPU
  EXPECT_TRUE(has(html, "142 MiB"));         // 100 + 42 MiB, its latest
  // An unknown task says so and links back.
  po = {};
  read_page_query({{"task", "worker:5000"}}, po);
  EXPECT_TRUE(has(job.page(po), "This job has no task worker:5000"));
}

TEST(observe_page, the_recorders_memory_is_bounded_at_ten_thousand_tasks) {
  history::job_recorder rec{nullptr, 10000};
  for (int k = 0; k < 100; ++k)
    for (int i = 0; i < 10000; ++i) {
      task_sample s;
      s.time_ms = t0 + 1000 * (k + 1);
      s.rss_bytes = 1 << 30;
      rec.sample({"worker", i}, 1, s);
    }
  rec.read([](const history::job_record& r) {
    EXPECT_LE(r.metrics.bytes(), 9u << 20);
    EXPECT_EQ(r.metrics.tasks().size(), 10000u);
    // Every series still covers the whole run.
    auto s = r.metrics.series({"worker", 9999});
    ASSERT_FALSE(s.time_ms.empty());
    EXPECT_LE(s.time_ms.front(), t0 + 1000);
    EXPECT_GE(s.time_ms.back() + s.step_ms, t0 + 100'000);
  });
}

TEST(observe_page, the_history_index_filters_by_user_queue_state_and_name) {
  std::vector<job_summary> jobs = {
      {"application_1_0001", "mnist-train", "SUCCEEDED", t0, t0 + 1000, "/h", "alice",
       "ml", "yarn"},
      {"application_1_0002", "resnet", "FAILED", t0, t0 + 1000, "/h", "bob", "default",
       "yarn"},
      {"application_1_0003", "MNIST-eval", "FAILED", t0, t0 + 1000, "/h", "alice",
       "default", "local"},
  };
  index_filter f;
  f.name = "mnist";
  EXPECT_TRUE(f.matches(jobs[0]));
  EXPECT_FALSE(f.matches(jobs[1]));
  EXPECT_TRUE(f.matches(jobs[2])); // a part, any case
  f.state = "FAILED";
  EXPECT_FALSE(f.matches(jobs[0]));
  EXPECT_TRUE(f.matches(jobs[2]));
  index_filter by_user;
  by_user.user = "bob";
  EXPECT_TRUE(by_user.matches(jobs[1]));
  EXPECT_FALSE(by_user.matches(jobs[0]));
  index_filter by_queue;
  by_queue.queue = "ml";
  EXPECT_TRUE(by_queue.matches(jobs[0]));
  EXPECT_FALSE(by_queue.matches(jobs[2]));
  auto html = render_index_page({jobs[2]}, f, jobs.size());
  EXPECT_TRUE(has(html, "application_1_0003"));
  EXPECT_FALSE(has(html, "application_1_0001"));
}

TEST(observe_terminal, a_big_job_prints_progress_instead_of_a_line_per_task) {
  job_status st;
  st.app_id = "application_1_0001";
  st.state = job_state::running;
  st.attempt = 1;
  for (int i = 0; i < 1000; ++i)
    st.tasks.push_back(task("worker", i, i < 812 ? "REGISTERED" : "ALLOCATED"));
  status_printer p;
  auto lines = p.update(st, t0);
  ASSERT_EQ(lines.size(), 2u) << lines.back();
  EXPECT_EQ(lines[0], "job application_1_0001 RUNNING");
  EXPECT_EQ(lines[1], "allocated 1000/1000, registered 812/1000, running 0/1000");
  // A failed task is named; the next progress line waits 2 s.
  st.tasks[3].state = task_state::failed;
  st.tasks[900].state = task_state::registered;
  lines = p.update(st, t0 + 500);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("worker:3 FAILED", 0), 0u) << lines[0];
  lines = p.update(st, t0 + 2500);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "allocated 1000/1000, registered 812/1000, running 0/1000, failed 1");
}

TEST(observe_terminal, the_jobs_end_comes_after_its_last_tasks_line) {
  job_status st;
  st.app_id = "application_1_0001";
  st.state = job_state::running;
  st.attempt = 1;
  st.tasks = {task("worker", 0, "RUNNING")};
  status_printer p;
  p.update(st);
  st.state = job_state::succeeded;
  st.tasks[0].state = task_state::succeeded;
  auto lines = p.update(st);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("worker:0 SUCCEEDED", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1], "job application_1_0001 SUCCEEDED");
}

TEST(observe_terminal, follow_prints_whole_lines_of_the_chief_as_they_grow) {
  std::map<std::string, std::string> files; // "<container>/<file>" -> bytes
  auto reader = [&files](const task_status& t, const std::string& file, int64_t offset,
                         size_t max) -> std::optional<std::string> {
    auto i = files.find(t.container_id + "/" + file);
    if (i == files.end())
      return std::nullopt;
    if (static_cast<size_t>(offset) >= i->second.size())
      return std::string{};
    return i->second.substr(static_cast<size_t>(offset), max);
  };
  job_status st;
  st.state = job_state::running;
  st.tasks = {task("ps", 0, "RUNNING"), task("worker", 0, "RUNNING")};
  EXPECT_EQ(default_follow_task(st), "worker:0");
  st.tasks.push_back(task("chief", 0, "RUNNING"));
  EXPECT_EQ(default_follow_task(st), "chief:0");
  log_follower f{"worker:0", reader};
  EXPECT_TRUE(f.poll(st).empty()); // no file yet
  auto c = st.tasks[1].container_id;
  files[c + "/stdout"] = "epoch 1\nepoch";
  files[c + "/stderr"] = "warning\n";
  auto lines = f.poll(st);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "[worker:0] epoch 1");
  EXPECT_EQ(lines[1], "[worker:0 stderr] warning");
  files[c + "/stdout"] += " 2\ndone";
  lines = f.poll(st);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "[worker:0] epoch 2");
  lines = f.drain(st); // the last line without its newline
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "[worker:0] done");
}

TEST(observe_terminal, the_tensorboard_url_is_said_once_when_it_runs) {
  std::ostringstream out;
  status_view view{out, false, false};
  view.tensorboard_probe(&tensorboard_address);
  job_status st;
  st.app_id = "application_1_0001";
  st.state = job_state::running;
  st.attempt = 1;
  st.tracking_url = "http://127.0.0.1:5000";
  st.tasks = {task("worker", 0, "RUNNING"), task("tensorboard", 0, "ALLOCATED")};
  view.show(st);
  EXPECT_FALSE(has(out.str(), "TensorBoard:"));
  st.tasks[1].state = task_state::running;
  st.tasks[1].port = 6006;
  view.show(st);
  view.show(st);
  EXPECT_EQ(count(out.str(), "tony: TensorBoard: http://127.0.0.1:5000/tensorboard/\n"),
            1u)
      << out.str();
}

TEST(observe_terminal, follow_on_yarn_reads_the_file_out_of_the_node_managers_envelope) {
  // As a Hadoop 3 NodeManager answers /ws/v1/node/containerlogs/<c>/stdout.
  std::string body =
      "LogType:stdout\nLogLastModifiedTime:Mon Nov 23 05:48:39 +0000 2026\n"
      "LogLength:14\nLogContents:\nline 0\nline 1\n\nEnd of LogType:stdout."
      "This log file belongs to a running container (container_1_0001_01_000002)"
      " and so may not be complete.\n*****************\n\n";
  EXPECT_EQ(node_manager_log_contents(body), "line 0\nline 1\n");
  EXPECT_EQ(
      node_manager_log_contents("LogType:stderr\nLogLength:0\nLogContents:\n\nEnd of "
                                "LogType:stderr.\n"),
      "");
  EXPECT_EQ(node_manager_log_contents("plain bytes\n"), "plain bytes\n");
}
