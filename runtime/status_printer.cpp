#include "runtime/status_printer.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tony {

namespace {

std::string task_line(const task_status& t) {
  auto line = to_string(t.task) + " " + to_string(t.state);
  if (!t.host.empty() && t.port > 0)
    line += " at " + t.host + ":" + std::to_string(t.port);
  if (t.state == task_state::succeeded || t.state == task_state::failed)
    line += " (exit " + std::to_string(t.exit_code) + ")";
  if (!t.container_id.empty() &&
      (t.state == task_state::allocated || is_failure(t.state)))
    line += " [" + t.container_id + "]";
  if (t.restarts > 0)
    line += " (restart " + std::to_string(t.restarts) + ")";
  return line;
}

std::string seconds(int64_t ms) {
  if (ms < 0)
    ms = 0;
  char buf[32];
  if (ms < 600000)
    std::snprintf(buf, sizeof(buf), "%.1f s", static_cast<double>(ms) / 1000.0);
  else
    std::snprintf(buf, sizeof(buf), "%lld min", static_cast<long long>(ms / 60000));
  return buf;
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width)
    s.append(width - s.size(), ' ');
  return s;
}

int64_t wall_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

} // namespace

// -- status_printer -----------------------------------------------------------------

std::string status_printer::progress(const job_status& st) {
  int64_t n = static_cast<int64_t>(st.tasks.size());
  int64_t allocated = 0, registered = 0, running = 0, succeeded = 0, failed = 0;
  for (auto& t : st.tasks) {
    auto s = t.state;
    if (s != task_state::requested && s != task_state::restarting)
      ++allocated;
    if (s == task_state::registered || s == task_state::running ||
        (is_final(s) && t.started_ms > 0))
      ++registered;
    if (s == task_state::running)
      ++running;
    if (s == task_state::succeeded)
      ++succeeded;
    if (is_failure(s))
      ++failed;
  }
  auto of = [n](const char* what, int64_t k) {
    return std::string{what} + " " + std::to_string(k) + "/" + std::to_string(n);
  };
  auto line = of("allocated", allocated) + ", " + of("registered", registered) + ", " +
              of("running", running);
  if (succeeded > 0)
    line += ", " + of("succeeded", succeeded);
  if (failed > 0)
    line += ", failed " + std::to_string(failed);
  return line;
}

void status_printer::task_lines(const job_status& st, bool per_task,
                                std::vector<std::string>& lines) {
  for (auto& t : st.tasks) {
    auto key = to_string(t.task);
    auto known = task_states_.find(key);
    if (known != task_states_.end() && known->second == t.state)
      continue;
    task_states_[key] = t.state;
    // A big job names only the tasks that need a look.
    if (per_task || is_failure(t.state) || t.state == task_state::restarting)
      lines.push_back(task_line(t));
  }
}

// A gang that waits says why (the AM's diagnostics while ALLOCATING,
// core/waiting.hpp): once it has waited 5 s, then when the reason changes,
// at most every 10 s. A job that gets its containers at once says nothing.
void status_printer::waiting_line(const job_status& st, bool changed, int64_t now_ms,
                                  std::vector<std::string>& lines) {
  if (st.state != job_state::allocating) {
    last_waiting_.clear();
    return;
  }
  if (changed)
    allocating_since_ms_ = now_ms;
  if (now_ms == 0 || st.diagnostics.rfind("waiting for ", 0) != 0 ||
      st.diagnostics == last_waiting_ || now_ms - allocating_since_ms_ < 5000 ||
      (!last_waiting_.empty() && now_ms - last_waiting_ms_ < 10000))
    return;
  lines.push_back(st.diagnostics);
  last_waiting_ = st.diagnostics;
  last_waiting_ms_ = now_ms;
}

