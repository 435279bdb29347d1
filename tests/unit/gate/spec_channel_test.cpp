// The spec channel on real sockets: every connection gets the whole spec
// from the one shared buffer (larger than a socket buffer, so the writes
// stop and resume), a late connection gets the spec already published, a
// newer spec arrives last and whole, a dead peer costs only itself (and is
// closed as soon as it goes, before any spec), and the reader refuses a
// length it would have to trust. The executor's end (spec_reader) through a
// real gate listener: every frame in order, a refused secret at once, the
// end of the AM's side, and a stop that cuts a blocking read.

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "messages/error.hpp"
#include "runtime/gate/gate_session.hpp"
#include "runtime/gate/listener.hpp"
#include "runtime/gate/spec_channel.hpp"

namespace tony::gate {
namespace {

constexpr size_t max_spec = 4 << 20;

// A spec larger than a socket's buffer, distinct per seed.
std::shared_ptr<const std::string> make_spec(char seed, size_t size = 600 << 10) {
  std::string s(size, '\0');
  for (size_t i = 0; i < size; ++i)
    s[i] = static_cast<char>(seed + static_cast<char>(i % 251));
  return std::make_shared<const std::string>(std::move(s));
}

// n connected pairs: the first ends go to the channel, the second are read.
std::vector<int> connect_pairs(spec_channel& channel, size_t n) {
  std::vector<int> readers;
  for (size_t i = 0; i < n; ++i) {
    int sv[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    channel.add(sv[0]);
    readers.push_back(sv[1]);
  }
  return readers;
}

// Reads frames until `want` arrives (at most `frames`); every frame read.
std::vector<std::string> read_until(int fd, const std::string& want, int frames) {
  std::vector<std::string> got;
  for (int i = 0; i < frames; ++i) {
    auto frame = read_spec_frame(fd, max_spec);
    if (!frame)
      break;
    got.push_back(std::move(*frame));
    if (got.back() == want)
      break;
  }
  return got;
}

TEST(spec_channel, every_connection_gets_the_whole_spec) {
  spec_channel channel{4};
  ASSERT_TRUE(channel.start());
  auto readers = connect_pairs(channel, 24);
  auto spec = make_spec('a');
  channel.publish(spec);
  std::vector<std::future<tony::expected<std::string>>> reads;
  for (auto fd : readers)
    reads.push_back(
        std::async(std::launch::async, [fd] { return read_spec_frame(fd, max_spec); }));
  for (auto& r : reads) {
    auto got = r.get();
    ASSERT_TRUE(got) << describe(got.error());
    EXPECT_TRUE(*got == *spec);
  }
  for (auto fd : readers)
    ::close(fd);
}

TEST(spec_channel, a_late_connection_gets_the_spec_already_published) {
  spec_channel channel{2};
  ASSERT_TRUE(channel.start());
  auto spec = make_spec('b', 1000);
  channel.publish(spec);
  auto readers = connect_pairs(channel, 1);
  auto got = read_spec_frame(readers[0], max_spec);
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_EQ(*got, *spec);
  ::close(readers[0]);
}

TEST(spec_channel, a_newer_spec_arrives_last_and_every_frame_whole) {
  spec_channel channel{3};
  ASSERT_TRUE(channel.start());
  auto readers = connect_pairs(channel, 8);
  auto older = make_spec('c');
  auto newer = make_spec('d');
  channel.publish(older);
  channel.publish(newer);
  std::vector<std::future<std::vector<std::string>>> reads;
  for (auto fd : readers)
    reads.push_back(std::async(std::launch::async,
                               [fd, newer] { return read_until(fd, *newer, 3); }));
  for (auto& r : reads) {
    auto frames = r.get();
    ASSERT_FALSE(frames.empty());
    EXPECT_TRUE(frames.back() == *newer);
    for (auto& f : frames)
      EXPECT_TRUE(f == *older || f == *newer) << "a frame of " << f.size() << " bytes";
  }
  for (auto fd : readers)
    ::close(fd);
}

TEST(spec_channel, a_closed_peer_costs_only_itself) {
  spec_channel channel{1};
  ASSERT_TRUE(channel.start());
  auto readers = connect_pairs(channel, 4);
  ::close(readers[1]); // gone before the spec: closed, never written to
  auto spec = make_spec('e');
  channel.publish(spec);
  for (size_t i : {size_t{0}, size_t{2}, size_t{3}}) {
    auto got = read_spec_frame(readers[i], max_spec);
    ASSERT_TRUE(got) << describe(got.error());
    EXPECT_TRUE(*got == *spec);
    ::close(readers[i]);
  }
  // Every delivery either completed or failed; the closed one never got a
  // spec. (A bounded wait for the channel's thread to count, not a timed
  // assertion.) The others are closed too once their readers went.
  for (int i = 0; i < 10000 && channel.counts().dropped < 4; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(channel.counts().written, 3u);
  EXPECT_EQ(channel.counts().dropped, 4u);
  EXPECT_EQ(channel.counts().connections, 4u);
  EXPECT_EQ(channel.counts().open, 0u);
}

TEST(spec_channel, the_reader_refuses_a_length_over_its_cap) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  // Claims 1 TiB: refused without reading on or allocating it.
  const unsigned char prefix[8] = {0, 0, 0, 0, 0, 1, 0, 0};
  ASSERT_EQ(::write(sv[0], prefix, sizeof(prefix)), 8);
  auto got = read_spec_frame(sv[1], max_spec);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code(), errc::protocol);
  EXPECT_NE(describe(got.error()).find("more than the"), std::string::npos);
  ::close(sv[0]);
  ::close(sv[1]);
}

TEST(spec_channel, the_reader_reports_a_connection_that_ends_early) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  const unsigned char prefix[8] = {100, 0, 0, 0, 0, 0, 0, 0};
  ASSERT_EQ(::write(sv[0], prefix, sizeof(prefix)), 8);
  ASSERT_EQ(::write(sv[0], "short", 5), 5);
  ::close(sv[0]);
  auto got = read_spec_frame(sv[1], max_spec);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code(), errc::infrastructure);
  ::close(sv[1]);
}

