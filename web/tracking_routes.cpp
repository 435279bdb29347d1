#include "web/tracking_routes.hpp"

#include <chrono>
#include <fstream>

#include <nlohmann/json.hpp>

#include "config/task_env.hpp"
#include "messages/error.hpp"
#include "runtime/history/job_record.hpp"
#include "runtime/status_json.hpp"
#include "web/job_page.hpp"
#include "web/reverse_proxy.hpp"
#include "web/tensorboard_shim.hpp"

namespace tony::http {

namespace {

constexpr const char* text_plain = "text/plain; charset=utf-8";

// Log files a page links to, and how much of their end it shows.
constexpr const char* log_files[] = {"stdout", "stderr", "executor.log"};
constexpr std::streamoff log_tail_bytes = 4 << 20;

int64_t wall_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

void not_found(httplib::Response& res, const std::string& what) {
  res.status = 404;
  res.set_content("tony: " + what + "\n", text_plain);
}

void serve_log(const job_status& st, const std::string& rest, httplib::Response& res) {
  // rest: "<container>/<file>"
  auto slash = rest.find('/');
  if (slash == std::string::npos)
    return not_found(res, "no such log; links look like logs/<container>/stdout");
  auto container = rest.substr(0, slash);
  auto file = rest.substr(slash + 1);
  bool known_file = false;
  for (auto f : log_files)
    known_file = known_file || file == f;
  if (!known_file)
    return not_found(res,
                     "no log '" + file + "'; there are stdout, stderr, executor.log");
  const task_status* task = nullptr;
  for (auto& t : st.tasks)
    if (!container.empty() && t.container_id == container)
      task = &t;
  if (task == nullptr)
    return not_found(res, "no task of this job ran in container '" + container + "'");
  if (task->log_dir.empty() || task->log_dir[0] != '/')
    return not_found(res, "the logs of " + to_string(task->task) +
                              " are not on this machine" +
                              (task->log_dir.empty() ? "" : ": see " + task->log_dir));
  auto path = task->log_dir + "/" + file;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return not_found(res, "cannot read " + path);
  in.seekg(0, std::ios::end);
  auto size = static_cast<std::streamoff>(in.tellg());
  if (size < 0)
    return not_found(res, "cannot read " + path);
  std::string body;
  std::streamoff from = 0;
  if (size > log_tail_bytes) {
    from = size - log_tail_bytes;
    body = "[... the first " + std::to_string(from) +
           " bytes are left out; the whole file is " + path + "]\n";
  }
  // Read what the file held when asked (it may grow meanwhile).
  auto prefix_len = body.size();
  body.resize(prefix_len + static_cast<size_t>(size - from));
  in.seekg(from);
  in.read(body.data() + prefix_len, size - from);
  body.resize(prefix_len + static_cast<size_t>(in.gcount()));
  res.set_header("Cache-Control", "no-store");
  res.set_content(body, text_plain);
}

using nlohmann::json;

json sample_json(const task_sample& x) {
  json gpus = json::array();
  for (auto& g : x.gpus)
    gpus.push_back({{"index", g.index},
                    {"util_pct", g.util_pct},
                    {"used_bytes", g.used_bytes},
                    {"total_bytes", g.total_bytes}});
  return {{"time_ms", x.time_ms},
          {"rss_bytes", x.rss_bytes},
          {"cpu_cores", x.cpu_cores},
          {"processes", x.processes},
          {"gpus", std::move(gpus)}};
}

// One task's resource use for /api/job?metrics=...: the latest sample, the
// peak, and (`series`) every point the AM keeps.
json task_metrics_json(const metrics::task_series& x, bool series) {
  json j = {{"latest", sample_json(x.latest)},
            {"peak_rss_bytes", x.peak_rss_bytes},
            {"step_ms", x.step_ms},
            {"points", x.time_ms.size()}};
  if (series)
    j["series"] = {{"time_ms", x.time_ms},
                   {"rss_bytes", x.rss_bytes},
                   {"cpu_cores", x.cpu_cores},
                   {"gpu_util_pct", x.gpu_util},
                   {"gpu_used_bytes", x.gpu_used_bytes}};
  return j;
}

json runs_json(const history::task_runs& t) {
  json runs = json::array();
  for (auto& r : t.runs)
    runs.push_back({{"attempt", r.attempt},
                    {"restart", r.restart},
                    {"container_id", r.container_id},
                    {"requested_ms", r.requested_ms},
                    {"allocated_ms", r.allocated_ms},
                    {"launched_ms", r.launched_ms},
                    {"registered_ms", r.registered_ms},
                    {"running_ms", r.running_ms},
                    {"finished_ms", r.finished_ms},
                    {"state", to_string(r.state)},
                    {"exit_code", r.exit_code}});
  return runs;
}

std::string param(const httplib::Request& req, const char* key) {
  auto i = req.params.find(key);
  return i == req.params.end() ? std::string{} : i->second;
}

// The parts of /api/job that grow with the job (?metrics, ?timeline), a
// few tasks at a time: the whole answer never exists in memory (a
// 1,000-task job's series are tens of MB, and its DOM several times that
// per request), and the record is read only while a piece is made, never
// while one is sent to a slow client.
struct api_job_stream {
  std::shared_ptr<job_source> src;
  std::string head;    // the status object, without its closing brace
  std::string metrics; // as asked: "latest" or any other value (every point)
  bool timeline = false;
  std::string only; // ?task=worker:0
  enum class phase {
    head,
    metrics_open,
    metrics_tasks,
    timeline_open,
    timeline_tasks,
    end,
    done
  };
  phase at = phase::head;
  std::vector<task_id> tasks; // of the part being written
  size_t next = 0;
};

constexpr size_t api_piece_bytes = 64 << 10;
constexpr size_t api_tasks_per_read = 16;

std::string key_of(const task_id& id) {
  return json(to_string(id)).dump() + ":";
}

std::string compact(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Starts a part (metrics or timeline): its tasks, in the record's order,
// and its opening; false when the source keeps no record (then neither
// part is written).
bool open_part(api_job_stream& p, std::string& out, bool metrics) {
  p.tasks.clear();
  p.next = 0;
  size_t capacity = 0;
  bool kept = p.src->read_record([&](const history::job_record& rec) {
    capacity = rec.metrics.capacity();
    if (metrics) {
      for (auto& id : rec.metrics.tasks())
        if (p.only.empty() || to_string(id) == p.only)
          p.tasks.push_back(id);
    } else {
      for (auto& t : rec.runs.tasks())
        if (p.only.empty() || to_string(t.task) == p.only)
          p.tasks.push_back(t.task);
    }
  });
  if (!kept)
    return false;
  out += metrics ? ",\"metrics\":{\"capacity_points\":" + std::to_string(capacity) +
                       ",\"tasks\":{"
                 : std::string{",\"timeline\":{"};
  return true;
}

// The next few tasks of a part, from one read of the record.
void write_tasks(api_job_stream& p, std::string& out, bool metrics) {
  p.src->read_record([&](const history::job_record& rec) {
    for (size_t n = 0; n < api_tasks_per_read && p.next < p.tasks.size(); ++n, ++p.next) {
      auto& id = p.tasks[p.next];
      out += (p.next == 0 ? "" : ",") + key_of(id);
      if (metrics) {
        out += compact(task_metrics_json(rec.metrics.series(id), p.metrics != "latest"));
      } else {
        auto* runs = rec.runs.find(id);
        out += runs ? compact(runs_json(*runs)) : std::string{"[]"};
      }
    }
  });
}

// Appends the next pieces of the answer to `out`, up to about
// api_piece_bytes or to its end (then p.at is done).
void next_pieces(api_job_stream& p, std::string& out) {
  using phase = api_job_stream::phase;
  while (out.size() < api_piece_bytes && p.at != phase::done) {
    bool metrics = p.at == phase::metrics_open || p.at == phase::metrics_tasks;
    switch (p.at) {
    case phase::head:
      out += p.head;
      p.at = p.metrics.empty() ? phase::timeline_open : phase::metrics_open;
      break;
    case phase::metrics_open:
    case phase::timeline_open:
      if ((!metrics && !p.timeline) || !open_part(p, out, metrics))
        p.at = phase::end; // not asked, or no record: neither part
      else
        p.at = metrics ? phase::metrics_tasks : phase::timeline_tasks;
      break;
    case phase::metrics_tasks:
    case phase::timeline_tasks:
      if (p.next < p.tasks.size()) {
        write_tasks(p, out, metrics);
      } else {
        out += metrics ? "}}" : "}";
        p.at = metrics ? phase::timeline_open : phase::end;
      }
      break;
    case phase::end:
      out += "}\n";
      p.at = phase::done;
      break;
    case phase::done:
      break;
    }
  }
}

// /api/job: the status (as status.json); ?metrics=latest|1 and ?timeline=1
// add the record's parts, ?task=worker:0 narrows them to one task.
void serve_api_job(const std::shared_ptr<job_source>& src, const job_status& st,
                   const httplib::Request& req, httplib::Response& res) {
  auto metrics = param(req, "metrics");
  auto timeline = param(req, "timeline");
  res.set_header("Cache-Control", "no-store");
  if (metrics == "0")
    metrics.clear();
  bool with_timeline = !timeline.empty() && timeline != "0";
  if (metrics.empty() && !with_timeline) {
    res.set_content(to_json(st, 2) + "\n", "application/json");
    return;
  }
  auto p = std::make_shared<api_job_stream>();
  p->src = src;
  p->head = to_json(st);
  while (!p->head.empty() && p->head.back() != '}')
    p->head.pop_back();
  if (!p->head.empty())
    p->head.pop_back();
  p->metrics = metrics;
  p->timeline = with_timeline;
  p->only = param(req, "task");
  res.set_chunked_content_provider(
      "application/json", [p](size_t, httplib::DataSink& sink) {
        std::string out;
        next_pieces(*p, out);
        if (!out.empty() && !sink.write(out.data(), out.size()))
          return false;
        if (p->at == api_job_stream::phase::done)
          sink.done();
        return true;
      });
}

// The job's TensorBoard at `upstream` (path and query). Behind YARN's web
// proxy, which refuses POST, its page gets the script that sends its forms
// as GETs, that script is served here, and such a GET goes on as the POST
// it stands for (web/tensorboard_shim.hpp). The AM sends its token with
// every request: TensorBoard answers nobody else (config/task_env.hpp).
void forward_tensorboard(proxy_target target, const std::string& upstream,
                         const route_options& opts, const httplib::Request& req,
                         const std::string& body, httplib::Response& res) {
  if (!opts.tensorboard_token.empty())
    target.headers.emplace_back(tensorboard_token_header, opts.tensorboard_token);
  bool behind_rm_proxy = !opts.public_base.empty();
  if (behind_rm_proxy && upstream == tensorboard_shim_path) {
    res.set_header("Cache-Control", "no-store");
    res.set_content(tensorboard_shim_js(), "text/javascript; charset=utf-8");
    return;
  }
  if (auto form = behind_rm_proxy && req.method == "GET" ? carried_form_of(upstream)
                                                         : std::nullopt) {
    auto post = req;
    post.method = "POST";
    post.headers.erase("Content-Type");
    post.headers.emplace("Content-Type", "application/x-www-form-urlencoded");
    return forward(target, form->target, post, form->body, res);
  }
  forward(target, upstream, req, body, res);
  auto page = upstream.substr(0, upstream.find('?'));
  if (behind_rm_proxy && res.status == 200 && (page == "/" || page == "/index.html") &&
      res.get_header_value("Content-Type").rfind("text/html", 0) == 0)
    res.body = with_tensorboard_shim(std::move(res.body));
}

} // namespace

job_source::~job_source() {
  // nop
}

bool job_source::read_record(const std::function<void(const history::job_record&)>&) {
  return false;
}

body_rule tracking_body_rule(const std::string&, const std::string& path) {
  body_rule rule;
  if (path == "/tensorboard" || path.rfind("/tensorboard/", 0) == 0)
    rule.max_bytes = proxy_body_cap;
  return rule;
}

std::string target_after(const std::string& target, const std::string& mount) {
  if (target.compare(0, mount.size(), mount) != 0)
    return "/";
  auto rest = target.substr(mount.size());
  if (rest.empty() || rest[0] == '?')
    rest.insert(0, "/");
  return rest;
}

void handle_job_request(const std::shared_ptr<job_source>& source,
                        const std::string& path, const httplib::Request& req,
                        const std::string& body, httplib::Response& res,
                        const route_options& opts) {
  auto& src = *source;
  bool tensorboard = path == "/tensorboard" || path.rfind("/tensorboard/", 0) == 0;
  if (!tensorboard && req.method != "GET" && req.method != "HEAD") {
    res.status = 405;
    res.set_header("Allow", "GET, HEAD");
    res.set_content("tony: the tracking page only answers GET\n", text_plain);
    return;
  }
  if (path == "/tensorboard") {
    // Relative, so it resolves under any proxy prefix.
    res.set_redirect("tensorboard/", 302);
    return;
  }
  auto st = src.status();
  if (!st) {
    res.status = 503;
    res.set_header("Retry-After", "2");
    res.set_content("tony: the job's status is not available right now (" +
                        describe(st.error()) + "); reload in a few seconds\n",
                    text_plain);
    return;
  }
  if (path.empty() || path == "/" || path == "/index.html") {
    page_options po;
    po.live = src.live();
    po.note = opts.note;
    po.tensorboard_on_demand = opts.tensorboard_on_demand;
    po.config_link = opts.config_link;
    read_page_query(req.params, po);
    std::string html;
    if (!src.read_record([&](const history::job_record& rec) {
          html = render_job_page(*st, wall_ms(), po, &rec);
        }))
      html = render_job_page(*st, wall_ms(), po);
    res.set_header("Cache-Control", "no-store");
    res.set_content(html, "text/html; charset=utf-8");
    return;
  }
  if (path == "/api/job" || path == "/api/job/")
    return serve_api_job(source, *st, req, res);
  if (path.rfind("/logs/", 0) == 0)
    return serve_log(*st, path.substr(6), res);
  if (tensorboard) {
    if (!has_tensorboard(*st))
      return not_found(res, "this job runs no TensorBoard; enable it with [tensorboard] "
                            "enabled = true and a log_dir in job.toml");
    if (!src.live())
      return not_found(res, "TensorBoard ran beside the job and ended with it; run "
                            "`tensorboard --logdir <log_dir>` to look at the logs now");
    auto address = tensorboard_address(*st);
    std::string host;
    int port = 0;
    if (address.empty() || !split_host_port(address, host, port)) {
      std::string state = "not started";
      auto server = st->tensorboard_task.empty() ? "tensorboard:0" : st->tensorboard_task;
      for (auto& t : st->tasks)
        if (to_string(t.task) == server)
          state = to_string(t.state);
      res.status = 503;
      res.set_header("Retry-After", "2");
      res.set_content("tony: TensorBoard is not running (its task " + server + " is " +
                          state + "); reload in a few seconds\n",
                      text_plain);
      return;
    }
    proxy_target target;
    target.host = host;
    target.port = port;
    target.public_prefix = opts.public_base + opts.mount + "/tensorboard";
    return forward_tensorboard(target,
                               target_after(req.target, opts.mount + "/tensorboard"),
                               opts, req, body, res);
  }
  not_found(res, "nothing at '" + path + "'; the job page is at the tracking URL's root");
}

} // namespace tony::http
