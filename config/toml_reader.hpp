#pragma once

// The job.toml reader, inside config/ only (job_config.hpp is the public
// face). It walks the merged TOML document (the file, then the --set
// overrides) into a job_spec and attaches to each problem where it is: the
// file's line and column, or the --set item. The bounds of numbers are the
// job model's rules (config/validate.hpp); the reader only reads and
// places.
//
// One class, its members defined by job.toml section:
//   toml_reader.cpp           loading, positions, --set overrides, typed reads
//                             (read_int, read_memory, read_duration, ...)
//   toml_reader_sections.cpp  the top level and [docker], [data],
//                             [tensorboard], [am], [policy], [cluster],
//                             [security]
//   toml_reader_code.cpp      [code] and shipped files, and the paths they
//                             name (src_dir, python_venv)
//   toml_reader_tasks.cpp     [tasks.<type>] and the rules over the whole job
//   toml_text.cpp             the text helpers below
//
// A new key: add its name to the section's check_keys list (read_root for a
// new top-level table), read it in that section's read_* with the typed
// readers, store it in job_spec (config/job_spec.hpp); a bound or a relation
// with another value goes in config/validate.{hpp,cpp}; then job_json.cpp
// (to_json and job_from_json), job_toml.cpp (to_toml) and doc/job-toml.md.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "base/text.hpp"
#include "config/config_error.hpp"
#include "config/file_probe.hpp"
#include "config/job_config.hpp"
#include "config/job_spec.hpp"
#include "config/units.hpp"
#include "config/validate.hpp"

namespace tony::config_detail {

// -- text helpers (toml_text.cpp) ---------------------------------------------

const char* type_name(toml::node_type t);

// User text echoed in a message: escaped and cut so one bad value cannot
// flood the terminal or hide in control characters.
std::string quote_text(std::string_view s);

// Same, inside single quotes, for names (keys, task types).
std::string quote_name(std::string_view s);

using base::join;

bool has_control_chars(std::string_view s);

bool is_valid_env_name(std::string_view s);

bool is_valid_node_label(std::string_view s);

using base::trim;

bool is_blank(std::string_view s);

// 1-based line and column of byte `offset` in `text`.
std::pair<int, int> position_of(std::string_view text, size_t offset);

// Offset of the first byte that breaks UTF-8, or npos.
size_t first_invalid_utf8(std::string_view s);

// `path` made absolute against `base`, with "~/" expanded; no symlinks are
// resolved, so the user recognizes the path in messages.
std::string absolute_path(const std::string& path, const std::string& base);

bool has_uri_scheme(std::string_view s);

// primary[/instance][@REALM]: no blanks or control characters, no empty
// part, one '@' at most.
bool is_kerberos_principal(std::string_view s);

// Why `uri` is not an hdfs://host[:port] namenode URI ("" when it is).
std::string file_system_problem(std::string_view uri);

bool ends_with(std::string_view s, std::string_view suffix);

using base::lower;

// "zip" or "tar" for the archives YARN unpacks (FSDownload), else empty.
std::string archive_kind(std::string_view path);

// The closest candidate within a typo's reach, or empty.
template <class Candidates>
std::string closest(std::string_view word, const Candidates& candidates) {
  std::string best;
  size_t best_d = std::string::npos;
  for (auto& c : candidates) {
    auto d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = std::string{c};
    }
  }
  size_t reach = word.size() >= 5 ? 2 : 1;
  return best_d <= reach ? best : std::string{};
}

// -- the reader ---------------------------------------------------------------

// Walks the merged TOML document into a job_spec, collecting errors. Each
// error is placed by the source region of the offending node: the job file
// with line and column, or the `--set` item the node came from.
class job_reader {
public:
  job_reader(std::string file, std::string base_dir, const file_probe& probe)
      : file_(std::move(file))
      , base_dir_(std::move(base_dir))
      , probe_(probe) {
    // Empty source paths would make overrides and file indistinguishable.
    if (file_.empty())
      file_ = "job.toml";
  }

  // -- loading, positions, overrides, typed reads (toml_reader.cpp) ---------

  // -- entry points -----------------------------------------------------------

  load_result load(std::string_view text, const std::vector<job_override>& overrides);

private:
  // -- error reporting --------------------------------------------------------

  bool from_override(const toml::source_region& src) const;

  bool is_override_label(const std::string& label) const;

  size_t override_index(const std::string& label) const;

  void error(const toml::source_region& src, std::string msg);

  void error(const toml::node& n, std::string msg) { error(n.source(), std::move(msg)); }

