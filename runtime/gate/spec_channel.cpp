#include "runtime/gate/spec_channel.hpp"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <limits>

#include "messages/error.hpp"

namespace tony::gate {

namespace {

constexpr uint64_t wake_id = std::numeric_limits<uint64_t>::max();

void wake(int fd) {
  uint64_t one = 1;
  // A full counter (never, at 2^64 - 1) still leaves the thread woken.
  (void)!::write(fd, &one, sizeof(one));
}

bool read_exactly(int fd, char* data, size_t n) {
  while (n > 0) {
    auto k = ::read(fd, data, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    data += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

} // namespace

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
  return {connections_.load(), written_.load(), dropped_.load()};
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
        on_writable(static_cast<size_t>(id));
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
  for (auto fd : fds) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    peers_.push_back(peer{});
    peers_.back().fd = fd;
    ++connections_;
    if (current_) {
      peers_.back().queued = true;
      queue_.push_back(peers_.size() - 1);
    }
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
    if (peers_[i].fd >= 0 && begin(i))
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
  ev.events = EPOLLOUT;
  ev.data.u64 = i;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, p.fd, &ev);
  return true;
}

void spec_channel::on_writable(size_t i) {
  auto& p = peers_[i];
  auto r = pump(p);
  if (r == 0)
    return;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, p.fd, nullptr);
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
    ::close(p.fd);
    p.fd = -1;
    ++dropped_;
    return;
  }
  ++written_;
  if (p.stale) {
    p.stale = false;
    p.queued = true;
    queue_.push_back(i);
  }
}

caf::expected<std::string> read_spec_frame(int fd, size_t max_bytes) {
  char prefix[8];
  if (!read_exactly(fd, prefix, sizeof(prefix)))
    return make_error(errc::infrastructure,
                      "the AM's spec channel closed before sending a cluster spec");
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

} // namespace tony::gate
