#include "history/history_server.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "config/job_json.hpp"
#include "config/job_toml.hpp"
#include "config/task_env.hpp"
#include "history/tensorboard_launcher.hpp"
#include "messages/error.hpp"
#include "runtime/gate/job_secret.hpp"
#include "runtime/history/job_record.hpp"
#include "web/http_server.hpp"
#include "web/job_page.hpp"
#include "web/reverse_proxy.hpp"
#include "web/tracking_routes.hpp"
#include "web/view_acl.hpp"

namespace tony::history {

namespace {

using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr const char* text_plain = "text/plain; charset=utf-8";

int64_t wall_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// A parsed event log, kept while the directory says it did not change.
struct cached_log {
  stored_log log;
  std::shared_ptr<const job_record> record; // null when unreadable
  std::string error;
  clock_type::time_point loaded;
};

// The history dirs and what was parsed of them (any thread).
class log_cache {
public:
  explicit log_cache(const history_options& opts)
      : opts_(opts) {
    std::ostringstream quiet;
    dirs_ = open_dirs(opts_, quiet);
  }

  /// Every job, newest first, parsed (from the cache where it is fresh).
  std::vector<cached_log> all() {
    std::lock_guard<std::mutex> guard{mtx_};
    std::ostringstream quiet;
    std::vector<cached_log> out;
    for (auto& [log, dir] : all_logs(dirs_, quiet))
      out.push_back(get(log, *dir));
    return out;
  }

  /// One job, or nothing.
  std::optional<cached_log> find(const std::string& app_id) {
    for (auto& c : all())
      if (c.log.app_id == app_id)
        return c;
    return std::nullopt;
  }

  std::string searched() const {
    std::string s;
    for (auto& d : dirs_)
      s += (s.empty() ? "" : ", ") + d.dir->uri();
    return s;
  }

private:
  // REQUIRES: mtx_ is held.
  cached_log get(const stored_log& log, history_dir& dir) {
    auto i = cache_.find(log.location);
    if (i != cache_.end()) {
      auto& c = i->second;
      bool stamped = log.size >= 0 && log.modified_ms > 0;
      bool same =
          stamped && c.log.size == log.size && c.log.modified_ms == log.modified_ms;
      bool young = !stamped && clock_type::now() - c.loaded < milliseconds(10000);
      if (same || young)
        return c;
    }
    cached_log c;
    c.log = log;
    c.loaded = clock_type::now();
    if (auto events = load_events(dir, log))
      c.record = std::make_shared<job_record>(build_record(*events));
    else
      c.error = describe(events.error());
    cache_[log.location] = c;
    return c;
  }

