// YARN's aggregated log files (hadoop/yarn/aggregated_log.hpp) against
// bytes Hadoop wrote: golden/nodemanager.tfile was uploaded by a real
// NodeManager of the test cluster, golden/gz.tfile by Hadoop's own
// AggregatedLogFormat.LogWriter with gz compression (golden/README.md).

#include "hadoop/yarn/aggregated_log.hpp"

#include <chrono>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

using namespace tony::yarn;

namespace {

std::string golden(const std::string& name) {
  std::ifstream in(std::string{TONY_GOLDEN_DIR} + "/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  return {std::istreambuf_iterator<char>(in), {}};
}

int64_t vlong(std::string bytes) {
  size_t pos = 0;
  auto x = read_tfile_vlong(bytes, &pos);
  EXPECT_TRUE(x) << (x ? "" : x.error().message());
  EXPECT_EQ(pos, bytes.size());
  return x ? *x : -999;
}

} // namespace

TEST(aggregated_log, tfile_vlongs_decode_as_hadoops_utils_reads_them) {
  // Encodings worked out from TFile's Utils.writeVLong.
  EXPECT_EQ(vlong(std::string("\x00", 1)), 0);
  EXPECT_EQ(vlong("\x7f"), 127);
  EXPECT_EQ(vlong("\xe0"), -32);
  EXPECT_EQ(vlong("\xff"), -1);
  EXPECT_EQ(vlong("\xcc\x80"), 128);                       // 0 - 52, then 0x80
  EXPECT_EQ(vlong("\xcb\xdf"), -33);                       // -1 - 52, then 0xdf
  EXPECT_EQ(vlong("\xd9\x45"), 3397);                      // 13 - 52, then 0x45
  EXPECT_EQ(vlong(std::string("\xa9\x00\x00", 3)), 65536); // 1 - 88, then 2 bytes
  EXPECT_EQ(vlong("\xa4\xf2\xc0"), -200000);
  EXPECT_EQ(vlong(std::string("\x84\x01\x00\x00\x00\x00", 6)), int64_t{1} << 32);
  EXPECT_EQ(vlong(std::string("\x85\x01\x00\x00\x00\x00\x00", 7)), int64_t{1} << 40);
  EXPECT_EQ(vlong(std::string("\x87\xf0\x00\x00\x00\x00\x00\x00\x00", 9)),
            -(int64_t{1} << 60)); // 8 bytes, signed
  size_t pos = 0;
  EXPECT_FALSE(read_tfile_vlong("\xcc", &pos));
  pos = 0;
  EXPECT_FALSE(read_tfile_vlong("\x80\x01", &pos)); // a length of 1: corrupt
}

TEST(aggregated_log, a_real_nodemanagers_file) {
  // Two workers of test_yarn_tools.py's job on one node, uncompressed.
  auto log = parse_aggregated_log(golden("nodemanager.tfile"));
  ASSERT_TRUE(log) << log.error().message();
  EXPECT_EQ(log->version, 1);
  EXPECT_EQ(log->owner, "root");
  ASSERT_EQ(log->containers.size(), 2u);
  EXPECT_EQ(log->containers[0].container_id, "container_1795795196112_0003_01_000003");
  EXPECT_EQ(log->containers[1].container_id, "container_1795795196112_0003_01_000002");
  std::vector<std::string> names;
  for (auto& f : log->containers[0].files)
    names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"directory.info", "executor.log",
                                             "launch_container.sh", "prelaunch.err",
                                             "prelaunch.out", "stderr", "stdout"}));
  auto* w1 = log->find("container_1795795196112_0003_01_000003");
  EXPECT_EQ(w1->find("stdout")->content,
            "TOOLS stdout of worker:1\nTOOLS progress 0.8\nTOOLS worker:1 finishing\n");
  EXPECT_EQ(w1->find("stderr")->content, "TOOLS stderr of worker:1\n");
  EXPECT_EQ(w1->find("prelaunch.err")->content, "");
  EXPECT_EQ(w1->find("executor.log")->content.size(), 318u);
  EXPECT_NE(w1->find("executor.log")
                ->content.find("executor: worker:1 command ended with code 0\n"),
            std::string::npos);
  EXPECT_EQ(w1->find("launch_container.sh")->content.substr(0, 12), "#!/bin/bash\n");
  auto* w0 = log->find("container_1795795196112_0003_01_000002");
  EXPECT_EQ(w0->find("stdout")->content, "TOOLS stdout of worker:0\n");
  EXPECT_EQ(w0->find("nosuch"), nullptr);
}

