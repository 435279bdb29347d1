#include "runtime/gate/listener.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "messages/error.hpp"

namespace tony::gate {

namespace {

using clock_type = std::chrono::steady_clock;

// How long accepting pauses when the process is out of file descriptors
// and no waiting connection can be closed to make room.
constexpr int accept_pause_ms = 100;

void close_fd(int fd) {
  if (fd >= 0)
    ::close(fd);
}

} // namespace

std::string summary(const listener_counts& c) {
  return std::to_string(c.accepted) + " connections, " + std::to_string(c.passed) +
         " passed, " + std::to_string(c.closed_by_session) + " closed before passing, " +
         std::to_string(c.expired) + " timed out, " + std::to_string(c.evicted) +
         " dropped at the cap";
}

session::~session() {
  // nop
}

bool send_now(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    auto n =
        ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

listener::listener(listener_options opts, session_factory make, pass_handler pass)
    : opts_(std::move(opts))
    , make_(std::move(make))
    , pass_(std::move(pass)) {
  // nop
}

listener::~listener() {
  stop();
}

expected<uint16_t> listener::bind(const std::string& host, uint16_t port) {
  auto fail = [&](const std::string& what) {
    close_fd(listen_fd_);
    listen_fd_ = -1;
    return make_error(errc::infrastructure, opts_.name + ": cannot listen on " + host +
                                                ":" + std::to_string(port) + ": " + what);
  };
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  auto service = std::to_string(port);
  if (auto rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(),
                              &hints, &found);
      rc != 0)
    return fail(::gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> guard{found, ::freeaddrinfo};
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0)
    return fail(std::strerror(errno));
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(listen_fd_, found->ai_addr, found->ai_addrlen) != 0)
    return fail(std::strerror(errno));
  if (::listen(listen_fd_, opts_.backlog) != 0)
    return fail(std::strerror(errno));
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return fail(std::strerror(errno));
  port_ = ntohs(addr.sin_port);
  return port_;
}

void listener::start() {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = listen_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
  ev.data.fd = wake_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  thread_ = std::thread([this] { run(); });
}

void listener::stop() {
  {
    std::lock_guard<std::mutex> guard{inbox_mutex_};
    closed_ = true;
  }
  stopping_ = true;
  if (wake_fd_ >= 0) {
    uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof(one));
  }
  if (thread_.joinable())
    thread_.join();
  for (auto& p : pending_)
    close_fd(p.fd);
  pending_.clear();
  by_fd_.clear();
  pending_count_ = 0;
  {
    std::lock_guard<std::mutex> guard{inbox_mutex_};
    for (auto& [fd, s] : inbox_)
      close_fd(fd);
    inbox_.clear();
  }
  close_fd(listen_fd_);
  close_fd(epoll_fd_);
  close_fd(wake_fd_);
  listen_fd_ = epoll_fd_ = wake_fd_ = -1;
}

void listener::rearm(int fd, std::unique_ptr<session> s) {
  {
    std::lock_guard<std::mutex> guard{inbox_mutex_};
    if (!closed_) {
      inbox_.emplace_back(fd, std::move(s));
      uint64_t one = 1;
      [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof(one));
      return;
    }
  }
  close_fd(fd);
}

listener_counts listener::counts() const {
  listener_counts c;
  c.accepted = accepted_;
  c.passed = passed_;
  c.closed_by_session = closed_by_session_;
  c.expired = expired_;
  c.evicted = evicted_;
  c.pending = pending_count_;
  return c;
}

bool listener::room_for_one(clock_type::time_point now,
                            clock_type::time_point* when) const {
  if (pending_.size() < opts_.max_pending || pending_.empty())
    return true;
  auto due = pending_.front().arrived + opts_.evict_after;
  if (when != nullptr)
    *when = due;
  return now >= due;
}

void listener::hold_accepting(bool hold) {
  if (hold == accept_held_ || accept_paused_)
    return;
  accept_held_ = hold;
  if (hold) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
  } else {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = listen_fd_;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
  }
}

int listener::wait_ms() const {
  int ms = accept_paused_ ? accept_pause_ms : -1;
  auto now = clock_type::now();
  clock_type::time_point due;
  if (accept_held_ && !room_for_one(now, &due)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(due - now).count();
    auto until = static_cast<int>(std::max<int64_t>(0, left) + 1);
    ms = ms < 0 ? until : std::min(ms, until);
  }
  if (!pending_.empty()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    pending_.front().deadline - clock_type::now())
                    .count();
    auto until = static_cast<int>(std::max<int64_t>(0, left) + 1);
    ms = ms < 0 ? until : std::min(ms, until);
  }
  return ms;
}