  history_options opts_;
  std::mutex mtx_;
  std::vector<opened_dir> dirs_;
  std::map<std::string, cached_log> cache_;
};

std::string info_of(const job_record& r, const char* key) {
  auto i = r.info.find(key);
  return i == r.info.end() ? std::string{} : i->second;
}

http::job_summary summary_of(const cached_log& c) {
  http::job_summary row;
  row.app_id = c.log.app_id;
  row.source = c.log.location;
  if (!c.record) {
    row.state = "UNREADABLE";
    return row;
  }
  auto& st = c.record->status;
  row.name = st.name;
  row.state = to_string(st.state);
  row.started_ms = st.started_ms;
  row.finished_ms = st.finished_ms;
  row.user = info_of(*c.record, "user");
  row.queue = info_of(*c.record, "queue");
  row.backend = info_of(*c.record, "backend");
  return row;
}

// The replayed job as the page shows it: the event log's own view.
class replay_source : public http::job_source {
public:
  explicit replay_source(std::shared_ptr<const job_record> rec)
      : rec_(std::move(rec)) {
    // nop
  }
  expected<job_status> status() override { return rec_->status; }
  bool live() const override { return false; }
  bool read_record(const std::function<void(const job_record&)>& f) override {
    f(*rec_);
    return true;
  }

private:
  std::shared_ptr<const job_record> rec_;
};

std::string tensorboard_dir_of(const job_record& r) {
  auto j = nlohmann::json::parse(r.config_json, nullptr, false);
  if (!j.is_object() || !j.contains("tensorboard") || !j["tensorboard"].is_object())
    return {};
  auto& tb = j["tensorboard"];
  return tb.contains("log_dir") && tb["log_dir"].is_string()
             ? tb["log_dir"].get<std::string>()
             : std::string{};
}

// "starting" as a page that reloads itself until TensorBoard answers.
void starting_page(httplib::Response& res, const std::string& log_dir) {
  res.status = 503;
  res.set_header("Retry-After", "2");
  res.set_header("Cache-Control", "no-store");
  res.set_content(
      "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><meta "
      "http-equiv=\"refresh\" content=\"2\"><title>TensorBoard is starting - "
      "tony</title></head><body><p id=\"tensorboard-starting\">TensorBoard is "
      "starting on " +
          http::html_escape(log_dir) +
          "; this page reloads until it answers.</p></body></html>\n",
      "text/html; charset=utf-8");
}

void serve_tensorboard(tensorboard_launcher& tb, const cached_log& c,
                       const std::string& mount, const httplib::Request& req,
                       const std::string& body, httplib::Response& res) {
  auto log_dir = tensorboard_dir_of(*c.record);
  if (log_dir.empty()) {
    res.status = 404;
    res.set_content("tony-history: " + c.log.app_id +
                        " names no TensorBoard log dir ([tensorboard] log_dir)\n",
                    text_plain);
    return;
  }
  auto s = tb.get(c.log.app_id, log_dir, req.remote_addr);
  if (s.state == tensorboard_launcher::status::starting)
    return starting_page(res, log_dir);
  if (s.state == tensorboard_launcher::status::too_many ||
      s.state == tensorboard_launcher::status::busy) {
    res.status = s.state == tensorboard_launcher::status::too_many ? 429 : 503;
    res.set_header("Retry-After", std::to_string(s.retry_after_s));
    res.set_content("tony-history: no TensorBoard started for " + c.log.app_id + ": " +
                        s.why + "\n",
                    text_plain);
    return;
  }
  if (s.state == tensorboard_launcher::status::failed) {
    res.status = 502;
    res.set_content("tony-history: no TensorBoard for " + c.log.app_id + " on " +
                        log_dir + ": " + s.why + "\n",
                    text_plain);
    return;
  }
  http::proxy_target target;
  http::split_host_port(s.address, target.host, target.port);
  target.public_prefix = mount + "/tensorboard";
  if (!tb.token().empty())
    target.headers.emplace_back(tensorboard_token_header, tb.token());
  http::forward(target, http::target_after(req.target, mount + "/tensorboard"), req, body,
                res);
}

void serve_config(const cached_log& c, httplib::Response& res) {
  auto job = job_from_json(c.record->config_json);
  res.set_header("Cache-Control", "no-store");
  if (c.record->config_json.empty() || !job) {
    res.status = 404;
    res.set_content("tony-history: the event log of " + c.log.app_id +
                        " holds no resolved job (logs of tony before it wrote one)\n",
                    text_plain);
    return;
  }
  res.set_content(to_toml(*job, {"the resolved job of " + c.log.app_id +
                                 ", from its event log " + c.log.location}),
                  text_plain);
}

struct server_state {
  history_options opts;
  serve_options so;
  log_cache cache;
  tensorboard_launcher tb;
  http::group_cache groups;

  server_state(const history_options& o, const serve_options& s)
      : opts(o)
      , so(s)
      , cache(o)
      , tb(launcher_options(s)) {
    // nop
  }

  static tensorboard_launcher::options launcher_options(const serve_options& s) {
    tensorboard_launcher::options x;
    x.program = s.tensorboard;
    x.idle_ms = s.tensorboard_idle_ms;
    x.max_running = s.max_tensorboards;
    // Its TensorBoards answer only this server's proxy (a fresh token).
    x.token = gate::make_job_secret();
    return x;
  }
};

// Whether `user` may see job `c` (serve_options::admins); always with no
// authentication or no ACLs.
http::view_decision may_view(server_state& st, const std::optional<std::string>& user,
                             const cached_log& c) {
  http::view_decision d;
  if (!user || !st.so.admins) {
    d.allowed = true;
    return d;
  }
  http::view_acl_config cfg;
  cfg.app_id = c.log.app_id;
  if (c.record) {
    cfg.owner = info_of(*c.record, "user");
    cfg.view = base::access_list{info_of(*c.record, "view_acl")};
  }
  cfg.admins = *st.so.admins;
  return http::decide_view(cfg, *user, st.groups);
}

void serve_index(server_state& st, const std::optional<std::string>& user,
                 const httplib::Request& req, httplib::Response& res) {
  http::index_filter f;
  auto get = [&](const char* key) {
    auto i = req.params.find(key);
    return i == req.params.end() ? std::string{} : i->second;
  };
  f.user = get("user");
  f.queue = get("queue");
  f.state = get("state");
  f.name = get("name");
  std::vector<http::job_summary> rows;
  size_t total = 0;
  for (auto& c : st.cache.all()) {
    if (!may_view(st, user, c).allowed)
      continue; // not counted either: its name is not this user's to know
    ++total;
    auto row = summary_of(c);
    if (f.matches(row))
      rows.push_back(std::move(row));
  }
  std::string retention;
  if (st.so.retention_ms > 0)
    retention =
        "jobs are kept " + http::format_duration(st.so.retention_ms) + " after their end";
  res.set_header("Cache-Control", "no-store");
  res.set_content(http::render_index_page(rows, f, total, retention),
                  "text/html; charset=utf-8");
}

// Application ids as YARN and the local backend write them: letters,
// digits, '_', '-' and '.'; anything else is no job of ours.
bool plain_app_id(const std::string& id) {
  return !id.empty() && id != "." && id != ".." &&
         std::all_of(id.begin(), id.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
                  c == '.';
         });
}

// Bodies only for a job's TensorBoard (the tracking routes' rule).
http::body_rule history_body_rule(const std::string& method, const std::string& path) {
  if (path.rfind("/jobs/", 0) != 0)
    return {};
  auto slash = path.find('/', 6);
  if (slash == std::string::npos)
    return {};
  return http::tracking_body_rule(method, path.substr(slash));
}

void serve_job(server_state& st, const std::optional<std::string>& user,
               const httplib::Request& req, const std::string& body,
               httplib::Response& res) {
  auto rest = req.path.substr(6); // after "/jobs/"
  auto slash = rest.find('/');
  auto app_id = rest.substr(0, slash);
  if (!plain_app_id(app_id)) {
    // Never echoed into a redirect: "/jobs/%5C%5Cevil.example" would send
    // the browser to another site.
    res.status = 404;
    res.set_content("tony-history: no job has an id like that; the job list is at /\n",
                    text_plain);
    return;
  }
  if (slash == std::string::npos) { // the page's relative links need the slash
    res.set_redirect("./" + app_id + "/", 302);
    return;
  }
  auto c = st.cache.find(app_id);
  if (!c || !c->record) {
    res.status = 404;
    res.set_content(
        "tony-history: " +
            (c ? "the event log " + c->log.location + " cannot be read: " + c->error
               : "no event log of " + app_id + " in " + st.cache.searched()) +
            "\n",
        text_plain);
    return;
  }
  if (auto d = may_view(st, user, *c); !d.allowed) {
    res.status = 403;
    res.set_header("Cache-Control", "no-store");
    res.set_content("tony-history: " + d.why + "\n", text_plain);
    return;
  }
  auto path = rest.substr(slash);
  auto mount = "/jobs/" + app_id;
  if (path.rfind("/tensorboard/", 0) == 0)
    return serve_tensorboard(st.tb, *c, mount, req, body, res);
  if (path == "/config")
    return serve_config(*c, res);
  auto src = std::make_shared<replay_source>(c->record);
  http::route_options ro;
  ro.mount = mount;
  ro.note = "from the event log " + c->log.location;
  ro.tensorboard_on_demand = !tensorboard_dir_of(*c->record).empty();
  ro.config_link = !c->record->config_json.empty();
  http::handle_job_request(src, path, req, body, res, ro);
}

} // namespace

