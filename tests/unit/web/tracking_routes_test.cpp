// The tracking routes served over loopback HTTP from a scripted job_source,
// with a stand-in upstream for TensorBoard.

#include "web/tracking_routes.hpp"

#include <atomic>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "messages/error.hpp"
#include "runtime/history/job_record.hpp"
#include "runtime/status_json.hpp"
#include "tests/state_names.hpp"
#include "web/http_server.hpp"
#include "web/tensorboard_shim.hpp"

using namespace tony;
using namespace tony::http;
namespace fs = std::filesystem;

namespace {

class fixed_source : public job_source {
public:
  tony::expected<job_status> status() override {
    if (fail)
      return make_error(errc::infrastructure, "monitor busy");
    return st;
  }
  bool live() const override { return is_live; }

  bool read_record(const std::function<void(const history::job_record&)>& f) override {
    if (!record)
      return false;
    ++reads;
    f(*record);
    return true;
  }

  job_status st;
  bool fail = false;
  bool is_live = true;
  std::shared_ptr<history::job_record> record;
  std::atomic<int> reads{0};
};

class routes_test : public ::testing::Test {
protected:
  void SetUp() override {
    src.st.app_id = "application_1_0001";
    src.st.name = "web";
    src.st.state = job_state::running;
    src.st.attempt = 1;
    task_status w;
    w.task = {"worker", 0};
    w.attempt = 1;
    w.state = task_state::running;
    w.host = "127.0.0.1";
    w.port = 4000;
    w.container_id = "container_1_0001_01_000002";
    logs = fs::temp_directory_path() / ("tony-routes-" + std::to_string(::getpid()));
    fs::create_directories(logs);
    std::ofstream(logs / "stdout") << "epoch 1 loss 0.5\n";
    w.log_dir = logs.string();
    src.st.tasks.push_back(w);
  }

  std::string token; // the AM's TensorBoard token; empty: none

  void TearDown() override {
    server.stop();
    upstream.stop();
    fs::remove_all(logs);
  }

  // Serves the routes at `mount` on a fresh port; returns a client for it.
  httplib::Client serve(const std::string& mount = "", const std::string& base = "") {
    auto port = server.bind("127.0.0.1", 0);
    EXPECT_TRUE(port);
    route_options opts;
    opts.mount = mount;
    opts.public_base = base;
    opts.tensorboard_token = token;
    server.set_body_policy([mount](const std::string& method, const std::string& path) {
      return path.compare(0, mount.size(), mount) == 0
                 ? tracking_body_rule(method, path.substr(mount.size()))
                 : body_rule{};
    });
    server.start([this, opts, mount](const httplib::Request& req, const std::string& body,
                                     httplib::Response& res) {
      if (req.path.compare(0, mount.size(), mount) != 0) {
        res.status = 404;
        return;
      }
      // The fixture outlives the server (stopped in TearDown).
      std::shared_ptr<job_source> kept{&src, [](job_source*) {}};
      handle_job_request(kept, req.path.substr(mount.size()), req, body, res, opts);
    });
    return httplib::Client("127.0.0.1", *port);
  }

  // A stand-in TensorBoard that echoes what it got.
  int start_upstream() {
    auto port = upstream.bind("127.0.0.1", 0);
    EXPECT_TRUE(port);
    upstream.set_body_policy([](const std::string&, const std::string&) {
      body_rule rule;
      rule.max_bytes = proxy_body_cap;
      return rule;
    });
    upstream.start(
        [](const httplib::Request& req, const std::string& body, httplib::Response& res) {
          if (req.path == "/moved") {
            res.set_redirect("/elsewhere", 302);
            return;
          }
          res.set_header("X-Upstream", "tb");
          if (req.path == "/index.html" || req.path == "/page.html") {
            res.set_content("<html><head><title>TB</title></head></html>", "text/html");
            return;
          }
          if (req.path == "/token") { // every value of the AM's token header
            std::string sent;
            auto n = req.get_header_value_count("X-Tony-TensorBoard-Token");
            for (size_t i = 0; i < n; ++i)
              sent += "[" + req.get_header_value("X-Tony-TensorBoard-Token", i) + "]";
            res.set_content("token=" + sent, "text/plain");
            return;
          }
          if (req.path == "/echo") {
            res.set_content(body, req.get_header_value("Content-Type"));
            return;
          }
          res.set_content(req.method + " " + req.target + " [" + body +
                              "] ae=" + req.get_header_value("Accept-Encoding"),
                          "text/plain");
        });
    return *port;
  }

