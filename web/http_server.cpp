#include "web/http_server.hpp"

#include <fcntl.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>

#include <spdlog/spdlog.h>

#include "base/text.hpp"
#include "messages/error.hpp"

namespace tony::http {

namespace {

using clock_type = std::chrono::steady_clock;

// cpp-httplib's Server, used only to parse, route and answer requests that
// arrive on streams of ours; it never listens. cpp-httplib writes a
// content provider's body (a streamed answer) only while its listening
// socket is valid, taking an invalid one for a server shutting down: this
// one holds a descriptor of /dev/null there until streams() is stopped.
class routing_server : public httplib::Server {
public:
  using httplib::Server::process_request;

  routing_server() { svr_sock_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC); }
  ~routing_server() override { stop_streams(); }

  /// Content providers still writing stop at their next piece.
  void stop_streams() {
    auto fd = svr_sock_.exchange(INVALID_SOCKET);
    if (fd != INVALID_SOCKET)
      ::close(fd);
  }
};

// Whether `buf` holds a whole request line and header block.
bool header_complete(const std::string& buf, size_t from = 0) {
  from = from > 3 ? from - 3 : 0;
  return buf.find("\r\n\r\n", from) != std::string::npos ||
         buf.find("\n\n", from) != std::string::npos;
}

} // namespace

// What the listener's sessions share with the server: the routes' body
// policy and the bytes of bodies held now.
struct http_server::shared_state {
  body_policy policy;
  size_t max_header_bytes = 0;
  size_t max_body_bytes_held = 0;
  std::atomic<size_t> body_bytes_held{0};
};

namespace {

// Waits on the listener until a request has arrived in full: its header (at
// most max_header_bytes), then its body as the route's rule allows. A
// request the rule refuses is answered and closed before its body is read.
class request_session : public gate::session {
public:
  request_session(std::shared_ptr<http_server::shared_state> shared,
                  std::string buffered = {})
      : shared_(std::move(shared))
      , buf_(std::move(buffered)) {
    // nop
  }

  ~request_session() override { shared_->body_bytes_held -= held_; }

  step on_readable(int fd, std::string& reply) override {
    char chunk[16 << 10];
    size_t want = sizeof(chunk);
    if (!head_) {
      auto limit = shared_->max_header_bytes;
      auto room = limit - std::min(limit, buf_.size());
      if (room == 0)
        return too_large(reply);
      want = std::min(room, want);
    }
    auto n = ::recv(fd, chunk, want, 0);
    if (n < 0)
      return errno == EAGAIN || errno == EINTR ? step::wait : step::close;
    if (n == 0)
      return step::close;
    if (head_)
      return take_body(fd, chunk, static_cast<size_t>(n), reply);
    auto before = buf_.size();
    buf_.append(chunk, static_cast<size_t>(n));
    if (header_complete(buf_, before))
      return on_head(fd, reply);
    return buf_.size() >= shared_->max_header_bytes ? too_large(reply) : step::wait;
  }

  /// Goes on with what is buffered already (a keep-alive connection's next
  /// request), reading nothing.
  step advance(int fd, std::string& reply) {
    if (header_complete(buf_))
      return on_head(fd, reply);
    return buf_.size() >= shared_->max_header_bytes ? too_large(reply) : step::wait;
  }

  const request_head& head() const { return *head_; }
  std::string take_body() { return reader_->take_body(); }
  std::string take_rest() { return std::move(rest_); }

private:
  step on_head(int fd, std::string& reply) {
    head_ = parse_head(buf_);
    if (!head_)
      return refuse({400, "tony: the request's line or header is malformed\n"}, reply);
    auto target = std::string_view(head_->target);
    auto path = httplib::detail::decode_url(
        std::string(target.substr(0, target.find('?'))), false);
    body_rule rule;
    if (shared_->policy)
      rule = shared_->policy(head_->method, path);
    reader_.emplace(*head_, rule);
    if (reader_->refused())
      return refuse(*reader_->refused(), reply);
    auto after = buf_.substr(head_->size);
    buf_.clear();
    if (!reader_->done() && reader_->expects_continue() && after.empty())
      gate::send_now(fd, "HTTP/1.1 100 Continue\r\n\r\n");
    return take_body(fd, after.data(), after.size(), reply);
  }

  step take_body(int, const char* data, size_t size, std::string& reply) {
    auto taken = reader_->feed(data, size);
    if (reader_->refused())
      return refuse(*reader_->refused(), reply);
    rest_.append(data + taken, size - taken);
    auto now = reader_->body().size();
    if (now > held_) {
      auto more = now - held_;
      auto total = shared_->body_bytes_held.fetch_add(more) + more;
      held_ = now;
      if (total > shared_->max_body_bytes_held)
        return refuse(
            {503, "tony: too many request bodies at once; try again in a moment\n"},
            reply);
    }
    return reader_->done() ? step::pass : step::wait;
  }

  static step refuse(const refusal& r, std::string& reply) {
    reply = refusal_response(r);
    return step::close;
  }

  static step too_large(std::string& reply) {
    reply = "HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n"
            "Content-Length: 0\r\n\r\n";
    return step::close;
  }

