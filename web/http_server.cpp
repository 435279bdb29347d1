#include "web/http_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "messages/error.hpp"

namespace tony::http {

namespace {

using clock_type = std::chrono::steady_clock;

// Requests served on one connection before it must queue again behind
// others (pipelined requests already buffered are served in a row).
constexpr int max_requests_in_a_row = 100;

// cpp-httplib's Server, used only to parse, route and answer requests that
// arrive on streams of ours; it never listens.
class routing_server : public httplib::Server {
public:
  using httplib::Server::process_request;
};

// Whether `buf` holds a whole request line and header block.
bool header_complete(const std::string& buf, size_t from = 0) {
  from = from > 3 ? from - 3 : 0;
  return buf.find("\r\n\r\n", from) != std::string::npos ||
         buf.find("\n\n", from) != std::string::npos;
}

// Waits on the listener until a request's header has arrived in full; holds
// at most max_header_bytes of it.
class header_session : public gate::session {
public:
  header_session(size_t limit, std::string buffered = {})
      : limit_(limit)
      , buf_(std::move(buffered)) {
    // nop
  }

  step on_readable(int fd, std::string& reply) override {
    char chunk[4096];
    auto room = limit_ - std::min(limit_, buf_.size());
    if (room == 0)
      return too_large(reply);
    auto n = ::recv(fd, chunk, std::min(room, sizeof(chunk)), 0);
    if (n < 0)
      return errno == EAGAIN || errno == EINTR ? step::wait : step::close;
    if (n == 0)
      return step::close;
    auto before = buf_.size();
    buf_.append(chunk, static_cast<size_t>(n));
    if (header_complete(buf_, before))
      return step::pass;
    return buf_.size() >= limit_ ? too_large(reply) : step::wait;
  }

  std::string take() { return std::move(buf_); }

private:
  static step too_large(std::string& reply) {
    reply = "HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n"
            "Content-Length: 0\r\n\r\n";
    return step::close;
  }

  size_t limit_;
  std::string buf_;
};

// A request's connection as cpp-httplib reads and writes it: first what the
// listener already read, then the socket, every operation bounded by the
// I/O timeout and all of them by the request's deadline.
class socket_stream : public httplib::Stream {
public:
  socket_stream(int fd, std::string buffered, std::chrono::milliseconds io_timeout)
      : fd_(fd)
      , buf_(std::move(buffered))
      , io_timeout_(io_timeout) {
    // nop
  }

  void begin_request(clock_type::time_point deadline) { deadline_ = deadline; }

  bool is_readable() const override { return pos_ < buf_.size() || wait(POLLIN); }

  bool is_writable() const override { return wait(POLLOUT); }

  ssize_t read(char* ptr, size_t size) override {
    if (pos_ < buf_.size()) {
      auto n = std::min(size, buf_.size() - pos_);
      std::memcpy(ptr, buf_.data() + pos_, n);
      pos_ += n;
      return static_cast<ssize_t>(n);
    }
    if (!wait(POLLIN))
      return -1;
    for (;;) {
      auto n = ::recv(fd_, ptr, size, 0);
      if (n < 0 && errno == EINTR)
        continue;
      return n;
    }
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!wait(POLLOUT))
      return -1;
    for (;;) {
      auto n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
        continue;
      return n;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
      describe(addr, ip, port);
  }

  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
      describe(addr, ip, port);
  }

  socket_t socket() const override { return fd_; }

  /// Whether a further request is already buffered in full (pipelining).
  bool next_request_buffered() const {
    return header_complete(buf_.substr(std::min(pos_, buf_.size())));
  }

  /// What was read but not consumed.
  std::string take_rest() {
    auto rest = buf_.substr(std::min(pos_, buf_.size()));
    buf_.clear();
    pos_ = 0;
    return rest;
  }

private:
  static void describe(const sockaddr_storage& addr, std::string& ip, int& port) {
    char text[INET6_ADDRSTRLEN] = {};
    if (addr.ss_family == AF_INET) {
      auto& in = reinterpret_cast<const sockaddr_in&>(addr);
      ::inet_ntop(AF_INET, &in.sin_addr, text, sizeof(text));
      port = ntohs(in.sin_port);
    } else if (addr.ss_family == AF_INET6) {
      auto& in6 = reinterpret_cast<const sockaddr_in6&>(addr);
      ::inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof(text));
      port = ntohs(in6.sin6_port);
    }
    ip = text;
  }

  bool wait(short events) const {
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline_ - clock_type::now());
      auto ms = std::min(left, io_timeout_).count();
      if (ms <= 0)
        return false;
      pollfd p{fd_, events, 0};
      auto rc = ::poll(&p, 1, static_cast<int>(ms));
      if (rc < 0 && errno == EINTR)
        continue;
      return rc > 0 && (p.revents & (events | POLLHUP | POLLERR)) != 0;
    }
  }

  int fd_;
  std::string buf_;
  size_t pos_ = 0;
  std::chrono::milliseconds io_timeout_;
  clock_type::time_point deadline_;
};

