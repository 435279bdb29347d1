// job.toml's shipped files and archives, python_binary_path, src_dir = false,
// per-task capabilities, and the keys modelled but refused at submission
// (Docker images, tolerated failures); and the job written back as TOML.

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "config/disk_probe.hpp"
#include "config/job_config.hpp"
#include "config/job_json.hpp"
#include "config/job_toml.hpp"

using namespace tony;
namespace fs = std::filesystem;

namespace {

class job_files : public ::testing::Test {
protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "tony-files-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }

  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void write(const std::string& name, const std::string& text = "x") {
    auto path = fs::path{dir_} / name;
    fs::create_directories(path.parent_path());
    std::ofstream{path} << text;
  }

  load_result load(const std::string& text, std::vector<std::string> overrides = {}) {
    return load_job_text(text, "job.toml", dir_, overrides, disk_probe{});
  }

  job_spec ok(const std::string& text, std::vector<std::string> overrides = {}) {
    auto r = load(text, std::move(overrides));
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : to_string(r.error()));
    return r.ok() ? std::move(r).value() : job_spec{};
  }

  std::string error(const std::string& text, std::vector<std::string> overrides = {}) {
    auto r = load(text, std::move(overrides));
    EXPECT_FALSE(r.ok()) << "the job loaded";
    return r.ok() ? std::string{} : to_string(r.error());
  }

  std::string dir_;
};

std::string job(const std::string& code, const std::string& tail = "") {
  return "[code]\ncommand = \"python3 train.py\"\n" + code +
         "\n[tasks.worker]\ninstances = 2\n" + tail;
}

} // namespace

// -- files and archives -------------------------------------------------------------

TEST_F(job_files, files_and_archives_are_local_paths_or_hdfs_uris_with_names) {
  write("vocab.txt");
  write("data.zip");
  write("models/m1/weights.bin");
  auto spec = ok(job(R"(files = ["vocab.txt", { source = "models/m1", name = "model" },
         "hdfs:///data/dict.txt", { source = "viewfs://c/a/b.csv", name = "b" }]
archives = ["data.zip", { source = "hdfs://nn:8020/x/env.tar.gz", name = "env" }])"));
  ASSERT_EQ(spec.files.size(), 6u);
  EXPECT_EQ(spec.files[0], (shipped_file{dir_ + "/vocab.txt", "vocab.txt", false}));
  EXPECT_EQ(spec.files[1], (shipped_file{dir_ + "/models/m1", "model", false}));
  EXPECT_EQ(spec.files[2], (shipped_file{"hdfs:///data/dict.txt", "dict.txt", false}));
  EXPECT_EQ(spec.files[3], (shipped_file{"viewfs://c/a/b.csv", "b", false}));
  EXPECT_EQ(spec.files[4], (shipped_file{dir_ + "/data.zip", "data.zip", true}));
  EXPECT_EQ(spec.files[5], (shipped_file{"hdfs://nn:8020/x/env.tar.gz", "env", true}));
}

TEST_F(job_files, a_task_type_ships_its_own_files) {
  write("ps.conf");
  auto spec = ok(job("", "[tasks.ps]\nfiles = [\"ps.conf\"]\n"));
  EXPECT_TRUE(spec.files.empty());
  ASSERT_NE(spec.find("ps"), nullptr);
  EXPECT_EQ(spec.find("ps")->files,
            (std::vector<shipped_file>{{dir_ + "/ps.conf", "ps.conf", false}}));
}

TEST_F(job_files, a_missing_file_names_its_entry) {
  EXPECT_EQ(
      error(job("files = [\"nowhere.txt\"]")),
      "job.toml:3:10: files[0] in [code] \"nowhere.txt\" does not exist (resolved to " +
          dir_ + "/nowhere.txt)\n");
}