TEST(aggregated_log, a_gz_file_with_a_value_of_several_chunks) {
  auto log = parse_aggregated_log(golden("gz.tfile"));
  ASSERT_TRUE(log) << log.error().message();
  EXPECT_EQ(log->version, 1);
  EXPECT_EQ(log->owner, "tony");
  ASSERT_EQ(log->containers.size(), 2u);
  auto* am = log->find("container_1700000000000_0042_01_000001");
  ASSERT_NE(am, nullptr);
  ASSERT_EQ(am->files.size(), 1u);
  EXPECT_EQ(am->files[0].name, "am.log");
  EXPECT_EQ(am->files[0].content, "tony-am: started\ntony-am: job SUCCEEDED\n");
  auto* worker = log->find("container_1700000000000_0042_01_000002");
  ASSERT_NE(worker, nullptr);
  ASSERT_EQ(worker->files.size(), 3u); // in the order written: sorted by name
  EXPECT_EQ(worker->files[0].name, "executor.log");
  EXPECT_EQ(worker->files[1].name, "stderr");
  EXPECT_EQ(worker->files[2].name, "stdout");
  auto& big = worker->find("executor.log")->content;
  EXPECT_EQ(big.size(), 3145754u);
  EXPECT_EQ(big.substr(0, 30), "a line of a long executor log\n");
  EXPECT_EQ(big.substr(big.size() - 14), "the last line\n");
  EXPECT_EQ(worker->find("stderr")->content, "");
  EXPECT_EQ(worker->find("stdout")->content, "hello from worker:0\n");
  EXPECT_EQ(log->find("container_1700000000000_0042_01_000009"), nullptr);
}

TEST(aggregated_log, broken_files_are_refused_with_where) {
  auto bytes = golden("gz.tfile");
  auto short_file = parse_aggregated_log(bytes.substr(0, bytes.size() / 2));
  ASSERT_FALSE(short_file);
  EXPECT_NE(short_file.error().message().find("no TFile (BCFile) magic"),
            std::string::npos)
      << short_file.error().message();
  EXPECT_FALSE(parse_aggregated_log(""));
  EXPECT_FALSE(parse_aggregated_log("not a tfile at all, just some text of a log file"));
  // The meta index offset points nowhere.
  auto bad_offset = bytes;
  bad_offset[bad_offset.size() - 28] = '\x7f';
  auto refused = parse_aggregated_log(bad_offset);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("meta index offset"), std::string::npos)
      << refused.error().message();
  // A corrupt data block does not inflate.
  auto bad_block = bytes;
  for (size_t i = 100; i < 200; ++i)
    bad_block[i] = '\x55';
  auto not_inflated = parse_aggregated_log(bad_block);
  ASSERT_FALSE(not_inflated);
  EXPECT_NE(not_inflated.error().message().find("gz block"), std::string::npos)
      << not_inflated.error().message();
}

TEST(aggregated_log, other_compressions_are_named) {
  // The meta index (plain bytes) names the codec of the data index: make it
  // "lz" instead of "gz".
  auto lzo = golden("gz.tfile");
  auto meta = lzo.find("data:BCFile.index");
  ASSERT_NE(meta, std::string::npos);
  auto codec = meta + std::string("data:BCFile.index").size() + 1;
  ASSERT_EQ(lzo.substr(codec, 2), "gz");
  lzo.replace(codec, 2, "lz");
  auto refused = parse_aggregated_log(lzo);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("compressed with 'lz'"), std::string::npos)
      << refused.error().message();
}

TEST(aggregated_log, the_directories_of_each_hadoop_layout) {
  auto dirs = aggregated_log_dirs("hdfs://nn:8020/tmp/logs/", "alice", "logs",
                                  "application_1700000000000_10042");
  ASSERT_EQ(dirs.size(), 3u);
  EXPECT_EQ(dirs[0], "hdfs://nn:8020/tmp/logs/alice/bucket-logs-tfile/0042/"
                     "application_1700000000000_10042");
  EXPECT_EQ(dirs[1],
            "hdfs://nn:8020/tmp/logs/alice/logs-tfile/application_1700000000000_10042");
  EXPECT_EQ(dirs[2],
            "hdfs://nn:8020/tmp/logs/alice/logs/application_1700000000000_10042");
  auto own = aggregated_log_dirs("file:///x", "bob", "logs", "application_1_0007", "tf");
  EXPECT_EQ(own[0], "file:///x/bob/bucket-tf/0007/application_1_0007");
}

// A crafted block claiming 4 GiB from a few bytes is refused at once,
// before anything is allocated (the reader once allocated what it claimed).
TEST(aggregated_log, a_block_claiming_gigabytes_is_refused_before_inflating) {
  std::string small(100, 'x');
  auto start = std::chrono::steady_clock::now();
  auto claim = inflate_block(small, int64_t{4} << 30, 7);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
  ASSERT_FALSE(claim);
  EXPECT_NE(claim.error().message().find("claims 4294967296 bytes"), std::string::npos)
      << claim.error().message();
  EXPECT_NE(claim.error().message().find("at byte 7"), std::string::npos);
  // Within deflate's ratio but past the absolute cap.
  std::string mib(1 << 20, 'x');
  auto capped = inflate_block(mib, max_inflated_block + 1, 0);
  ASSERT_FALSE(capped);
  EXPECT_NE(capped.error().message().find("MiB"), std::string::npos);
  EXPECT_FALSE(inflate_block(small, -1, 0));
}
