#include "runtime/gate/spec_channel.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <limits>

#include "messages/error.hpp"
#include "runtime/gate/gate_session.hpp"

namespace tony::gate {

namespace {

constexpr uint64_t wake_id = std::numeric_limits<uint64_t>::max();

void wake(int fd) {
  uint64_t one = 1;
  // A full counter (never, at 2^64 - 1) still leaves the thread woken.
  (void)!::write(fd, &one, sizeof(one));
}

// Reads n bytes, waiting for them on a non-blocking socket too.
bool read_exactly(int fd, char* data, size_t n) {
  while (n > 0) {
    auto k = ::read(fd, data, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, -1) < 0 && errno != EINTR)
        return false;
      continue;
    }
    if (k <= 0)
      return false;
    data += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

// What the channel waits for on a connection: its peer going (or sending,
// which it must not), and room to write while a frame is in progress.
constexpr uint32_t watch_peer = EPOLLIN | EPOLLRDHUP;

} // namespace

std::string summary(const spec_channel_counts& c) {
  return std::to_string(c.connections) + " connections (" + std::to_string(c.open) +
         " open), " + std::to_string(c.written) + " specs written, " +
         std::to_string(c.dropped) + " closed";
}

spec_channel::spec_channel(size_t window)
    : window_(window == 0 ? 1 : window) {}

spec_channel::~spec_channel() {
  if (thread_.joinable()) {
    stopping_ = true;
    wake(wake_fd_);
    thread_.join();
  }
  for (auto& p : peers_)
    if (p.fd >= 0)
      ::close(p.fd);
  for (auto fd : new_fds_)
    ::close(fd);
  for (auto fd : {epoll_fd_, wake_fd_})
    if (fd >= 0)
      ::close(fd);
}

bool spec_channel::start() {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || wake_fd_ < 0)
    return false;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = wake_id;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev) != 0)
    return false;
  thread_ = std::thread([this] { run(); });
  return true;
}

void spec_channel::add(int fd) {
  {
    std::lock_guard<std::mutex> guard{inbox_mutex_};
    new_fds_.push_back(fd);
  }
  if (wake_fd_ >= 0)
    wake(wake_fd_);
}

void spec_channel::publish(std::shared_ptr<const std::string> spec) {
  {
    std::lock_guard<std::mutex> guard{inbox_mutex_};
    next_ = std::move(spec);
  }
  if (wake_fd_ >= 0)
    wake(wake_fd_);
}

spec_channel_counts spec_channel::counts() const {
  return {connections_.load(), written_.load(), dropped_.load(), open_.load()};
}

void spec_channel::run() {
  std::vector<epoll_event> events(256);
  while (!stopping_) {
    auto n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), -1);
    for (int e = 0; e < n; ++e) {
      auto id = events[static_cast<size_t>(e)].data.u64;
      if (id == wake_id)
        take_inbox();
      else
        on_event(static_cast<size_t>(id), events[static_cast<size_t>(e)].events);
    }
    fill();
  }
}

// New connections and a newer spec, from add() and publish().
void spec_channel::take_inbox() {
  uint64_t ignored = 0;
  (void)!::read(wake_fd_, &ignored, sizeof(ignored));
  std::vector<int> fds;
  std::shared_ptr<const std::string> spec;
  {
    std::lock_guard<std::mutex> guard{inbox_mutex_};
    fds.swap(new_fds_);
    spec = std::move(next_);
  }
  if (spec) {
    current_ = std::move(spec);
    queue_all();
  }
  for (auto fd : fds)
    adopt(fd);
}

// A new connection: a slot of its own (a closed one's, if any), watched for
// its peer going, and queued for the newest spec.
void spec_channel::adopt(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  size_t i = peers_.size();
  if (!free_.empty()) {
    i = free_.back();
    free_.pop_back();
    peers_[i] = peer{};
  } else {
    peers_.emplace_back();
  }
  peers_[i].fd = fd;
  ++connections_;
  ++open_;
  epoll_event ev{};
  ev.events = watch_peer;
  ev.data.u64 = i;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    close_peer(i);
    return;
  }
  if (current_) {
    peers_[i].queued = true;
    queue_.push_back(i);
  }
}