TEST_F(job_files, an_archive_must_be_one) {
  write("notes.txt");
  EXPECT_EQ(
      error(job("archives = [\"notes.txt\"]")),
      "job.toml:3:13: archives[0] in [code] \"notes.txt\" must be an archive: .zip, "
      ".tar.gz, .tgz, .tar or .jar (resolved to " +
          dir_ + "/notes.txt)\n");
}

TEST_F(job_files, other_schemes_are_refused) {
  EXPECT_EQ(
      error(job("files = [\"s3a://bucket/x\"]")),
      "job.toml:3:10: files[0] in [code] \"s3a://bucket/x\": tony ships local paths "
      "and hdfs:// or viewfs:// URIs\n");
}

TEST_F(job_files, names_are_plain_unique_and_not_tonys) {
  write("a/x.txt");
  write("b/x.txt");
  write("src.txt");
  EXPECT_EQ(
      error(job("files = [{ source = \"src.txt\", name = \"src\" }]")),
      "job.toml:3:10: files[0] in [code]: the name \"src\" is taken by tony or YARN "
      "in the working directory; give the entry another name with { source = ..., "
      "name = ... }\n");
  EXPECT_EQ(
      error(job("files = [{ source = \"src.txt\", name = \"a/b\" }]")),
      "job.toml:3:10: files[0] in [code]: the name \"a/b\" must be a plain file name "
      "(no '/' or control characters)\n");
  EXPECT_EQ(
      error(job("files = [\"a/x.txt\", \"b/x.txt\"]")),
      "job.toml: two shipped files are named \"x.txt\" (in [code] and [code]); give "
      "one another name with { source = ..., name = ... }\n");
  EXPECT_EQ(error(job("files = [{ source = \"a/x.txt\", nmae = \"y\" }]")),
            "job.toml:3:32: unknown key 'nmae' in files[0] in [code]; did you mean "
            "'name'?\n");
}

TEST_F(job_files, a_pex_or_a_remote_archive_is_a_venv) {
  write("env.pex");
  auto spec = ok(job("python_venv = \"env.pex\""));
  EXPECT_EQ(spec.python_venv, dir_ + "/env.pex");
  EXPECT_EQ(spec.venv_link_name(), "venv.pex");
  spec = ok(job("python_venv = \"hdfs:///envs/py.zip\""));
  EXPECT_EQ(spec.python_venv, "hdfs:///envs/py.zip");
  EXPECT_EQ(spec.venv_link_name(), "venv");
}

TEST_F(job_files, python_binary_path_is_kept_as_written) {
  auto spec = ok(job("python_binary_path = \"Python/bin/python\""));
  EXPECT_EQ(spec.python_binary_path, "Python/bin/python");
  EXPECT_NE(error(job("python_binary_path = \" \""))
                .find("'python_binary_path' must be a path"),
            std::string::npos);
}

TEST_F(job_files, src_dir_false_ships_no_directory) {
  EXPECT_EQ(ok(job("src_dir = false")).src_dir, "");
  EXPECT_EQ(
      error(job("src_dir = true")),
      "job.toml:3:11: 'src_dir' = true means nothing; give a directory, or false to "
      "ship none\n");
}

// -- per-task capabilities ------------------------------------------------------------

