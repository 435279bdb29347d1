#include "executor/task_layout.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "base/text.hpp"
#include "messages/error.hpp"

namespace fs = std::filesystem;

namespace tony {

namespace {

bool exists_no_follow(const fs::path& p) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(p, ec));
}

bool is_runnable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// The first few names in `dir`, for a message that shows what is there.
std::string listing(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = fs::directory_iterator{dir, ec}; !ec && it != fs::directory_iterator{};
       it.increment(ec))
    names.push_back(it->path().filename().string() + (it->is_directory(ec) ? "/" : ""));
  std::sort(names.begin(), names.end());
  std::string out;
  for (size_t i = 0; i < names.size() && i < 8; ++i)
    out += (i ? ", " : "") + names[i];
  if (names.size() > 8)
    out += ", ...";
  return out.empty() ? "nothing" : out;
}

error fail(std::string text) {
  return make_error(errc::invalid_config, std::move(text));
}

// One link per entry of src/, unless the name is taken.
expected<std::vector<std::string>> link_sources(const fs::path& here) {
  std::vector<std::string> shadowed;
  auto src = here / "src";
  std::error_code ec;
  if (!fs::is_directory(src, ec))
    return shadowed;
  for (auto it = fs::directory_iterator{src, ec}; !ec && it != fs::directory_iterator{};
       it.increment(ec)) {
    auto name = it->path().filename();
    if (exists_no_follow(here / name)) {
      shadowed.push_back(name.string());
      continue;
    }
    std::error_code link_ec;
    fs::create_symlink(fs::path{"src"} / name, here / name, link_ec);
    if (link_ec)
      return fail("cannot link src/" + name.string() + " into " + here.string() + ": " +
                  link_ec.message());
  }
  if (ec)
    return fail("cannot read " + src.string() + ": " + ec.message());
  return shadowed;
}

// The interpreter python_binary_path names, or the one the venv has.
expected<std::string> find_python(const fs::path& here, const std::string& given) {
  auto venv = here / "venv";
  auto pex = here / "venv.pex";
  std::error_code ec;
  if (fs::is_regular_file(pex, ec)) {
    if (!is_runnable(pex))
      return fail("python_venv (venv.pex) is not executable; build it with pex, which "
                  "makes it so, or chmod +x it before submitting");
    return pex.string();
  }
  bool has_venv = fs::is_directory(venv, ec);
  if (!given.empty()) {
    fs::path p{given};
    auto full = p.is_absolute() ? p : (has_venv ? venv : here) / p;
    if (is_runnable(full))
      return full.lexically_normal().string();
    std::string where = p.is_absolute() ? "on this node"
                        : has_venv      ? "in the unpacked python_venv"
                                        : "in the working directory (no python_venv)";
    auto what = fs::exists(full, ec) ? " is not an executable file " : " does not exist ";
    auto top = p.is_absolute() ? std::string{}
                               : "; " + std::string{has_venv ? "the venv" : "it"} +
                                     " holds: " + listing(has_venv ? venv : here);
    return fail("python_binary_path '" + given + "'" + what + where + " (" +
                full.lexically_normal().string() + ")" + top);
  }
  if (!has_venv)
    return std::string{};
  // TonY's zips have Python/bin/python or venv/bin/python at the top; a
  // plain archive of a venv has bin/ itself.
  std::vector<fs::path> dirs{venv / "bin"};
  for (auto it = fs::directory_iterator{venv, ec}; !ec && it != fs::directory_iterator{};
       it.increment(ec))
    if (it->is_directory(ec))
      dirs.push_back(it->path() / "bin");
  for (auto& dir : dirs)
    for (auto name : {"python3", "python"})
      if (is_runnable(dir / name))
        return (dir / name).string();
  return std::string{};
}

// `name` looked up in the directories of `path` (a PATH value).
std::string which(const std::string& name, const std::string& path) {
  size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find(':', start);
    if (end == std::string::npos)
      end = path.size();
    auto candidate = fs::path{path.substr(start, end - start)} / name;
    if (end > start && is_runnable(candidate))
      return candidate.string();
    start = end + 1;
  }
  return {};
}

// The interpreter a pex names in its #! line, found without .tony-bin: a
// pex whose line says `env python3` would otherwise start our own wrapper
// again.
std::string pex_interpreter(const fs::path& pex, const std::string& path) {
  std::ifstream in{pex, std::ios::binary};
  std::string line;
  std::getline(in, line);
  if (line.rfind("#!", 0) != 0)
    return which("python3", path);
  std::vector<std::string> words;
  std::string word;
  for (char c : line.substr(2) + " ") {
    if (c == ' ' || c == '\t' || c == '\r') {
      if (!word.empty())
        words.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (words.empty())
    return which("python3", path);
  if (fs::path{words[0]}.filename() == "env" && words.size() > 1)
    return which(words[1], path);
  return words[0];
}

// .tony-bin/python and python3 run `command` with the interpreter's path as
// invoked, so a venv's interpreter finds its pyvenv.cfg (a symlink would not).
expected<void> write_wrappers(const fs::path& bin, const std::string& command) {
  std::error_code ec;
  fs::create_directories(bin, ec);
  for (auto name : {"python", "python3"}) {
    auto path = bin / name;
    std::ofstream out{path, std::ios::trunc};
    out << "#!/bin/sh\nexec " << command << " \"$@\"\n";
    out.close();
    if (!out || ::chmod(path.c_str(), 0755) != 0)
      return fail("cannot write " + path.string());
  }
  return ok;
}

std::string prepend(const std::string& dir, const std::map<std::string, std::string>& env,
                    const char* var, const char* fallback) {
  auto i = env.find(var);
  auto rest = i == env.end() ? std::string{fallback} : i->second;
  return rest.empty() ? dir : dir + ":" + rest;
}

} // namespace

expected<task_layout> prepare_task_layout(const task_layout_input& in) {
  fs::path here{in.container_dir};
  task_layout out;
  out.work_dir = here.string();
  auto shadowed = link_sources(here);
  if (!shadowed)
    return shadowed.error();
  out.shadowed = std::move(*shadowed);
  auto python = find_python(here, in.python_binary_path);
  if (!python)
    return python.error();
  out.python = *python;
  if (!out.python.empty()) {
    auto bin = here / ".tony-bin";
    auto path = prepend(bin.string(), in.env, "PATH", "/usr/bin:/bin");
    auto command = base::shell_quote(out.python);
    if (out.python == (here / "venv.pex").string()) {
      auto skip = bin.string().size() + 1;
      auto base_path = path.size() > skip ? path.substr(skip) : std::string{};
      if (auto interp = pex_interpreter(out.python, base_path); !interp.empty())
        command = base::shell_quote(interp) + " " + command;
    }
    if (auto ok = write_wrappers(bin, command); !ok)
      return ok.error();
    // The venv's own bin directory too, for its other programs (tensorboard).
    auto dir = fs::path{out.python}.parent_path();
    if (out.python.rfind((here / "venv").string() + "/", 0) == 0)
      path = bin.string() + ":" + dir.string() + path.substr(bin.string().size());
    out.env["PATH"] = path;
  }
  // Shipped modules import from anywhere, as they did with tf-yarn and TonY
  // where the script ran next to them.
  if (!in.shipped.empty())
    out.env["PYTHONPATH"] = prepend(here.string(), in.env, "PYTHONPATH", "");
  return out;
}

} // namespace tony