void listener::run() {
  std::vector<epoll_event> events(64);
  while (!stopping_) {
    auto n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()),
                          wait_ms());
    if (n < 0 && errno != EINTR) {
      spdlog::error("{}: epoll_wait failed: {}", opts_.name, std::strerror(errno));
      return;
    }
    if (accept_paused_) {
      accept_paused_ = false;
      accept_held_ = false;
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.fd = listen_fd_;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
    }
    for (int k = 0; k < n && !stopping_; ++k) {
      auto fd = events[static_cast<size_t>(k)].data.fd;
      if (fd == listen_fd_) {
        accept_all();
      } else if (fd == wake_fd_) {
        uint64_t count = 0;
        [[maybe_unused]] auto r = ::read(wake_fd_, &count, sizeof(count));
        take_rearmed();
      } else {
        on_event(fd);
      }
    }
    expire();
    // Slots freed (passed, closed, expired) or the oldest waited long
    // enough: take newcomers from the backlog again.
    if (accept_held_ && room_for_one(clock_type::now(), nullptr))
      hold_accepting(false);
  }
}

void listener::accept_all() {
  for (;;) {
    if (opts_.evict_after.count() > 0 && !room_for_one(clock_type::now(), nullptr)) {
      hold_accepting(true); // newcomers wait in the backlog
      return;
    }
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      ++accepted_;
      admit(fd, make_(), true);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED)
      continue;
    if ((errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)) {
      // Out of descriptors or memory: make room by closing the oldest
      // waiting connection, or pause accepting for a moment.
      if (!pending_.empty()) {
        drop(pending_.begin(), evicted_);
        continue;
      }
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
      accept_paused_ = true;
    }
    return; // EAGAIN, or paused
  }
}

void listener::admit(int fd, std::unique_ptr<session> s, bool greet) {
  if (pending_.size() >= opts_.max_pending && !pending_.empty()) {
    drop(pending_.begin(), evicted_);
  }
  if (greet) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    auto hello = s->greeting();
    if (!hello.empty() && !send_now(fd, hello)) {
      ++closed_by_session_;
      close_fd(fd);
      return;
    }
  }
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.fd = fd;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    close_fd(fd);
    return;
  }
  auto now = clock_type::now();
  auto i = pending_.insert(pending_.end(),
                           pending{fd, now + opts_.deadline, now, std::move(s)});
  by_fd_[fd] = i;
  pending_count_ = pending_.size();
}

void listener::on_event(int fd) {
  auto found = by_fd_.find(fd);
  if (found == by_fd_.end())
    return;
  auto i = found->second;
  std::string reply;
  auto next = i->s->on_readable(fd, reply);
  if (next == session::step::wait)
    return;
  if (!reply.empty() && !send_now(fd, reply))
    next = session::step::close;
  if (next == session::step::close) {
    drop(i, closed_by_session_);
    return;
  }
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  auto s = std::move(i->s);
  by_fd_.erase(fd);
  pending_.erase(i);
  pending_count_ = pending_.size();
  ++passed_;
  pass_(fd, std::move(s));
}

// The counts are read from other threads: whoever sees the connection end
// sees it counted, and whoever sees it counted sees it no longer waiting.
void listener::drop(pending_list::iterator i, std::atomic<uint64_t>& reason) {
  auto fd = i->fd;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  by_fd_.erase(fd);
  pending_.erase(i);
  pending_count_ = pending_.size();
  ++reason;
  close_fd(fd);
}

void listener::expire() {
  auto now = clock_type::now();
  // Everyone waits the same time, so arrival order is deadline order.
  while (!pending_.empty() && pending_.front().deadline <= now)
    drop(pending_.begin(), expired_);
}

void listener::take_rearmed() {
  std::vector<std::pair<int, std::unique_ptr<session>>> batch;
  {
    std::lock_guard<std::mutex> guard{inbox_mutex_};
    batch.swap(inbox_);
  }
  for (auto& [fd, s] : batch)
    admit(fd, std::move(s), false);
}

} // namespace tony::gate