  void add_tensorboard(const char* state, int port) {
    task_status t;
    t.task = {"tensorboard", 0};
    t.attempt = 1;
    t.state = task_state_of(state);
    t.host = "127.0.0.1";
    t.port = port;
    t.tracked = false;
    src.st.tasks.push_back(t);
  }

  fixed_source src;
  http_server server;
  http_server upstream;
  fs::path logs;
};

} // namespace

TEST_F(routes_test, the_root_is_the_job_page) {
  auto cli = serve();
  auto res = cli.Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find("data-task=\"worker:0\" data-state=\"RUNNING\""),
            std::string::npos);
  EXPECT_EQ(res->get_header_value("Cache-Control"), "no-store");
}

TEST_F(routes_test, api_job_is_the_status_as_json) {
  auto cli = serve();
  auto res = cli.Get("/api/job");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  auto st = job_status_from_json(res->body);
  ASSERT_TRUE(st);
  EXPECT_EQ(to_json(*st), to_json(src.st));
}

// A 1,000-task job's series are tens of MB as JSON: /api/job streams them a
// few tasks at a time (chunked), reading the record once per piece, never
// holding it while the answer is sent.
TEST_F(routes_test, metrics_and_timeline_are_streamed_a_few_tasks_at_a_time) {
  src.record = std::make_shared<history::job_record>();
  auto& rec = *src.record;
  rec.metrics.expect_tasks(1000);
  for (int32_t i = 0; i < 1000; ++i) {
    task_id id{"worker", i};
    for (int64_t t = 1; t <= 40; ++t) {
      task_sample x;
      x.time_ms = t * 1000;
      x.rss_bytes = (100 + i) << 20;
      x.cpu_cores = 0.5f;
      x.processes = 2;
      rec.metrics.add(id, x);
    }
    history::job_event e;
    e.time_ms = 5;
    e.kind = "task_requested";
    e.task.task = id;
    e.task.attempt = 1;
    e.task.state = task_state::requested;
    rec.runs.apply(e);
  }
  auto cli = serve();
  auto res = cli.Get("/api/job?metrics=1&timeline=1");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Transfer-Encoding"), "chunked");
  auto doc = nlohmann::json::parse(res->body, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << res->body.substr(0, 300);
  EXPECT_EQ(doc["app_id"], "application_1_0001");
  EXPECT_EQ(doc["metrics"]["capacity_points"], rec.metrics.capacity());
  ASSERT_EQ(doc["metrics"]["tasks"].size(), 1000u);
  auto& w7 = doc["metrics"]["tasks"]["worker:7"];
  EXPECT_EQ(w7["points"], 40);
  EXPECT_EQ(w7["series"]["rss_bytes"].size(), 40u);
  EXPECT_EQ(w7["latest"]["rss_bytes"], int64_t{107} << 20);
  ASSERT_EQ(doc["timeline"].size(), 1000u);
  EXPECT_EQ(doc["timeline"]["worker:999"][0]["requested_ms"], 5);
  // Read once per piece of at most 16 tasks, for each part.
  EXPECT_GE(src.reads.load(), 2 * 1000 / 16);

  auto one = cli.Get("/api/job?metrics=latest&task=worker:7");
  ASSERT_TRUE(one);
  auto only = nlohmann::json::parse(one->body, nullptr, false);
  ASSERT_TRUE(only.is_object()) << one->body.substr(0, 300);
  ASSERT_EQ(only["metrics"]["tasks"].size(), 1u);
  EXPECT_FALSE(only["metrics"]["tasks"]["worker:7"].contains("series"));
  EXPECT_FALSE(only.contains("timeline"));

  auto runs = cli.Get("/api/job?timeline=1&task=worker:3");
  ASSERT_TRUE(runs);
  auto timeline = nlohmann::json::parse(runs->body, nullptr, false);
  ASSERT_TRUE(timeline.is_object()) << runs->body.substr(0, 300);
  EXPECT_FALSE(timeline.contains("metrics"));
  ASSERT_EQ(timeline["timeline"].size(), 1u);
  EXPECT_EQ(timeline["timeline"]["worker:3"][0]["requested_ms"], 5);
}

TEST_F(routes_test, an_unavailable_status_is_a_503_that_says_why) {
  src.fail = true;
  auto cli = serve();
  auto res = cli.Get("/api/job");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_NE(res->body.find("monitor busy"), std::string::npos);
}

TEST_F(routes_test, logs_of_a_local_task_are_served_and_nothing_else) {
  auto cli = serve();
  auto res = cli.Get("/logs/container_1_0001_01_000002/stdout");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "epoch 1 loss 0.5\n");
  auto other = cli.Get("/logs/container_1_0001_01_000002/..%2F..%2Fetc%2Fpasswd");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);
  auto unknown = cli.Get("/logs/container_9/stdout");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
}