size_t apply_retention(const history_options& opts, int64_t retention_ms, int64_t now_ms,
                       std::ostream& out, std::ostream& err) {
  if (retention_ms <= 0)
    return 0;
  auto dirs = open_dirs(opts, err);
  size_t removed = 0;
  for (auto& [log, dir] : all_logs(dirs, err)) {
    auto events = load_events(*dir, log);
    if (!events)
      continue; // unreadable: kept for a person to look at
    auto st = replay(*events);
    if (!is_final(st) || st.finished_ms <= 0 || now_ms - st.finished_ms < retention_ms)
      continue;
    if (auto ok = dir->remove(log); !ok) {
      err << "tony-history: " << describe(ok.error()) << "\n";
      continue;
    }
    ++removed;
    out << "tony-history: removed " << log.app_id << " (" << to_string(st.state)
        << ", ended " << http::format_time(st.finished_ms) << ", more than "
        << http::format_duration(retention_ms) << " ago)" << std::endl;
  }
  return removed;
}

int serve_history(const history_options& opts, const serve_options& so,
                  const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  http::http_server server;
  auto bound = server.bind(so.bind, so.port);
  if (!bound) {
    err << "tony-history: " << describe(bound.error()) << "\n";
    return 3;
  }
  auto st = std::make_shared<server_state>(opts, so);
  server.set_body_policy(history_body_rule);
  server.start(
      [st](const httplib::Request& req, const std::string& body, httplib::Response& res) {
        std::optional<std::string> user;
        if (st->so.authenticate) {
          user = st->so.authenticate(req, res);
          if (!user)
            return;
        }
        if (req.path == "/" || req.path == "/index.html")
          return serve_index(*st, user, req, res);
        if (req.path.rfind("/jobs/", 0) == 0)
          return serve_job(*st, user, req, body, res);
        res.status = 404;
        res.set_content("tony-history: nothing here; the job list is at /\n", text_plain);
      });
  out << "tony-history: serving at http://"
      << (so.bind == "0.0.0.0" ? "127.0.0.1" : so.bind) << ":" << *bound
      << "/ (Ctrl-C stops)" << std::endl;
  if (!so.note.empty())
    out << "tony-history: " << so.note << std::endl;
  auto next_clean = clock_type::now();
  while (!stop.load()) {
    if (so.retention_ms > 0 && clock_type::now() >= next_clean) {
      apply_retention(opts, so.retention_ms, wall_ms(), out, err);
      next_clean = clock_type::now() + std::chrono::hours(1);
    }
    st->tb.stop_idle([&out](const std::string& line) {
      out << "tony-history: " << line << std::endl;
    });
    std::this_thread::sleep_for(milliseconds(200));
  }
  server.stop();
  return 0;
}

} // namespace tony::history