// A new spec for everyone: idle connections queue now, busy ones once their
// current frame is out (a frame is never cut short).
void spec_channel::queue_all() {
  for (size_t i = 0; i < peers_.size(); ++i) {
    auto& p = peers_[i];
    if (p.fd < 0 || p.queued)
      continue;
    if (p.spec) {
      p.stale = true;
      continue;
    }
    p.queued = true;
    queue_.push_back(i);
  }
}

void spec_channel::fill() {
  while (active_ < window_ && !queue_.empty()) {
    auto i = queue_.front();
    queue_.pop_front();
    peers_[i].queued = false;
    if (peers_[i].fd < 0)
      free_.push_back(i); // closed while it waited
    else if (begin(i))
      ++active_;
  }
}

// Starts the newest spec on connection i; true if it waits for the socket.
bool spec_channel::begin(size_t i) {
  auto& p = peers_[i];
  p.spec = current_;
  auto len = static_cast<uint64_t>(p.spec->size());
  for (int b = 0; b < 8; ++b)
    p.prefix[b] = static_cast<char>(len >> (8 * b));
  p.sent = 0;
  auto r = pump(p);
  if (r != 0) {
    finish(i, r < 0);
    return false;
  }
  epoll_event ev{};
  ev.events = watch_peer | EPOLLOUT;
  ev.data.u64 = i;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, p.fd, &ev);
  return true;
}

void spec_channel::on_event(size_t i, uint32_t events) {
  auto& p = peers_[i];
  if (p.fd < 0)
    return; // closed earlier in this round of events
  if (events & (watch_peer | EPOLLHUP | EPOLLERR)) {
    if (p.spec)
      --active_; // it held a place in the window
    close_peer(i);
    return;
  }
  if (!(events & EPOLLOUT) || !p.spec)
    return;
  auto r = pump(p);
  if (r == 0)
    return;
  epoll_event ev{};
  ev.events = watch_peer;
  ev.data.u64 = i;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, p.fd, &ev);
  --active_;
  finish(i, r < 0);
}

// Writes what the socket takes: 1 when the frame is out, 0 when the socket
// is full, -1 when the connection failed.
int spec_channel::pump(peer& p) {
  auto total = 8 + p.spec->size();
  while (p.sent < total) {
    iovec iov[2];
    size_t n = 0;
    if (p.sent < 8)
      iov[n++] = {p.prefix + p.sent, 8 - p.sent};
    auto off = p.sent < 8 ? 0 : p.sent - 8;
    iov[n++] = {const_cast<char*>(p.spec->data()) + off, p.spec->size() - off};
    msghdr mh{};
    mh.msg_iov = iov;
    mh.msg_iovlen = n;
    auto k = ::sendmsg(p.fd, &mh, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return 0;
    if (k <= 0)
      return -1;
    p.sent += static_cast<size_t>(k);
  }
  return 1;
}

void spec_channel::finish(size_t i, bool failed) {
  auto& p = peers_[i];
  p.spec = nullptr;
  if (failed) {
    close_peer(i);
    return;
  }
  ++written_;
  if (p.stale) {
    p.stale = false;
    p.queued = true;
    queue_.push_back(i);
  }
}

// Closes connection i; its slot is reused once it is out of the queue.
// Precondition: the caller took it out of the window if it was in it.
void spec_channel::close_peer(size_t i) {
  auto& p = peers_[i];
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, p.fd, nullptr);
  ::close(p.fd);
  p.fd = -1;
  p.spec = nullptr;
  p.stale = false;
  ++dropped_;
  --open_;
  if (!p.queued)
    free_.push_back(i);
}