TEST_F(routes_test, a_long_log_is_served_as_its_last_4_mib) {
  {
    std::ofstream out(logs / "stderr", std::ios::binary);
    out << std::string(1000, 'a') << std::string((4 << 20) - 4, 'b') << "end\n";
  }
  auto cli = serve();
  auto res = cli.Get("/logs/container_1_0001_01_000002/stderr");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  auto head = std::string{"[... the first 1000 bytes are left out; the whole file is "};
  EXPECT_EQ(res->body.rfind(head, 0), 0u) << res->body.substr(0, 200);
  auto nl = res->body.find('\n');
  ASSERT_NE(nl, std::string::npos);
  EXPECT_EQ(res->body.size() - nl - 1, size_t{4 << 20});
  EXPECT_EQ(res->body.substr(nl + 1, 1), "b");
  EXPECT_EQ(res->body.substr(res->body.size() - 4), "end\n");
}

TEST_F(routes_test, a_job_without_tensorboard_says_how_to_enable_it) {
  auto cli = serve();
  auto res = cli.Get("/tensorboard/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_NE(res->body.find("[tensorboard]"), std::string::npos);
}

TEST_F(routes_test, tensorboard_not_yet_running_is_a_503) {
  add_tensorboard("LAUNCHED", 0);
  auto cli = serve();
  auto res = cli.Get("/tensorboard/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_NE(res->body.find("LAUNCHED"), std::string::npos);
}

TEST_F(routes_test, the_chiefs_tensorboard_is_proxied_from_the_status_address) {
  // [tensorboard] on = "chief": no tensorboard task; the status names the
  // chief and the address of the TensorBoard it started on TB_PORT.
  src.st.tensorboard_task = "worker:0";
  auto cli = serve();
  auto res = cli.Get("/tensorboard/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503) << "not up yet";
  EXPECT_NE(res->body.find("its task worker:0 is RUNNING"), std::string::npos)
      << res->body;
  src.st.tensorboard_address = "127.0.0.1:" + std::to_string(start_upstream());
  res = cli.Get("/tensorboard/data/runs");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "GET /data/runs [] ae=identity");
  auto page = cli.Get("/");
  ASSERT_TRUE(page);
  EXPECT_NE(page->body.find("tensorboard-link"), std::string::npos);
  auto api = cli.Get("/api/job");
  ASSERT_TRUE(api);
  auto back = job_status_from_json(api->body);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->tensorboard_task, "worker:0");
  EXPECT_EQ(back->tensorboard_address, src.st.tensorboard_address);
}

TEST_F(routes_test, tensorboard_without_its_slash_is_redirected_relatively) {
  auto cli = serve();
  auto res = cli.Get("/tensorboard");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 302);
  EXPECT_EQ(res->get_header_value("Location"), "tensorboard/");
}

