// The job.toml reader checks the paths a job names through the file_probe
// its caller gives (config/file_probe.hpp), and through nothing else: here
// a fake file system, with answers the disk cannot give a root user.

#include "config/file_probe.hpp"

#include <cerrno>
#include <cstring>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "config/job_config.hpp"

using namespace tony;

namespace {

class fake_probe final : public file_probe {
public:
  std::map<std::string, kind> kinds;
  std::map<std::string, int> read_errors;
  mutable std::vector<std::string> asked;

  kind kind_of(const std::string& path) const override {
    asked.push_back(path);
    auto i = kinds.find(path);
    return i == kinds.end() ? kind::missing : i->second;
  }

  int read_error(const std::string& path) const override {
    asked.push_back(path);
    auto i = read_errors.find(path);
    return i == read_errors.end() ? 0 : i->second;
  }
};

std::vector<std::string> errors(const load_result& r) {
  std::vector<std::string> out;
  if (!r)
    for (auto& e : r.error())
      out.push_back(e.to_string());
  return out;
}

} // namespace

TEST(file_probe, a_job_loads_from_the_probes_answers_alone) {
  fake_probe fs;
  fs.kinds["/jobs/j"] = file_probe::kind::directory;
  fs.kinds["/jobs/j/venv.zip"] = file_probe::kind::file;
  fs.kinds["/jobs/j/conf"] = file_probe::kind::directory;
  auto r = load_job_text("[code]\ncommand = \"x\"\npython_venv = \"venv.zip\"\n"
                         "[cluster]\nhadoop_conf = \"conf\"\n[tasks.worker]\n",
                         "job.toml", "/jobs/j", {}, fs);
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->src_dir, "/jobs/j");
  EXPECT_EQ(r->python_venv, "/jobs/j/venv.zip");
  EXPECT_EQ(r->cluster.hadoop_conf, "/jobs/j/conf");
  EXPECT_EQ(fs.asked,
            (std::vector<std::string>{"/jobs/j/conf", "/jobs/j", "/jobs/j/venv.zip"}));
}

TEST(file_probe, each_path_check_says_what_the_probe_found) {
  fake_probe fs;
  fs.kinds["/jobs/j"] = file_probe::kind::directory;
  fs.kinds["/jobs/j/src"] = file_probe::kind::file;
  fs.kinds["/jobs/j/data.txt"] = file_probe::kind::other;
  fs.kinds["/jobs/j/a.zip"] = file_probe::kind::directory;
  auto r = load_job_text("[code]\ncommand = \"x\"\nsrc_dir = \"src\"\n"
                         "files = [\"data.txt\"]\narchives = [\"a.zip\"]\n"
                         "[tasks.worker]\n",
                         "job.toml", "/jobs/j", {}, fs);
  EXPECT_EQ(
      errors(r),
      (std::vector<std::string>{
          "job.toml:3:11: 'src_dir' \"src\" is not a directory (resolved to "
          "/jobs/j/src)",
          "job.toml:4:10: files[0] in [code] \"data.txt\" is neither a file nor a "
          "directory (resolved to /jobs/j/data.txt)",
          "job.toml:5:13: archives[0] in [code] \"a.zip\" must be an archive: .zip, "
          ".tar.gz, .tgz, .tar or .jar (resolved to /jobs/j/a.zip)"}));
}

TEST(file_probe, an_unreadable_keytab_or_ca_file_is_named_with_the_reason) {
  fake_probe fs;
  fs.kinds["/jobs/j"] = file_probe::kind::directory;
  fs.kinds["/jobs/j/a.keytab"] = file_probe::kind::file;
  fs.kinds["/jobs/j/ca.pem"] = file_probe::kind::file;
  fs.read_errors["/jobs/j/a.keytab"] = EACCES;
  fs.read_errors["/jobs/j/ca.pem"] = EIO;
  auto r =
      load_job_text("[code]\ncommand = \"x\"\n[tasks.worker]\n[security]\n"
                    "principal = \"a@R\"\nkeytab = \"a.keytab\"\nca_file = \"ca.pem\"\n",
                    "job.toml", "/jobs/j", {}, fs);
  EXPECT_EQ(errors(r), (std::vector<std::string>{
                           "job.toml:6:10: 'keytab' /jobs/j/a.keytab cannot be read: " +
                               std::string{std::strerror(EACCES)},
                           "job.toml:7:11: 'ca_file' /jobs/j/ca.pem cannot be read: " +
                               std::string{std::strerror(EIO)}}));
}

TEST(file_probe, a_missing_job_directory_is_reported_once) {
  fake_probe fs;
  auto r = load_job_text("[code]\ncommand = \"x\"\n[tasks.worker]\n", "job.toml", "/gone",
                         {}, fs);
  EXPECT_EQ(
      errors(r),
      (std::vector<std::string>{
          "job.toml: the job's directory /gone does not exist; set [code] src_dir"}));
}