expected<std::string> read_spec_frame(int fd, size_t max_bytes) {
  char prefix[8];
  if (!read_exactly(fd, prefix, sizeof(prefix)))
    return make_error(errc::infrastructure, "the AM closed its spec channel");
  uint64_t len = 0;
  for (int b = 0; b < 8; ++b)
    len |= uint64_t{static_cast<uint8_t>(prefix[b])} << (8 * b);
  if (len > max_bytes)
    return make_error(errc::protocol,
                      "the AM's spec channel announced a cluster spec of " +
                          std::to_string(len) + " bytes, more than the " +
                          std::to_string(max_bytes) +
                          " accepted: the peer is not a tony AM of this build");
  std::string spec(static_cast<size_t>(len), '\0');
  if (!read_exactly(fd, spec.data(), spec.size()))
    return make_error(errc::infrastructure,
                      "the AM's spec channel closed in the middle of a cluster spec");
  return spec;
}

// -- the executor's end ---------------------------------------------------------

spec_reader::~spec_reader() {
  stop();
}

void spec_reader::open(std::string host, uint16_t port, std::string secret,
                       frame_handler on_frame, end_handler on_end, options opts) {
  std::lock_guard<std::mutex> control{control_};
  stop_locked();
  {
    std::lock_guard<std::mutex> guard{mutex_};
    stopping_ = false;
  }
  thread_ = std::thread([this, host = std::move(host), port, secret = std::move(secret),
                         on_frame = std::move(on_frame), on_end = std::move(on_end),
                         opts]() mutable {
    run(std::move(host), port, std::move(secret), std::move(on_frame), std::move(on_end),
        opts);
  });
}

void spec_reader::stop() {
  std::lock_guard<std::mutex> control{control_};
  stop_locked();
}

void spec_reader::stop_locked() {
  if (!thread_.joinable())
    return;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    stopping_ = true;
    if (fd_ >= 0)
      ::shutdown(fd_, SHUT_RDWR); // cuts a blocking read or handshake short
  }
  wake_.notify_all();
  thread_.join();
  std::lock_guard<std::mutex> guard{mutex_};
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
}

bool spec_reader::stopped() {
  std::lock_guard<std::mutex> guard{mutex_};
  return stopping_;
}

// A connection through the gate that asked for the spec channel, or -1 with
// `why` (final, or the last transient failure once `connect_for` passed, or
// nothing when stopped).
int spec_reader::connect(const std::string& host, uint16_t port,
                         const std::string& secret, const options& opts, error& why) {
  using namespace std::chrono;
  auto where = host + ":" + std::to_string(port);
  auto deadline = steady_clock::now() + opts.connect_for;
  auto backoff = milliseconds(50);
  for (;;) {
    auto left = duration_cast<milliseconds>(deadline - steady_clock::now());
    auto attempt = std::max(std::min(left, milliseconds(10000)), milliseconds(100));
    auto fd = connect_tcp(host, port, attempt);
    if (fd) {
      {
        std::lock_guard<std::mutex> guard{mutex_};
        if (stopping_) {
          ::close(*fd);
          return -1;
        }
        fd_ = *fd;
      }
      auto ok = client_handshake(*fd, secret, where, attempt, purpose::spec_channel);
      if (ok)
        return *fd;
      why = ok.error();
      std::lock_guard<std::mutex> guard{mutex_};
      ::close(fd_);
      fd_ = -1;
    } else {
      why = fd.error();
    }
    auto final_error = why.code() == errc::bad_secret || why.code() == errc::protocol;
    if (final_error || steady_clock::now() >= deadline)
      return -1;
    std::unique_lock<std::mutex> guard{mutex_};
    if (wake_.wait_for(guard, backoff, [this] { return stopping_; }))
      return -1;
    backoff = std::min(backoff * 2, milliseconds(1000));
  }
}

void spec_reader::run(std::string host, uint16_t port, std::string secret,
                      frame_handler on_frame, end_handler on_end, options opts) {
  error why;
  auto fd = connect(host, port, secret, opts, why);
  if (fd < 0) {
    if (!stopped())
      on_end(why);
    return;
  }
  for (;;) {
    auto frame = read_spec_frame(fd, opts.max_bytes);
    if (stopped())
      return;
    if (!frame) {
      on_end(frame.error());
      return;
    }
    on_frame(std::move(*frame));
  }
}

} // namespace tony::gate