TEST_F(routes_test, tensorboard_requests_are_forwarded_with_query_and_body) {
  add_tensorboard("RUNNING", start_upstream());
  auto cli = serve();
  cli.set_url_encode(false);
  auto get = cli.Get("/tensorboard/data/runs?x=a+b%20c");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 200);
  EXPECT_EQ(get->body, "GET /data/runs?x=a+b%20c [] ae=identity");
  EXPECT_EQ(get->get_header_value("X-Upstream"), "tb");
  auto post = cli.Post("/tensorboard/data/plugin/timeseries", "tags=loss",
                       "application/x-www-form-urlencoded");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->body, "POST /data/plugin/timeseries [tags=loss] ae=identity");
  auto root = cli.Get("/tensorboard/");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->body, "GET / [] ae=identity");
}

// The sidecar answers only the AM's token (config/task_env.hpp): the proxy
// sends it with every request, in place of any the visitor sent.
TEST_F(routes_test, the_ams_token_goes_to_tensorboard_in_place_of_the_visitors) {
  token = "0123abcd";
  add_tensorboard("RUNNING", start_upstream());
  auto cli = serve();
  auto plain = cli.Get("/tensorboard/token");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->body, "token=[0123abcd]");
  auto forged = cli.Get("/tensorboard/token", {{"x-tony-tensorboard-token", "forged"},
                                               {"X-Tony-TensorBoard-Token", "again"}});
  ASSERT_TRUE(forged);
  EXPECT_EQ(forged->body, "token=[0123abcd]");
}

TEST_F(routes_test, without_a_token_none_is_sent) {
  add_tensorboard("RUNNING", start_upstream());
  auto cli = serve();
  auto res = cli.Get("/tensorboard/token");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body, "token=");
}

// Behind YARN's web proxy (which refuses POST) TensorBoard's page loads the
// AM's script that sends its forms as GET queries; directly it does not.
TEST_F(routes_test, behind_the_rm_proxy_tensorboards_page_gets_the_post_as_get_script) {
  add_tensorboard("RUNNING", start_upstream());
  auto cli = serve("", "/proxy/application_1_0001");
  auto page = cli.Get("/tensorboard/page.html");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->body, "<html><head><title>TB</title></head></html>")
      << "its root page only";
  page = cli.Get("/tensorboard/index.html?x=1");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->body,
            "<html><head><script src=\"./tony-post-as-get.js\"></script><title>TB</title>"
            "</head></html>");
  auto js = cli.Get("/tensorboard/tony-post-as-get.js");
  ASSERT_TRUE(js);
  EXPECT_EQ(js->status, 200);
  EXPECT_EQ(js->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_NE(js->body.find("FormData"), std::string::npos);
  EXPECT_EQ(js->get_header_value("X-Upstream"), "") << "served by the AM itself";
}

// The script's GET for a form goes on to TensorBoard as the form's POST.
TEST_F(routes_test, behind_the_rm_proxy_a_carried_form_reaches_tensorboard_as_a_post) {
  add_tensorboard("RUNNING", start_upstream());
  auto cli = serve("", "/proxy/application_1_0001");
  cli.set_url_encode(false);
  // "requests=%5B1%5D" in hex.
  auto res = cli.Get("/tensorboard/data/plugin/timeseries/timeSeries?a=1&tony-form="
                     "72657175657374733d25354231253544");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body,
            "POST /data/plugin/timeseries/timeSeries?a=1 [requests=%5B1%5D] ae=identity");
  res = cli.Get("/tensorboard/data/x?tony-form=7z");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body, "GET /data/x?tony-form=7z [] ae=identity")
      << "not hex: as it came";
}