  void file_error(std::string msg) { errors_.push_back({file_, 0, 0, std::move(msg)}); }

  load_result finish();

  // -- overrides --------------------------------------------------------------

  void apply_override(toml::table& root, const std::string& item,
                      const std::string& label);

  static bool single_chain(const toml::table& t);

  void merge(toml::table& into, toml::table&& from, const std::string& label,
             const std::string& path);

  // -- typed access -----------------------------------------------------------

  void check_keys(const toml::table& t, const std::string& where,
                  std::initializer_list<std::string_view> known);

  void type_error(const toml::node& n, std::string_view key, std::string_view expected);

  std::optional<std::string> read_string(const toml::table& t, std::string_view key);

  std::optional<bool> read_bool(const toml::table& t, std::string_view key);

  std::optional<int64_t> read_int(const toml::table& t, std::string_view key,
                                  bounds range);

  std::optional<int64_t> read_memory(const toml::table& t, std::string_view key);

  std::optional<int64_t> read_duration(const toml::table& t, std::string_view key,
                                       bounds range);

  std::optional<std::vector<std::string>> read_strings(const toml::table& t,
                                                       std::string_view key);

  const toml::table* read_table(const toml::table& t, std::string_view key,
                                const std::string& name);

  std::map<std::string, std::string> read_env(const toml::table& t,
                                              const std::string& where);

  // -- [code] and shipped files (toml_reader_code.cpp) ---------------------

  void read_code(const toml::table& t);

  std::vector<shipped_file> read_shipped(const toml::table& t, const std::string& where);

  std::optional<shipped_file> read_shipped_entry(const toml::node& n,
                                                 const std::string& label, bool archive);

  bool resolve_shipped_source(const toml::node& n, const std::string& label,
                              shipped_file& f);

  static constexpr const char* archive_suffix_hint =
      "must be an archive: .zip, .tar.gz, .tgz, .tar or .jar";

  static std::string base_name(const std::string& source);

  static std::string bad_file_name(const std::string& name);

  void resolve_code(const toml::table* code);

  void resolve_venv(const toml::node& node, const std::string& given);

  // -- the other sections (toml_reader_sections.cpp) -------------------------

  void read_root(const toml::table& root);

  void read_identity(const toml::table& root);

  void read_docker(const toml::table& t);

  static std::string docker_mount_problem(const std::string& m);

  std::string read_docker_image(const toml::node& n, std::string_view key,
                                const std::string& image);

  std::string read_node_label(const toml::node& n, const std::string& label);
  void read_task_placement(const toml::table& t, const std::string& where,
                           task_type_spec& s);

  void read_data(const toml::table& t);

  void read_tensorboard(const toml::table& t);

  void read_am(const toml::table& t);

  void read_policy(const toml::table& t);

  void read_cluster(const toml::table& t);

  void read_security(const toml::table& t);

  // -- [tasks.<type>] and the whole job (toml_reader_tasks.cpp) --------------

  struct task_entry {
    task_type_spec spec;
    const toml::table* table = nullptr;
    bool has_command = false;
    std::optional<bool> tracked;
    std::optional<bool> sidecar;
    bool docker_image_given = false;
    std::optional<restart_policy> restart;
    std::optional<int32_t> max_restarts;
    const toml::node* elastic = nullptr; // the elastic table, when valid
  };

  void read_tasks(const toml::table& tasks);

  task_entry read_task(const std::string& name, const toml::table& t,
                       const std::string& where);

  void read_task_indexes(const toml::table& t, task_type_spec& s,
                         const std::string& where);

  void read_task_policy(const toml::table& t, const std::string& where, task_entry& e);

  static int32_t signal_number(const std::string& name);

  void resolve_tensorboard();

  void resolve_chief_tensorboard(bool declared);

  void resolve_rendezvous();

  void resolve_policy(task_entry& e, const std::string& where);

  void check_lifecycle();

  static int order_rank(const std::string& name);

  void check_job();

  void check_file_names(const task_entry& e);

  void assign_priorities();

  // -- state ------------------------------------------------------------------

  std::string file_;
  std::string base_dir_;
  const file_probe& probe_; // the paths the job names are checked through it
  std::vector<config_error> errors_;
  std::vector<std::string> override_labels_;
  job_spec spec_;
  std::vector<task_entry> entries_;
  bool default_command_broken_ = false;
  std::optional<std::string> src_dir_given_;
  std::optional<std::string> venv_given_;
  bool no_src_dir_ = false;
  const toml::table* tensorboard_table_ = nullptr;
};

} // namespace tony::config_detail