// Waits (bounded) until the channel's thread has counted what `done` wants.
bool counted(const spec_channel& channel,
             const std::function<bool(const spec_channel_counts&)>& done) {
  for (int i = 0; i < 10000; ++i) {
    if (done(channel.counts()))
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

TEST(spec_channel, a_peer_that_goes_is_closed_before_any_spec) {
  spec_channel channel{2};
  ASSERT_TRUE(channel.start());
  auto readers = connect_pairs(channel, 3);
  ASSERT_TRUE(counted(channel, [](auto& c) { return c.open == 3; }));
  ::close(readers[0]);
  EXPECT_TRUE(counted(channel, [](auto& c) { return c.open == 2 && c.dropped == 1; }));
  // Its slot serves a newcomer; everyone left gets the spec.
  auto more = connect_pairs(channel, 1);
  auto spec = make_spec('f', 1000);
  channel.publish(spec);
  for (auto fd : {readers[1], readers[2], more[0]}) {
    auto got = read_spec_frame(fd, max_spec);
    ASSERT_TRUE(got) << describe(got.error());
    EXPECT_EQ(*got, *spec);
    ::close(fd);
  }
  EXPECT_TRUE(counted(channel, [](auto& c) { return c.open == 0 && c.written == 3; }));
  EXPECT_EQ(channel.counts().connections, 4u);
}

// -- the executor's end ------------------------------------------------------------

const std::string secret = "the-job-secret";

// The AM's side: a gate listener whose spec-channel connections go to a
// spec channel, as tony-am's registry gate does.
struct am_side {
  std::shared_ptr<spec_channel> channel = std::make_shared<spec_channel>(4);
  std::unique_ptr<listener> door;

  am_side() {
    EXPECT_TRUE(channel->start());
    auto key = std::make_shared<const std::string>(secret);
    door = std::make_unique<listener>(
        listener_options{}, [key] { return make_gate_session(key, true); },
        [ch = channel](int fd, std::unique_ptr<session>) { ch->add(fd); });
    EXPECT_TRUE(door->bind("127.0.0.1", 0));
    door->start();
  }
};

// What a reader handed on, for the test thread to wait on.
struct received {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<std::string> frames;
  std::vector<tony::error> ends;

  spec_reader::frame_handler on_frame() {
    return [this](std::string f) {
      std::lock_guard<std::mutex> guard{mutex};
      frames.push_back(std::move(f));
      cv.notify_all();
    };
  }

  spec_reader::end_handler on_end() {
    return [this](const tony::error& err) {
      std::lock_guard<std::mutex> guard{mutex};
      ends.push_back(err);
      cv.notify_all();
    };
  }

  bool wait(const std::function<bool()>& done) {
    std::unique_lock<std::mutex> lock{mutex};
    return cv.wait_for(lock, std::chrono::seconds(20), done);
  }
};

TEST(spec_reader, hands_on_every_frame_in_order) {
  am_side am;
  received got;
  spec_reader reader;
  am.channel->publish(make_spec('g', 100));
  reader.open("127.0.0.1", am.door->port(), secret, got.on_frame(), got.on_end());
  ASSERT_TRUE(got.wait([&] { return got.frames.size() == 1; }));
  auto newer = make_spec('h', 200);
  am.channel->publish(newer);
  ASSERT_TRUE(got.wait([&] { return got.frames.size() == 2; }));
  EXPECT_EQ(got.frames[1], *newer);
  reader.stop();
  EXPECT_TRUE(got.ends.empty());
}

TEST(spec_reader, a_refused_secret_ends_it_at_once) {
  am_side am;
  received got;
  spec_reader reader;
  reader.open("127.0.0.1", am.door->port(), "another job's secret", got.on_frame(),
              got.on_end());
  ASSERT_TRUE(got.wait([&] { return !got.ends.empty(); }));
  EXPECT_EQ(got.ends[0].code(), errc::bad_secret) << describe(got.ends[0]);
  EXPECT_TRUE(got.frames.empty());
}

TEST(spec_reader, the_end_of_the_ams_side_is_reported_once) {
  received got;
  spec_reader reader;
  {
    am_side am;
    am.channel->publish(make_spec('i', 100));
    reader.open("127.0.0.1", am.door->port(), secret, got.on_frame(), got.on_end());
    ASSERT_TRUE(got.wait([&] { return got.frames.size() == 1; }));
  } // the AM's channel and listener go
  ASSERT_TRUE(got.wait([&] { return !got.ends.empty(); }));
  EXPECT_EQ(got.ends.size(), 1u);
  EXPECT_EQ(got.ends[0].code(), errc::infrastructure);
}

TEST(spec_reader, stop_cuts_a_blocking_read_and_calls_nothing) {
  am_side am;
  received got;
  spec_reader reader;
  reader.open("127.0.0.1", am.door->port(), secret, got.on_frame(), got.on_end());
  // Connected and waiting for a spec that never comes.
  ASSERT_TRUE(counted(*am.channel, [](auto& c) { return c.open == 1; }));
  reader.stop();
  EXPECT_TRUE(got.frames.empty());
  EXPECT_TRUE(got.ends.empty());
  // Its connection is gone from the AM's side too.
  EXPECT_TRUE(counted(*am.channel, [](auto& c) { return c.open == 0; }));
}

} // namespace
} // namespace tony::gate
