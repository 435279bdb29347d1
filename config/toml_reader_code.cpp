// The job.toml reader: [code], shipped files and the local paths they name
// (see toml_reader.hpp).

#include "config/toml_reader.hpp"

#include <cstdlib>
#include <filesystem>

namespace tony::config_detail {

namespace fs = std::filesystem;

// `files` and `archives` of [code] or of a task type: each a path (local,
// or an hdfs:// / viewfs:// URI) or a table { source = "...", name = "..." }.
std::vector<shipped_file> job_reader::read_shipped(const toml::table& t,
                                                   const std::string& where) {
  std::vector<shipped_file> out;
  for (bool archive : {false, true}) {
    const char* key = archive ? "archives" : "files";
    auto* n = t.get(key);
    if (n == nullptr)
      continue;
    auto* arr = n->as_array();
    if (arr == nullptr) {
      type_error(*n, key, "an array of paths or { source = ..., name = ... } tables");
      continue;
    }
    for (size_t i = 0; i < arr->size(); ++i) {
      auto label = std::string{key} + "[" + std::to_string(i) + "] in " + where;
      // (*arr)[i], not *arr->get(i): get() may return null, and GCC's
      // -Wnull-dereference at -O2 says so (a release build failed).
      if (auto f = read_shipped_entry((*arr)[i], label, archive))
        out.push_back(std::move(*f));
    }
  }
  return out;
}

std::optional<shipped_file> job_reader::read_shipped_entry(const toml::node& n,
                                                           const std::string& label,
                                                           bool archive) {
  shipped_file f;
  f.archive = archive;
  if (auto* str = n.as_string()) {
    f.source = str->get();
  } else if (auto* tab = n.as_table()) {
    check_keys(*tab, label, {"source", "name"});
    auto source = read_string(*tab, "source");
    if (!source) {
      if (tab->get("source") == nullptr)
        error(n, label + " needs 'source', the path or URI to ship");
      return std::nullopt;
    }
    f.source = *source;
    if (auto name = read_string(*tab, "name"))
      f.name = *name;
  } else {
    error(n, label + " must be a path or a table { source = ..., name = ... }, got " +
                 type_name(n.type()));
    return std::nullopt;
  }
  if (!resolve_shipped_source(n, label, f))
    return std::nullopt;
  if (f.name.empty())
    f.name = base_name(f.source);
  if (auto why = bad_file_name(f.name); !why.empty()) {
    error(n, label + ": " + why);
    return std::nullopt;
  }
  return f;
}

// Makes a local source absolute and checks it; keeps a URI as written.
bool job_reader::resolve_shipped_source(const toml::node& n, const std::string& label,
                                        shipped_file& f) {
  if (f.source.empty() || f.source.find('\0') != std::string::npos) {
    error(n, label + " must not be empty");
    return false;
  }
  if (f.source.rfind("file://", 0) == 0)
    f.source = f.source.substr(7);
  if (has_uri_scheme(f.source)) {
    auto scheme = lower(f.source.substr(0, f.source.find("://")));
    if (scheme != "hdfs" && scheme != "viewfs") {
      error(n, label + " " + quote_text(f.source) +
                   ": tony ships local paths and hdfs:// or viewfs:// URIs");
      return false;
    }
    if (archive_kind(f.source).empty() && f.archive) {
      error(n, label + " " + quote_text(f.source) + " " + archive_suffix_hint);
      return false;
    }
    return true;
  }
  auto abs = absolute_path(f.source, base_dir_);
  auto st = probe_.kind_of(abs);
  if (st == file_probe::kind::missing) {
    error(n, label + " " + quote_text(f.source) + " does not exist (resolved to " + abs +
                 ")");
    return false;
  }
  if (f.archive && (st != file_probe::kind::file || archive_kind(abs).empty())) {
    error(n, label + " " + quote_text(f.source) + " " + archive_suffix_hint +
                 " (resolved to " + abs + ")");
    return false;
  }
  if (!f.archive && st != file_probe::kind::file && st != file_probe::kind::directory) {
    error(n, label + " " + quote_text(f.source) +
                 " is neither a file nor a directory (resolved to " + abs + ")");
    return false;
  }
  f.source = abs;
  return true;
}

std::string job_reader::base_name(const std::string& source) {
  auto path = source;
  if (auto scheme = path.find("://"); scheme != std::string::npos) {
    auto slash = path.find('/', scheme + 3);
    path = slash == std::string::npos ? std::string{} : path.substr(slash);
  }
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  return fs::path{path}.filename().string();
}

// Why `name` cannot name a shipped file, or empty.
std::string job_reader::bad_file_name(const std::string& name) {
  if (name.empty() || name == "." || name == "..")
    return "the name " + quote_text(name) + " is not a file name";
  if (name.find('/') != std::string::npos || has_control_chars(name))
    return "the name " + quote_text(name) +
           " must be a plain file name (no '/' or control characters)";
  if (is_reserved_file_name(name))
    return "the name " + quote_text(name) +
           " is taken by tony or YARN in the working directory; give the entry "
           "another name with { source = ..., name = ... }";
  return {};
}

void job_reader::read_code(const toml::table& t) {
  check_keys(
      t, "[code]",
      {"src_dir", "command", "python_venv", "python_binary_path", "files", "archives"});
  if (auto cmd = read_string(t, "command")) {
    if (is_blank(*cmd))
      error(*t.get("command"), "'command' in [code] must not be empty");
    else
      spec_.command = *cmd;
  }
  default_command_broken_ = t.get("command") != nullptr && spec_.command.empty();
  if (auto* b = t.get_as<bool>("src_dir")) {
    // false: ship no directory (a job of shipped files, or code on the nodes).
    if (b->get())
      error(*b, "'src_dir' = true means nothing; give a directory, or false to ship "
                "none");
    else
      no_src_dir_ = true;
  } else if (auto dir = read_string(t, "src_dir")) {
    if (dir->empty())
      error(*t.get("src_dir"), "'src_dir' must not be empty; leave it out to ship "
                               "the job file's directory");
    else
      src_dir_given_ = *dir;
  }
  if (auto venv = read_string(t, "python_venv")) {
    if (venv->empty())
      error(*t.get("python_venv"), "'python_venv' must not be empty");
    else
      venv_given_ = *venv;
  }
  if (auto python = read_string(t, "python_binary_path")) {
    if (is_blank(*python) || has_control_chars(*python))
      error(*t.get("python_binary_path"),
            "'python_binary_path' must be a path (relative to the unpacked "
            "python_venv, or absolute), got " +
                quote_text(*python));
    else
      spec_.python_binary_path = *python;
  }
  spec_.files = read_shipped(t, "[code]");
}

void job_reader::resolve_code(const toml::table* code) {
  spec_.job_file = absolute_path(fs::path{file_}.filename().string(), base_dir_);
  if (no_src_dir_) {
    spec_.src_dir.clear();
  } else if (src_dir_given_) {
    auto abs = absolute_path(*src_dir_given_, base_dir_);
    auto& node = *code->get("src_dir");
    auto st = probe_.kind_of(abs);
    if (st == file_probe::kind::missing)
      error(node, "'src_dir' " + quote_text(*src_dir_given_) +
                      " does not exist (resolved to " + abs + ")");
    else if (st != file_probe::kind::directory)
      error(node, "'src_dir' " + quote_text(*src_dir_given_) +
                      " is not a directory (resolved to " + abs + ")");
    else
      spec_.src_dir = abs;
  } else {
    spec_.src_dir = absolute_path(".", base_dir_);
    if (probe_.kind_of(spec_.src_dir) != file_probe::kind::directory)
      file_error("the job's directory " + spec_.src_dir +
                 " does not exist; set [code] src_dir");
  }
  if (venv_given_)
    resolve_venv(*code->get("python_venv"), *venv_given_);
  if (spec_.cluster.jobs_dir.empty()) {
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
      spec_.cluster.jobs_dir = absolute_path(std::string{home} + "/.tony/jobs", "/");
  }
}

void job_reader::resolve_venv(const toml::node& node, const std::string& given) {
  auto venv = given.rfind("file://", 0) == 0 ? given.substr(7) : given;
  auto kind = lower(venv);
  bool pex = ends_with(kind, ".pex");
  if (!pex && !ends_with(kind, ".zip") && !ends_with(kind, ".tar.gz") &&
      !ends_with(kind, ".tgz")) {
    error(node, "'python_venv' " + quote_text(given) +
                    " must be a .zip, .tar.gz or .tgz archive");
    return;
  }
  if (has_uri_scheme(venv)) {
    auto scheme = lower(venv.substr(0, venv.find("://")));
    if (scheme == "hdfs" || scheme == "viewfs")
      spec_.python_venv = venv;
    else
      error(node, "'python_venv' " + quote_text(given) +
                      ": tony ships local paths and hdfs:// or viewfs:// URIs");
    return;
  }
  auto abs = absolute_path(venv, base_dir_);
  auto st = probe_.kind_of(abs);
  if (st == file_probe::kind::missing)
    error(node, "'python_venv' " + quote_text(given) + " does not exist (resolved to " +
                    abs + ")");
  else if (st != file_probe::kind::file)
    error(node, "'python_venv' " + quote_text(given) + " is not a file (resolved to " +
                    abs + ")");
  else
    spec_.python_venv = abs;
}

} // namespace tony::config_detail
