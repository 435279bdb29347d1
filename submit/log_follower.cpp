#include "submit/log_follower.hpp"

#include <fstream>

namespace tony {

namespace {

// What one poll reads of a file at most; the rest comes with the next.
constexpr size_t poll_bytes = 256 << 10;

} // namespace

std::string default_follow_task(const job_status& st) {
  for (auto name : {"chief:0", "master:0", "worker:0"})
    for (auto& t : st.tasks)
      if (to_string(t.task) == name)
        return name;
  return st.tasks.empty() ? std::string{} : to_string(st.tasks.front().task);
}

log_follower::log_follower(std::string task, reader read)
    : wanted_(std::move(task))
    , read_(std::move(read)) {
  streams_ = {{"stdout", 0, {}}, {"stderr", 0, {}}};
}

void log_follower::read(const task_status& t, stream& s, std::vector<std::string>& out) {
  auto got = read_(t, s.file, s.offset, poll_bytes);
  if (!got || got->empty())
    return;
  s.offset += static_cast<int64_t>(got->size());
  s.partial += *got;
  auto prefix = "[" + chosen_ + (s.file == "stdout" ? "] " : " " + s.file + "] ");
  size_t start = 0;
  for (auto nl = s.partial.find('\n'); nl != std::string::npos;
       nl = s.partial.find('\n', start)) {
    out.push_back(prefix + s.partial.substr(start, nl - start));
    start = nl + 1;
  }
  s.partial.erase(0, start);
  // A line longer than a poll's read is shown in pieces.
  if (s.partial.size() >= poll_bytes) {
    out.push_back(prefix + s.partial);
    s.partial.clear();
  }
}

std::vector<std::string> log_follower::poll(const job_status& st) {
  std::vector<std::string> out;
  if (chosen_.empty())
    chosen_ = wanted_.empty() ? default_follow_task(st) : wanted_;
  if (chosen_.empty())
    return out;
  const task_status* task = nullptr;
  for (auto& t : st.tasks)
    if (to_string(t.task) == chosen_)
      task = &t;
  if (!task) {
    if (!missing_said_ && !st.tasks.empty()) {
      missing_said_ = true;
      out.push_back("[" + chosen_ + "] (this job has no task " + chosen_ +
                    "; --follow takes a task such as " +
                    to_string(st.tasks.front().task) + ")");
    }
    return out;
  }
  if (task->container_id.empty() || task->log_dir.empty())
    return out;
  if (task->container_id != container_) {
    if (!container_.empty())
      out.push_back("[" + chosen_ + "] --- now in container " + task->container_id +
                    " (attempt " + std::to_string(task->attempt) +
                    (task->restarts > 0 ? ", restart " + std::to_string(task->restarts)
                                        : std::string{}) +
                    ") ---");
    container_ = task->container_id;
    for (auto& s : streams_) {
      s.offset = 0;
      s.partial.clear();
    }
  }
  for (auto& s : streams_)
    read(*task, s, out);
  return out;
}

std::vector<std::string> log_follower::drain(const job_status& st) {
  auto out = poll(st);
  for (auto& s : streams_)
    if (!s.partial.empty()) {
      out.push_back("[" + chosen_ + (s.file == "stdout" ? "] " : " " + s.file + "] ") +
                    s.partial);
      s.partial.clear();
    }
  return out;
}

log_follower::reader local_log_reader() {
  return [](const task_status& t, const std::string& file, int64_t offset,
            size_t max_bytes) -> std::optional<std::string> {
    if (t.log_dir.empty() || t.log_dir[0] != '/')
      return std::nullopt;
    std::ifstream in(t.log_dir + "/" + file, std::ios::binary);
    if (!in)
      return std::nullopt;
    in.seekg(0, std::ios::end);
    auto size = static_cast<int64_t>(in.tellg());
    if (size <= offset)
      return std::string{};
    auto n = static_cast<size_t>(
        std::min<int64_t>(size - offset, static_cast<int64_t>(max_bytes)));
    std::string buf(n, '\0');
    in.seekg(offset);
    in.read(buf.data(), static_cast<std::streamsize>(n));
    buf.resize(static_cast<size_t>(in.gcount()));
    return buf;
  };
}

// Hadoop's LogToolUtils writes LogLength bytes after "LogContents:\n";
// where LogLength does not parse, the contents end at "End of LogType:".
std::string node_manager_log_contents(const std::string& body) {
  static const std::string contents = "LogContents:\n";
  if (body.find("LogType:") == std::string::npos)
    return body;
  auto at = body.find(contents);
  if (at == std::string::npos)
    return body;
  auto start = at + contents.size();
  auto len_at = body.rfind("LogLength:", at);
  if (len_at != std::string::npos) {
    auto digits = body.substr(len_at + 10, body.find('\n', len_at) - len_at - 10);
    if (!digits.empty() && digits.size() < 19 &&
        digits.find_first_not_of("0123456789") == std::string::npos) {
      auto n = static_cast<size_t>(std::stoll(digits));
      if (start + n <= body.size())
        return body.substr(start, n);
    }
  }
  auto end = body.find("\nEnd of LogType:", start);
  return body.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

} // namespace tony