std::vector<std::string> status_printer::update(const job_status& st, int64_t now_ms,
                                                size_t max_task_lines) {
  std::vector<std::string> lines;
  if (st.attempt > attempt_) {
    // A new attempt restarts every task: say why, then list them afresh.
    if (attempt_ > 0)
      lines.push_back("attempt " + std::to_string(st.attempt) + " starts" +
                      (st.diagnostics.empty() ? "" : " (" + st.diagnostics + ")"));
    attempt_ = st.attempt;
    task_states_.clear();
    last_progress_.clear();
  }
  bool changed = st.state != job_state_;
  bool final = is_final(st);
  // The job's end comes after its tasks' last lines; any other state before.
  if (changed && !final)
    lines.push_back("job " + st.app_id + " " + to_string(st.state));
  bool per_task = st.tasks.size() <= max_task_lines;
  task_lines(st, per_task, lines);
  if (!per_task) {
    auto p = progress(st);
    bool due = now_ms == 0 || changed || final || now_ms - last_progress_ms_ >= 2000;
    if (p != last_progress_ && due) {
      lines.push_back(p);
      last_progress_ = p;
      last_progress_ms_ = now_ms;
    }
  }
  waiting_line(st, changed, now_ms, lines);
  if (changed && final)
    lines.push_back("job " + st.app_id + " " + to_string(st.state));
  job_state_ = st.state;
  return lines;
}

std::vector<std::string> status_printer::summary(const job_status& st,
                                                 const std::string& logs) {
  std::vector<std::string> lines;
  auto elapsed = st.finished_ms > st.started_ms && st.started_ms > 0
                     ? (st.finished_ms - st.started_ms) / 100
                     : -1;
  auto line = "job " + st.app_id + " (" + st.name + ") " + to_string(st.state);
  if (elapsed >= 0)
    line += " after " + std::to_string(elapsed / 10) + "." +
            std::to_string(elapsed % 10) + " s";
  lines.push_back(line);
  if (!st.diagnostics.empty())
    lines.push_back("diagnostics: " + st.diagnostics);
  for (auto& t : st.tasks)
    if (is_failure(t.state) && !t.log_dir.empty())
      lines.push_back(to_string(t.task) + " " + to_string(t.state) +
                      ": its logs are in " + t.log_dir);
  if (!logs.empty())
    lines.push_back("logs: " + logs);
  return lines;
}

std::vector<std::string> status_printer::table(const job_status& st, int64_t now_ms,
                                               size_t max_rows) {
  std::vector<std::string> lines;
  auto end = st.finished_ms > 0 ? st.finished_ms : now_ms;
  auto head = st.app_id + (st.name.empty() ? "" : " (" + st.name + ")") + " " +
              to_string(st.state);
  if (st.attempt > 1)
    head += " attempt " + std::to_string(st.attempt);
  if (st.started_ms > 0)
    head += "  " + seconds(end - st.started_ms);
  if (st.tasks.size() > max_rows)
    head += "  " + progress(st);
  lines.push_back(head);
  if (st.tasks.empty())
    return lines;
  if (st.tasks.size() <= max_rows) {
    size_t w_task = 4, w_state = 5, w_addr = 9;
    for (auto& t : st.tasks) {
      w_task = std::max(w_task, to_string(t.task).size());
      w_state = std::max(w_state, std::strlen(to_string(t.state)));
      w_addr = std::max(w_addr, t.host.size() + 1 + std::to_string(t.port).size());
    }
    lines.push_back("  " + pad("TASK", w_task + 2) + pad("STATE", w_state + 2) +
                    pad("HOST:PORT", w_addr + 2) + pad("EXIT", 6) + "TIME");
    for (auto& t : st.tasks) {
      std::string addr = t.port > 0 ? t.host + ":" + std::to_string(t.port) : t.host;
      std::string code =
          is_final(t.state) && !t.container_id.empty() ? std::to_string(t.exit_code) : "";
      std::string time;
      if (t.started_ms > 0)
        time = seconds((t.finished_ms > 0 ? t.finished_ms : end) - t.started_ms);
      auto row = "  " + pad(to_string(t.task), w_task + 2) +
                 pad(to_string(t.state), w_state + 2) + pad(addr, w_addr + 2) +
                 pad(code, 6) + time;
      while (!row.empty() && row.back() == ' ')
        row.pop_back();
      lines.push_back(row);
    }
    return lines;
  }
  // Many tasks: one row per type with a count per state.
  std::vector<std::string> order;
  std::map<std::string, std::map<std::string, int>> counts;
  for (auto& t : st.tasks) {
    if (!counts.count(t.task.type))
      order.push_back(t.task.type);
    ++counts[t.task.type][to_string(t.state)];
  }
  size_t w_type = 4;
  for (auto& type : order)
    w_type = std::max(w_type, type.size());
  for (auto& type : order) {
    int total = 0;
    std::string states;
    for (auto& [state, n] : counts[type]) {
      total += n;
      states += (states.empty() ? "" : ", ") + state + " " + std::to_string(n);
    }
    lines.push_back("  " + pad(type, w_type + 2) + pad("x" + std::to_string(total), 7) +
                    states);
  }
  return lines;
}