void close_connection(int fd) {
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

} // namespace

http_server::http_server(http_limits limits)
    : limits_(limits)
    , server_(std::make_unique<routing_server>()) {
  server_->set_payload_max_length(64 << 20);
  server_->set_keep_alive_timeout(std::max<time_t>(
      1,
      std::chrono::duration_cast<std::chrono::seconds>(limits_.header_timeout).count()));
}

http_server::~http_server() {
  stop();
}

caf::expected<int> http_server::bind(const std::string& host, int port) {
  gate::listener_options opts;
  opts.name = "http";
  opts.max_pending = limits_.max_pending;
  opts.deadline = limits_.header_timeout;
  auto limit = limits_.max_header_bytes;
  listener_ = std::make_unique<gate::listener>(
      opts, [limit] { return std::make_unique<header_session>(limit); },
      [this](int fd, std::unique_ptr<gate::session> s) { on_header(fd, std::move(s)); });
  auto bound = listener_->bind(host, static_cast<uint16_t>(port));
  if (!bound) {
    listener_.reset();
    return make_error(errc::infrastructure,
                      "cannot listen for HTTP on " + host + ":" + std::to_string(port) +
                          (port == 0 ? "" : " (is the port in use?)") + ": " +
                          describe(bound.error()));
  }
  port_ = *bound;
  return port_;
}

void http_server::set_filter(filter f) {
  server_->set_pre_routing_handler(
      [f = std::move(f)](const httplib::Request& req, httplib::Response& res) {
        return f(req, res) ? httplib::Server::HandlerResponse::Handled
                           : httplib::Server::HandlerResponse::Unhandled;
      });
}

void http_server::start(handler h) {
  auto shared = std::make_shared<handler>(std::move(h));
  auto plain = [shared](const httplib::Request& req, httplib::Response& res) {
    (*shared)(req, req.body, res);
  };
  auto with_reader = [shared](const httplib::Request& req, httplib::Response& res,
                              const httplib::ContentReader& reader) {
    // The raw body, also for multipart forms (httplib would split those).
    std::string body;
    reader([&](const char* data, size_t len) {
      body.append(data, len);
      return true;
    });
    (*shared)(req, body, res);
  };
  const std::string all = "/.*";
  server_->Get(all, plain);
  server_->Options(all, plain);
  server_->Post(all, with_reader);
  server_->Put(all, with_reader);
  server_->Patch(all, with_reader);
  server_->Delete(all, with_reader);
  server_->set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown error";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        spdlog::warn("http: {} {} failed: {}", req.method, req.path, what);
        res.status = 500;
        res.set_content("tony: internal error: " + what + "\n", "text/plain");
      });
  for (size_t i = 0; i < limits_.workers; ++i)
    workers_.emplace_back([this] { work(); });
  listener_->start();
}

void http_server::stop() {
  if (listener_)
    listener_->stop();
  {
    std::lock_guard<std::mutex> guard{mutex_};
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_)
    if (t.joinable())
      t.join();
  workers_.clear();
  std::lock_guard<std::mutex> guard{mutex_};
  for (auto& j : queue_)
    close_connection(j.fd);
  queue_.clear();
}

gate::listener_counts http_server::counts() const {
  return listener_ ? listener_->counts() : gate::listener_counts{};
}

void http_server::on_header(int fd, std::unique_ptr<gate::session> s) {
  auto buffered = static_cast<header_session&>(*s).take();
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (!stopping_ && queue_.size() < limits_.max_queued) {
      queue_.push_back(job{fd, std::move(buffered)});
      cv_.notify_one();
      return;
    }
  }
  gate::send_now(fd, "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\n"
                     "Connection: close\r\nContent-Length: 0\r\n\r\n");
  close_connection(fd);
}

void http_server::work() {
  for (;;) {
    job j;
    {
      std::unique_lock<std::mutex> lock{mutex_};
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_)
        return;
      j = std::move(queue_.front());
      queue_.pop_front();
    }
    serve(std::move(j));
  }
}

void http_server::serve(job j) {
  auto& routes = static_cast<routing_server&>(*server_);
  socket_stream strm{j.fd, std::move(j.buffered), limits_.io_timeout};
  for (int n = 0; n < max_requests_in_a_row; ++n) {
    strm.begin_request(clock_type::now() + limits_.request_timeout);
    bool client_closes = false;
    if (!routes.process_request(strm, false, client_closes, nullptr) || client_closes) {
      close_connection(j.fd);
      return;
    }
    if (!strm.next_request_buffered())
      break;
  }
  listener_->rearm(
      j.fd, std::make_unique<header_session>(limits_.max_header_bytes, strm.take_rest()));
}

} // namespace tony::http