TEST_F(job_files, single_tasks_get_their_own_capability_and_priority) {
  auto spec = ok(job("", R"(memory = "4g"
[tasks.worker.index.1]
memory = "8g"
vcores = 2
[tasks.ps]
instances = 3
[tasks.ps.index.0]
gpus = 1
[tasks.ps.index.2]
gpus = 1
)"));
  auto& w = *spec.find("worker");
  auto& ps = *spec.find("ps");
  EXPECT_EQ(w.priority, 1);
  EXPECT_EQ(ps.priority, 2);
  EXPECT_EQ(w.capability_of(0), (resource{4096, 1, 0}));
  EXPECT_EQ(w.capability_of(1), (resource{8192, 2, 0}));
  EXPECT_EQ(w.priority_of(0), 1);
  EXPECT_EQ(w.priority_of(1), 3);
  // Equal capabilities share one priority.
  EXPECT_EQ(ps.priority_of(0), 4);
  EXPECT_EQ(ps.priority_of(1), 2);
  EXPECT_EQ(ps.priority_of(2), 4);
}

TEST_F(job_files, an_index_past_the_instances_is_refused) {
  EXPECT_EQ(error(job("", "[tasks.worker.index.2]\nmemory = \"8g\"\n")),
            "job.toml:6:21: 'index' keys in [tasks.worker] are task indexes from 0 to 1, "
            "got '2'\n");
}

// -- Docker ------------------------------------------------------------------------

TEST_F(job_files, docker_images_resolve_per_type_and_run) {
  auto spec = ok(job("", "docker_image = \"tensorflow/tensorflow:2.15.0\"\n[docker]\n"
                         "image = \"registry.local:5000/ml/base@sha256:"
                         "0123456789abcdef0123456789abcdef\"\n[tasks.ps]\n"));
  EXPECT_EQ(spec.find("worker")->docker_image, "tensorflow/tensorflow:2.15.0");
  EXPECT_EQ(spec.find("ps")->docker_image, spec.docker_image);
  EXPECT_EQ(spec.docker_network, "host");
  EXPECT_TRUE(unsupported_features(spec).empty());
  EXPECT_EQ(error(job("", "docker_image = \"Ubuntu:Latest\"\n")),
            "job.toml:6:16: 'docker_image' \"Ubuntu:Latest\" is not a Docker image name; "
            "write [registry[:port]/]name[:tag] with a lower-case name, e.g. "
            "\"tensorflow/tensorflow:2.15.0\"\n");
}

TEST_F(job_files, docker_mounts_network_and_run_options) {
  auto spec = ok(job("", "[docker]\nimage = \"a/b\"\nmounts = [\"/d:/d:ro\", \"/e:/f\"]\n"
                         "network = \"bridge\"\nrun_options = [\"--shm-size=1g\"]\n"));
  EXPECT_EQ(spec.docker_mounts, (std::vector<std::string>{"/d:/d:ro", "/e:/f"}));
  EXPECT_EQ(spec.docker_network, "bridge");
  EXPECT_EQ(spec.docker_run_options, (std::vector<std::string>{"--shm-size=1g"}));
  EXPECT_TRUE(unsupported_features(spec).empty()) << "run options apply locally";
  spec.cluster.backend = "yarn";
  auto missing = unsupported_features(spec);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].key, "docker.run_options");
  EXPECT_NE(missing[0].message.find("YARN's Docker runtime takes an image, mounts and a "
                                    "network"),
            std::string::npos);
  EXPECT_EQ(error(job("", "[docker]\nmounts = [\"data:/data\"]\n")),
            "job.toml:7:10: 'mounts' entry \"data:/data\" is not \"/host/path:/container/"
            "path\" with an optional \":ro\" or \":rw\"\n");
  EXPECT_EQ(
      error(job("", "[docker]\nmounts = [\"/a:/b:rx\"]\n")),
      "job.toml:7:10: 'mounts' entry \"/a:/b:rx\" has the mode \"rx\"; use ro or rw\n");
  EXPECT_EQ(error(job("", "[docker]\nnetwork = \"my net\"\n")),
            "job.toml:7:11: 'network' in [docker] is \"my net\"; name a Docker network: "
            "host (the default), bridge, none or one of your own\n");
  EXPECT_EQ(
      error(job("", "[docker]\nrun_options = [\"shm-size=1g\"]\n")),
      "job.toml:7:15: 'run_options' entry \"shm-size=1g\" is not an option of `docker "
      "run`; write one option per entry, e.g. \"--shm-size=1g\"\n");
}

