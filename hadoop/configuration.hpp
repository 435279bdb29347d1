#pragma once

// Hadoop's XML configuration (core-site.xml, yarn-site.xml) as far as a
// client needs it: properties, `final`, `${var}` expansion from other
// properties and `${env.NAME}` (with `${env.NAME:-fallback}`), and the
// defaults of the addresses tony reads. Later files override earlier ones
// unless the earlier value is final, as in Hadoop.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hadoop/expected.hpp"

namespace tony::hadoop {

class configuration {
public:
  /// The files read from a configuration directory, in order. Missing files
  /// are skipped (a conf dir may hold only yarn-site.xml).
  static const std::vector<std::string>& site_files();

  /// A configuration holding only the built-in defaults.
  configuration();

  /// Reads site_files() from `dir`. Fails if `dir` is not a directory or a
  /// file in it is malformed.
  static expected<configuration> load_dir(const std::string& dir);

  /// load_dir($HADOOP_CONF_DIR), else $YARN_CONF_DIR, else the defaults.
  static expected<configuration> from_environment();

  /// Adds the properties of one XML file.
  expected<void> add_file(const std::string& path);

  /// Adds hdfs-site.xml of the directory loaded first, when it has one (the
  /// clients that talk to HDFS: dfs.http.policy, NameNode addresses,
  /// nameservices).
  expected<void> add_hdfs_site();

  /// Adds the properties of XML text; `origin` names it in messages.
  expected<void> add_xml(std::string_view text, const std::string& origin);

  /// Sets a property programmatically (wins over files unless final).
  void set(const std::string& key, std::string value);

  /// The expanded value. not_found if the key is unset and has no default;
  /// invalid_input if expansion recurses too deep.
  expected<std::string> get(const std::string& key) const;

  /// The expanded value, or `fallback` if unset or unexpandable.
  std::string get_or(const std::string& key, const std::string& fallback) const;

  /// The value before expansion, if set anywhere (defaults included).
  const std::string* raw(const std::string& key) const;

  /// Every key set (defaults included), in order.
  std::vector<std::string> keys() const;

  /// Where a value came from: "yarn-site.xml:12", "default", "set()".
  std::string origin(const std::string& key) const;

  /// Expands `${...}` references in `text` (exposed for tests and callers
  /// with values from elsewhere).
  expected<std::string> expand(const std::string& text) const;

  /// The directories the properties were loaded from, for messages.
  const std::vector<std::string>& sources() const noexcept { return sources_; }

private:
  struct entry {
    std::string value;
    std::string origin;
    bool final = false;
  };

  void put(const std::string& key, std::string value, std::string origin, bool final);

  std::map<std::string, entry> props_;
  std::vector<std::string> sources_;
};

} // namespace tony::hadoop