TEST(tensorboard_shim, a_carried_form_is_read_from_anywhere_in_the_query) {
  auto form = carried_form_of("/t?tony-form=613d31&b=2");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->target, "/t?b=2");
  EXPECT_EQ(form->body, "a=1");
  form = carried_form_of("/t?tony-form=");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->target, "/t");
  EXPECT_EQ(form->body, "");
  EXPECT_FALSE(carried_form_of("/t?x=1"));
  EXPECT_FALSE(carried_form_of("/t"));
  EXPECT_FALSE(carried_form_of("/t?tony-form=abc"));
}

TEST_F(routes_test, directly_tensorboards_page_is_left_as_it_is) {
  add_tensorboard("RUNNING", start_upstream());
  auto direct = serve();
  auto page = direct.Get("/tensorboard/index.html");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->body, "<html><head><title>TB</title></head></html>");
  auto js = direct.Get("/tensorboard/tony-post-as-get.js");
  ASSERT_TRUE(js);
  EXPECT_EQ(js->get_header_value("X-Upstream"), "tb")
      << "directly, TensorBoard's own path";
}

// TensorBoard's front end posts FormData (its Time Series dashboard): the
// body and its boundary reach TensorBoard as sent (it once got a 500,
// "bad_function_call", from the server's multipart reader).
TEST_F(routes_test, multipart_posts_pass_through_the_proxy_unchanged) {
  add_tensorboard("RUNNING", start_upstream());
  auto cli = serve("/jobs/application_1_0001");
  httplib::MultipartFormDataItems items = {
      {"requests", R"([{"plugin":"scalars","tag":"loss"}])", "", ""},
      {"file", std::string("\0\x01binary\r\n--", 11), "f.bin",
       "application/octet-stream"}};
  auto res = cli.Post("/jobs/application_1_0001/tensorboard/echo", items);
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200) << res->body;
  auto type = res->get_header_value("Content-Type");
  EXPECT_EQ(type.rfind("multipart/form-data; boundary=", 0), 0u) << type;
  auto boundary = type.substr(type.find('=') + 1);
  EXPECT_NE(res->body.find("--" + boundary +
                           "\r\nContent-Disposition: form-data; "
                           "name=\"requests\"\r\n\r\n"
                           R"([{"plugin":"scalars","tag":"loss"}])"),
            std::string::npos)
      << res->body;
  EXPECT_NE(res->body.find(std::string("\0\x01binary\r\n--", 11)), std::string::npos);
  EXPECT_NE(res->body.find("--" + boundary + "--"), std::string::npos) << res->body;
}

TEST_F(routes_test, upstream_redirects_stay_under_the_proxy_prefix) {
  add_tensorboard("RUNNING", start_upstream());
  auto cli = serve("/jobs/application_1_0001", "/proxy/x");
  auto res = cli.Get("/jobs/application_1_0001/tensorboard/moved");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 302);
  EXPECT_EQ(res->get_header_value("Location"),
            "/proxy/x/jobs/application_1_0001/tensorboard/elsewhere");
}

TEST_F(routes_test, a_dead_tensorboard_is_a_502_that_says_so) {
  add_tensorboard("RUNNING", 1); // nothing listens on port 1
  auto cli = serve();
  auto res = cli.Get("/tensorboard/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 502);
  EXPECT_NE(res->body.find("does not answer"), std::string::npos);
}

TEST_F(routes_test, the_page_from_an_event_log_does_not_proxy) {
  add_tensorboard("KILLED", 6006);
  src.is_live = false;
  auto cli = serve();
  auto res = cli.Get("/tensorboard/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  auto page = cli.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->body.find("http-equiv=\"refresh\""), std::string::npos);
}

TEST(target_after, keeps_the_raw_rest_of_the_target) {
  EXPECT_EQ(target_after("/jobs/a/tensorboard/x?y=1", "/jobs/a/tensorboard"), "/x?y=1");
  EXPECT_EQ(target_after("/tensorboard?y=1", "/tensorboard"), "/?y=1");
  EXPECT_EQ(target_after("/tensorboard/", "/tensorboard"), "/");
}
