#pragma once

// A job described in another tool's terms (TonY's command line and
// tony.xml, YARN-DTF's ytf-submit), translated into job.toml overrides.
//
// The translation does not build a job_spec itself: it writes `KEY=VALUE`
// overrides of an empty job document (or of a job.toml), each labelled with
// where the setting came from ("tony.xml:7:5: tony.worker.memory=4g",
// "-r ps:1,worker:2"), and the job loader checks them as it checks a job
// file. A bad value thus gets the loader's message, placed at the user's own
// flag or key.

#include <map>
#include <string>
#include <vector>

#include "config/config_error.hpp"
#include "config/job_config.hpp"

namespace tony {

struct job_draft {
  /// In order; later ones win, as `--set` does.
  std::vector<job_override> overrides;
  /// One line each: a setting tony reads differently, or ignores, and why.
  std::vector<std::string> notes;
  /// Settings that cannot be translated at all (unknown keys, unsupported
  /// features without a place in the job model, malformed input).
  std::vector<config_error> errors;
  /// job.toml key -> where it came from, for messages about the loaded job
  /// (unsupported features): "tasks.worker.docker_image" -> "tony.xml:9:5:
  /// tony.docker.worker.image".
  std::map<std::string, std::string> origins;

  /// Adds `key = value` (value a TOML value, e.g. "\"4g\"", "2", "true")
  /// labelled `label`; a repeated label gets a counter so each stays unique.
  void set(const std::string& key, const std::string& value, const std::string& label);

  /// `key` set to the TOML string holding `text`.
  void set_string(const std::string& key, const std::string& text,
                  const std::string& label);

  void note(std::string text) { notes.push_back(std::move(text)); }

  void error(const std::string& where, std::string message) {
    errors.push_back({where, 0, 0, std::move(message)});
  }
};

} // namespace tony
