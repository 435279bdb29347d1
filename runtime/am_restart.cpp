#include "runtime/am_restart.hpp"

#include <filesystem>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "hadoop/endpoint.hpp"
#include "hadoop/hdfs/delegation_token.hpp"
#include "hadoop/yarn/ids.hpp"
#include "runtime/status_json.hpp"

namespace tony {

std::string to_json(const am_location& x) {
  return nlohmann::json{{"host", x.host}, {"port", x.port}, {"am_attempt", x.am_attempt}}
      .dump();
}

std::optional<am_location> am_location_from_json(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object())
    return std::nullopt;
  auto host = j.find("host");
  auto port = j.find("port");
  auto attempt = j.find("am_attempt");
  if (host == j.end() || !host->is_string() || port == j.end() ||
      !port->is_number_integer() || attempt == j.end() || !attempt->is_number_integer())
    return std::nullopt;
  am_location result{host->get<std::string>(), port->get<int32_t>(),
                     attempt->get<int32_t>()};
  if (result.host.empty() || result.port <= 0 || result.port > 65535)
    return std::nullopt;
  return result;
}

int32_t attempt_of_container(const std::string& container_id) {
  auto id = yarn::parse_container_id(container_id);
  return id ? id->attempt.attempt : 0;
}

webhdfs::namenode_http namenode_for(const std::string& uri, const std::string& webhdfs,
                                    const std::string& user,
                                    const hadoop::credentials& tokens,
                                    const std::string& ca_file) {
  webhdfs::namenode_http nn;
  nn.base = webhdfs;
  nn.auth.user = user;
  if (!ca_file.empty())
    nn.auth.ca_file = std::filesystem::absolute(ca_file).string();
  if (uri.rfind("hdfs://", 0) != 0)
    return nn;
  auto authority = uri.substr(7, uri.find('/', 7) - 7);
  // An HA nameservice's token is filed under its name (hdfs://tonyns).
  if (authority.find(':') == std::string::npos)
    if (auto* tok =
            tokens.find(hdfs::delegation_token_kind, hdfs::ha_token_service(authority))) {
      nn.auth.delegation = hdfs::to_url_string(*tok);
      return nn;
    }
  auto address = hadoop::parse_endpoint(authority, 8020);
  if (!address)
    return nn;
  auto service = hdfs::token_service(*address);
  if (!service)
    return nn;
  if (auto* tok = tokens.find(hdfs::delegation_token_kind, *service))
    nn.auth.delegation = hdfs::to_url_string(*tok);
  return nn;
}

// -- the journal --------------------------------------------------------------------

state_journal::state_journal(write_fn write, std::chrono::milliseconds interval)
    : write_(std::move(write))
    , interval_(interval) {
  thread_ = std::thread([this] { run(); });
}

state_journal::~state_journal() {
  close();
}

void state_journal::close() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void state_journal::save(const job_status& st) {
  bool now = is_final(st);
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (stop_)
      return;
    newest_ = st;
  }
  if (now)
    cv_.notify_all();
}

uint64_t state_journal::writes() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return writes_;
}

void state_journal::run() {
  std::unique_lock<std::mutex> lock{mtx_};
  for (;;) {
    // A final status goes at once; others wait out the interval, so a burst
    // of changes costs one write.
    cv_.wait_for(lock, interval_,
                 [this] { return stop_ || (newest_ && is_final(*newest_)); });
    bool stopping = stop_;
    if (newest_) {
      auto st = std::move(*newest_);
      newest_.reset();
      lock.unlock();
      auto ok = write_(to_json(st));
      lock.lock();
      if (ok)
        ++writes_;
      else if (!newest_ && !stopping)
        newest_ = std::move(st); // again with the next round
    }
    if (stopping)
      return;
  }
}

} // namespace tony
