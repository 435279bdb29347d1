#include "runtime/status_json.hpp"

#include <cstdint>

#include <nlohmann/json.hpp>

#include "messages/error.hpp"

namespace tony {

using nlohmann::json;

std::string to_json(const job_status& st, int indent) {
  json tasks = json::array();
  for (auto& t : st.tasks) {
    tasks.push_back({{"type", t.task.type},
                     {"index", t.task.index},
                     {"attempt", t.attempt},
                     {"state", to_string(t.state)},
                     {"host", t.host},
                     {"port", t.port},
                     {"container_id", t.container_id},
                     {"exit_code", t.exit_code},
                     {"tracked", t.tracked},
                     {"diagnostics", t.diagnostics},
                     {"started_ms", t.started_ms},
                     {"finished_ms", t.finished_ms},
                     {"log_dir", t.log_dir},
                     {"restarts", t.restarts}});
  }
  json j = {{"app_id", st.app_id},
            {"name", st.name},
            {"state", to_string(st.state)},
            {"diagnostics", st.diagnostics},
            {"attempt", st.attempt},
            {"started_ms", st.started_ms},
            {"finished_ms", st.finished_ms},
            {"tracking_url", st.tracking_url},
            {"tasks", tasks}};
  if (!st.tensorboard_task.empty())
    j["tensorboard"] = {{"task", st.tensorboard_task},
                        {"address", st.tensorboard_address},
                        {"log_dir", st.tensorboard_log_dir}};
  if (!st.recovery.empty())
    j["recovery"] = st.recovery;
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

int64_t json_int64(const json& v) {
  if (v.is_number_unsigned()) {
    auto u = v.get<uint64_t>();
    return u > static_cast<uint64_t>(INT64_MAX) ? 0 : static_cast<int64_t>(u);
  }
  if (v.is_number_integer())
    return v.get<int64_t>();
  if (!v.is_number_float())
    return 0;
  // [-2^63, 2^63): the doubles that convert to int64_t.
  auto d = v.get<double>();
  constexpr double limit = 9223372036854775808.0;
  return d >= -limit && d < limit ? static_cast<int64_t>(d) : 0;
}

expected<job_status> job_status_from_json(const std::string& text) {
  auto j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return make_error(errc::protocol, "job status is not valid JSON");
  job_status st;
  auto str = [](const json& o, const char* k) {
    auto i = o.find(k);
    return i != o.end() && i->is_string() ? i->get<std::string>() : std::string{};
  };
  auto num = [](const json& o, const char* k) -> int64_t {
    auto i = o.find(k);
    return i != o.end() ? json_int64(*i) : 0;
  };
  st.app_id = str(j, "app_id");
  st.name = str(j, "name");
  auto state = job_state_named(str(j, "state"));
  if (!state)
    return make_error(errc::protocol,
                      "job status has no known state ('" + str(j, "state") + "')");
  st.state = *state;
  st.diagnostics = str(j, "diagnostics");
  st.attempt = static_cast<int32_t>(num(j, "attempt"));
  st.started_ms = num(j, "started_ms");
  st.finished_ms = num(j, "finished_ms");
  st.tracking_url = str(j, "tracking_url");
  st.recovery = str(j, "recovery");
  if (auto tb = j.find("tensorboard"); tb != j.end() && tb->is_object()) {
    st.tensorboard_task = str(*tb, "task");
    st.tensorboard_address = str(*tb, "address");
    st.tensorboard_log_dir = str(*tb, "log_dir");
  }
  if (auto i = j.find("tasks"); i != j.end() && i->is_array()) {
    for (auto& t : *i) {
      if (!t.is_object())
        continue;
      task_status ts;
      ts.task = {str(t, "type"), static_cast<int32_t>(num(t, "index"))};
      ts.attempt = static_cast<int32_t>(num(t, "attempt"));
      auto task_state = task_state_named(str(t, "state"));
      if (!task_state)
        return make_error(errc::protocol, "task " + to_string(ts.task) +
                                              " has no known state ('" + str(t, "state") +
                                              "')");
      ts.state = *task_state;
      ts.host = str(t, "host");
      ts.port = static_cast<int32_t>(num(t, "port"));
      ts.container_id = str(t, "container_id");
      ts.exit_code = static_cast<int32_t>(num(t, "exit_code"));
      auto tr = t.find("tracked");
      ts.tracked = tr == t.end() || !tr->is_boolean() || tr->get<bool>();
      ts.diagnostics = str(t, "diagnostics");
      ts.started_ms = num(t, "started_ms");
      ts.finished_ms = num(t, "finished_ms");
      ts.log_dir = str(t, "log_dir");
      ts.restarts = static_cast<int32_t>(num(t, "restarts"));
      st.tasks.push_back(std::move(ts));
    }
  }
  return st;
}

} // namespace tony