  std::shared_ptr<http_server::shared_state> shared_;
  std::string buf_; // the header while it arrives
  std::optional<request_head> head_;
  std::optional<body_reader> reader_;
  std::string rest_; // read beyond the body: the next request's start
  size_t held_ = 0;  // body bytes counted in shared_->body_bytes_held
};

// The request a worker serves now, as read by its session: cpp-httplib sees
// its header without the body's framing and no body, and the handler gets
// the body and the header from here.
struct taken_request {
  const request_head* head;
  const std::string* body;
};
thread_local const taken_request* current_request = nullptr;

// Headers cpp-httplib must not act on: it would read, parse or inflate a
// body (the body is read already).
bool body_header(const std::string& name) {
  auto n = base::lower(name);
  return n == "content-length" || n == "transfer-encoding" || n == "content-type" ||
         n == "content-encoding" || n == "expect";
}

// The head as cpp-httplib is to parse it: the body's headers left out.
std::string head_for_routing(const request_head& h) {
  std::string out = h.method + " " + h.target + " " + h.version + "\r\n";
  for (auto& [k, v] : h.headers)
    if (!body_header(k))
      out += k + ": " + v + "\r\n";
  out += "Content-Length: 0\r\n\r\n";
  return out;
}

// `req` as the client sent it: the body's headers put back.
httplib::Request as_sent(const httplib::Request& req, const taken_request& t) {
  httplib::Request full = req;
  full.headers.erase("Content-Length");
  for (auto& [k, v] : t.head->headers) {
    auto n = base::lower(k);
    if (n == "content-type" || n == "content-encoding")
      full.headers.emplace(k, v);
  }
  if (!t.body->empty())
    full.headers.emplace("Content-Length", std::to_string(t.body->size()));
  return full;
}

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
    , shared_(std::make_shared<shared_state>())
    , server_(std::make_unique<routing_server>()) {
  shared_->max_header_bytes = limits_.max_header_bytes;
  shared_->max_body_bytes_held = limits_.max_body_bytes_held;
  // Bodies are read by the sessions (the routes' rules); cpp-httplib sees
  // none.
  server_->set_payload_max_length(0);
  server_->set_keep_alive_timeout(std::max<time_t>(
      1,
      std::chrono::duration_cast<std::chrono::seconds>(limits_.header_timeout).count()));
}

http_server::~http_server() {
  stop();
}

expected<int> http_server::bind(const std::string& host, int port) {
  gate::listener_options opts;
  opts.name = "http";
  opts.max_pending = limits_.max_pending;
  opts.deadline = limits_.header_timeout;
  auto shared = shared_;
  listener_ = std::make_unique<gate::listener>(
      opts, [shared] { return std::make_unique<request_session>(shared); },
      [this](int fd, std::unique_ptr<gate::session> s) { on_request(fd, std::move(s)); });
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
        auto t = current_request;
        bool handled = t != nullptr ? f(as_sent(req, *t), res) : f(req, res);
        return handled ? httplib::Server::HandlerResponse::Handled
                       : httplib::Server::HandlerResponse::Unhandled;
      });
}

void http_server::set_body_policy(body_policy p) {
  shared_->policy = std::move(p);
}

void http_server::start(handler h) {
  auto shared = std::make_shared<handler>(std::move(h));
  auto plain = [shared](const httplib::Request& req, httplib::Response& res) {
    auto t = current_request;
    if (t == nullptr)
      return (*shared)(req, req.body, res);
    (*shared)(as_sent(req, *t), *t->body, res);
  };
  const std::string all = "/.*";
  server_->Get(all, plain);
  server_->Options(all, plain);
  server_->Post(all, plain);
  server_->Put(all, plain);
  server_->Patch(all, plain);
  server_->Delete(all, plain);
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
  static_cast<routing_server&>(*server_).stop_streams();
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

size_t http_server::body_bytes_held() const {
  return shared_->body_bytes_held.load();
}

void http_server::on_request(int fd, std::unique_ptr<gate::session> s) {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (!stopping_ && queue_.size() < limits_.max_queued) {
      queue_.push_back(job{fd, std::move(s)});
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
  auto request = std::unique_ptr<request_session>(
      static_cast<request_session*>(j.request.release()));
  for (;;) {
    auto body = request->take_body();
    taken_request taken{&request->head(), &body};
    socket_stream strm{j.fd, head_for_routing(request->head()) + request->take_rest(),
                       limits_.io_timeout};
    strm.begin_request(clock_type::now() + limits_.request_timeout);
    bool client_closes = false;
    current_request = &taken;
    auto ok = routes.process_request(strm, false, client_closes, nullptr);
    current_request = nullptr;
    if (!ok || client_closes) {
      request.reset(); // its body's bytes leave the budget before the client sees the end
      close_connection(j.fd);
      return;
    }
    // The next request on this connection, from what is buffered: served
    // here when it is complete (pipelining), else back to the listener.
    request = std::make_unique<request_session>(shared_, strm.take_rest());
    std::string reply;
    auto next = request->advance(j.fd, reply);
    if (next == gate::session::step::close) {
      if (!reply.empty())
        gate::send_now(j.fd, reply);
      close_connection(j.fd);
      return;
    }
    if (next == gate::session::step::wait)
      break;
  }
  listener_->rearm(j.fd, std::move(request));
}

} // namespace tony::http