// -- status_view -------------------------------------------------------------------

status_view::status_view(std::ostream& out, bool live, bool quiet)
    : out_(out)
    , live_(live)
    , quiet_(quiet) {
  // nop
}

bool status_view::stdout_is_terminal() {
  if (!::isatty(STDOUT_FILENO))
    return false;
  auto term = std::getenv("TERM");
  return term != nullptr && std::strcmp(term, "dumb") != 0;
}

void status_view::erase_table() {
  if (drawn_ == 0)
    return;
  // Up to the table's first line, then clear to the end of the screen.
  out_ << "\x1b[" << drawn_ << "F\x1b[J";
  drawn_ = 0;
}

void status_view::draw_table(const job_status& st) {
  erase_table();
  auto lines = status_printer::table(st, wall_ms());
  for (auto& line : lines)
    out_ << "tony: " << line << "\n";
  drawn_ = lines.size();
  out_.flush();
}

void status_view::note(const std::string& line) {
  if (quiet_)
    return;
  if (!live_) {
    out_ << "tony: " << line << std::endl;
    return;
  }
  // Above the table: erase it, print, and let the next show() redraw it.
  erase_table();
  out_ << "tony: " << line << std::endl;
}

void status_view::tracking_url(const std::string& url) {
  if (url_shown_ || url.empty())
    return;
  url_shown_ = true;
  url_ = url;
  note("tracking URL: " + url);
}

void status_view::tensorboard_probe(std::function<std::string(const job_status&)> probe) {
  tensorboard_probe_ = std::move(probe);
}

void status_view::output(const std::string& line) {
  if (live_)
    erase_table(); // the next show() draws it again below
  out_ << line << "\n";
  out_.flush();
}

void status_view::show(const job_status& st) {
  tracking_url(st.tracking_url);
  if (tensorboard_probe_ && !tensorboard_shown_ && !is_final(st) &&
      !tensorboard_probe_(st).empty()) {
    tensorboard_shown_ = true;
    auto base = url_.empty() ? st.tracking_url : url_;
    if (!base.empty() && base.back() != '/')
      base += '/';
    note("TensorBoard: " + base + "tensorboard/");
  }
  if (quiet_)
    return;
  if (live_) {
    printer_.update(st); // keeps the line printer's memory in step
    draw_table(st);
    return;
  }
  for (auto& line : printer_.update(st, wall_ms()))
    out_ << "tony: " << line << "\n";
  out_.flush();
}

void status_view::leave(const job_status& st) {
  if (!quiet_) {
    if (live_)
      draw_table(st);
    else
      for (auto& line : printer_.update(st))
        out_ << "tony: " << line << "\n";
  }
  drawn_ = 0;
  out_.flush();
}

void status_view::finish(const job_status& st, const std::string& logs) {
  leave(st);
  for (auto& line : status_printer::summary(st, logs))
    out_ << "tony: " << line << "\n";
  out_.flush();
}

} // namespace tony
