// libFuzzer target: a tony.xml as tony-submit reads it for a TonY command
// line (--conf_file): Hadoop's XML reader (hadoop/configuration.cpp), the
// translation of TonY's keys (compat/tony_cli.cpp), and the job.toml
// loader the translated settings go through. The input is written to a
// private directory as tony.xml each time, since the translation reads a
// file. No input may crash, throw or abort; a bad file is a list of errors.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "compat/tony_cli.hpp"
#include "config/file_probe.hpp"
#include "config/job_config.hpp"

namespace {

using namespace tony;

class hashed_probe : public file_probe {
public:
  kind kind_of(const std::string& path) const override {
    return std::hash<std::string>{}(path) % 3 == 0 ? kind::missing : kind::directory;
  }
  int read_error(const std::string&) const override { return 0; }
};

std::string dir;

void remove_dir() {
  ::unlink((dir + "/tony.xml").c_str());
  ::rmdir(dir.c_str());
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ::unsetenv("TONY_CONF_DIR");
  char tmpl[] = "/tmp/fuzz-tony-xml-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr)
    std::abort();
  dir = tmpl;
  std::atexit(remove_dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto* f = std::fopen((dir + "/tony.xml").c_str(), "wb");
  if (f == nullptr || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0)
    std::abort();
  tony_cli_args args;
  args.conf_file = "tony.xml";
  auto draft = translate_tony(args, dir);
  if (!draft.errors.empty())
    return 0;
  hashed_probe probe;
  auto job = load_job_text_from("", "tony.xml", dir, draft.overrides, probe);
  if (!job && job.error().empty())
    std::abort(); // a failure says why
  return 0;
}
