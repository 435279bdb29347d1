#pragma once

// What tony-submit and ytf-submit do once their command lines are parsed:
// load the job (a job.toml, or a TonY / YARN-DTF translation), print it as
// job.toml (--print-toml) or refuse what cannot run yet, then submit and
// follow it. One path for both programs: same output, same exit codes.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compat/job_draft.hpp"
#include "submit/backend_choice.hpp"
#include "submit/submit.hpp"

namespace tony {

struct front_request {
  /// "tony-submit" or "ytf-submit", for messages.
  std::string program;
  /// Which command line `draft` came from (TonY's unless set); it decides
  /// the backend when nothing says (submit/backend_choice.hpp). Without a
  /// draft the job is a job.toml.
  front_end front = front_end::tony;
  /// The job file; empty when the job comes from `draft` alone.
  std::string job_file;
  /// A translated job (TonY, YARN-DTF), applied before `set_items`.
  const job_draft* draft = nullptr;
  /// Names the translated job in messages about it as a whole.
  std::string draft_name;
  /// The directory relative paths of a translated job are relative to.
  std::string base_dir;
  std::vector<std::string> set_items; // --set, in order
  std::string backend; // --backend, overrides [cluster] backend and TONY_BACKEND
  bool print_toml = false;
  /// --dry-run: print the resolved spec as JSON, submit nothing.
  bool dry_run = false;
  /// --output: "human" or "json" (one JSON event per line on stdout).
  std::string output = "human";
  /// ytf-submit --client: client:0's command and extra environment.
  std::optional<std::pair<std::string, std::map<std::string, std::string>>> client;
  submit_options opts;
};

/// Runs the request to its end; returns the program's exit code
/// (doc/operations.md).
int run_front(front_request& req);

/// The hint for `--set tony.KEY=VALUE` (TonY's key where a job.toml key
/// belongs), or empty when `item` is no TonY key.
std::string tony_key_hint(const std::string& item);

} // namespace tony