TEST_F(job_files, docker_image_names_follow_dockers_grammar) {
  for (auto good :
       {"ubuntu", "ubuntu:22.04", "library/ubuntu", "tensorflow/tensorflow:2.15.0-gpu",
        "localhost:5000/a/b_c__d-e.f:tag", "Registry.Example.com/x/y:1",
        "ubuntu@sha256:0123456789abcdef0123456789abcdef"})
    EXPECT_TRUE(is_valid_docker_image(good)) << good;
  for (auto bad : {"", "Ubuntu", "ubuntu:", "ubuntu:la test", "a//b", "-a", "a-", "a:b:c",
                   "ubuntu@sha256:short", "x/../y", "a b"})
    EXPECT_FALSE(is_valid_docker_image(bad)) << bad;
}

TEST_F(job_files, tolerated_failures_are_no_unsupported_feature) {
  auto spec = ok(job("", "[policy]\ntolerated_failures = 1\n"));
  EXPECT_EQ(spec.policy.tolerated_failures, 1);
  EXPECT_TRUE(unsupported_features(spec).empty());
}

// -- written back as TOML -------------------------------------------------------------

TEST_F(job_files, a_rich_job_written_as_toml_loads_back_the_same) {
  write("vocab.txt");
  write("data.tgz");
  write("src/train.py");
  write("env.zip");
  auto original = ok(R"(name = "round \"trip\""
framework = "pytorch"
queue = "ml"
timeout = "1h30m"
tags = ["a", "b c"]
node_label = "gpu"
[code]
src_dir = "src"
command = "python3 train.py --lr 0.1 'x y'"
python_venv = "env.zip"
python_binary_path = "Python/bin/python"
files = ["vocab.txt", { source = "hdfs:///d/dict.txt", name = "dict" }]
archives = [{ source = "data.tgz", name = "data" }]
[env]
A = "1"
B = "multi\nline"
[data]
input_path = "hdfs:///in"
output_path = "/tmp/out"
[tasks.master]
memory = "3g"
command = "python3 train.py --master"
[tasks.worker]
instances = 3
vcores = 2
gpus = 1
node_label = "big"
sidecar = true
tracked = false
files = [{ source = "vocab.txt", name = "v2" }]
execution_timeout = "1h30m"
[tasks.worker.env]
W = "w"
[tasks.worker.index.2]
memory = "6g"
[tasks.ps]
tracked = true
placement = "pack"
max_per_node = 2
[tensorboard]
enabled = true
[am]
memory = "1g"
max_app_attempts = 2
[policy]
max_attempts = 3
stop_grace = "500ms"
heartbeat_timeout = "20s"
[cluster]
backend = "yarn"
staging_dir = "hdfs:///tmp/staging"
[cluster.local]
vcores = 16
)");
  auto text = to_toml(original, {"from a test", "two\nlines"});
  EXPECT_EQ(text.rfind("# from a test\n# two\n# lines\n", 0), 0u) << text;
  // Loaded from elsewhere, as a user keeps it.
  auto again = load_job_text(text, "elsewhere.toml", "/", {}, disk_probe{});
  ASSERT_TRUE(again.ok()) << to_string(again.error()) << "\n" << text;
  auto a = original;
  auto b = std::move(again).value();
  a.job_file.clear();
  b.job_file.clear();
  EXPECT_EQ(to_json(a, 2), to_json(b, 2)) << text;
}

TEST_F(job_files, a_job_without_src_dir_and_with_docker_round_trips) {
  auto original =
      ok(job("src_dir = false", "docker_image = \"a/b:1\"\n[docker]\nimage = \"c\"\n"
                                "[tasks.ps]\n[policy]\ntolerated_failures = 2\n"));
  auto again = load_job_text(to_toml(original), "job.toml", "/", {}, disk_probe{});
  ASSERT_TRUE(again.ok()) << to_string(again.error()) << "\n" << to_toml(original);
  auto a = original;
  auto b = std::move(again).value();
  a.job_file.clear();
  b.job_file.clear();
  EXPECT_EQ(to_json(a, 2), to_json(b, 2));
}
