#include "submit/front.hpp"

#include <filesystem>
#include <iostream>

#include "compat/tony_cli.hpp"
#include "config/disk_probe.hpp"
#include "config/job_config.hpp"
#include "config/job_json.hpp"
#include "config/job_toml.hpp"
#include "config/setting_names.hpp"
#include "submit/backend_choice.hpp"
#include "submit/event_output.hpp"

namespace tony {

namespace {

load_result load(const front_request& req, const backend_choice& choice) {
  std::vector<job_override> overrides;
  if (req.draft != nullptr)
    overrides = req.draft->overrides;
  // The chosen backend (TONY_BACKEND, or where TonY's and YARN-DTF's tools
  // go), before --set: `--set cluster.backend=...` still says the last word.
  if (req.backend.empty() && !choice.backend.empty())
    overrides.push_back({"cluster.backend=\"" + choice.backend + "\"", choice.reason});
  for (auto& o : set_overrides(req.set_items))
    overrides.push_back(std::move(o));
  if (!req.backend.empty())
    overrides.push_back(
        {"cluster.backend=\"" + req.backend + "\"", "--backend " + req.backend});
  if (!req.job_file.empty())
    return load_job_from(req.job_file, overrides);
  // tony-submit and ytf-submit check the paths a job names on this disk.
  return load_job_text_from("", req.draft_name, req.base_dir, overrides, disk_probe{});
}

// Fails (exit 2) on a --set item that is TonY's; prints each error.
bool check_set_items(const front_request& req) {
  bool ok = true;
  for (auto& item : req.set_items)
    if (auto hint = tony_key_hint(item); !hint.empty()) {
      std::cerr << "--set " << item << ": " << hint << "\n";
      ok = false;
    }
  return ok;
}

std::vector<std::string> toml_comments(const front_request& req) {
  std::vector<std::string> out{"job.toml written by " + req.program + " --print-toml"};
  if (req.draft != nullptr)
    for (auto& n : req.draft->notes)
      out.push_back("note: " + n);
  return out;
}

// Features the job model holds but tony cannot run yet: refused, naming
// where each came from.
bool check_supported(const front_request& req, const job_spec& job, bool print) {
  auto missing = unsupported_features(job);
  for (auto& u : missing) {
    std::string origin;
    if (req.draft != nullptr)
      if (auto i = req.draft->origins.find(u.key); i != req.draft->origins.end())
        origin = " (from " + i->second + ")";
    std::cerr << req.program << (print ? ": note: " : ": ") << u.message << origin
              << "\n";
  }
  return missing.empty();
}

setting_words words_of(front_end front) {
  switch (front) {
  case front_end::tony:
    return setting_words::tony;
  case front_end::ytf:
    return setting_words::ytf;
  default:
    return setting_words::job_toml;
  }
}

} // namespace

std::string tony_key_hint(const std::string& item) {
  auto eq = item.find('=');
  auto key = item.substr(0, eq);
  if (key.rfind("tony.", 0) != 0)
    return {};
  // What the same setting is in job.toml: translate it alone.
  tony_cli_args args;
  args.conf = {item};
  auto draft = translate_tony(args, std::filesystem::current_path().string());
  std::string equivalent;
  for (auto& o : draft.overrides)
    if (o.label.rfind("--conf ", 0) == 0)
      equivalent += (equivalent.empty() ? "" : " ") + ("--set " + o.item);
  std::string hint = "tony.* keys are TonY's configuration; give them as --conf " + item +
                     " (tony-submit reads TonY's keys)";
  if (!equivalent.empty())
    hint += ", or as job.toml keys: " + equivalent;
  return hint;
}

int run_front(front_request& req) {
  if (!check_set_items(req))
    return exit_usage;
  if (req.draft != nullptr && !req.draft->errors.empty()) {
    std::cerr << to_string(req.draft->errors);
    return exit_usage;
  }
  auto front = req.draft == nullptr ? front_end::job_toml : req.front;
  auto inputs = backend_inputs_here(front, req.backend, req.opts.hadoop_conf);
  auto choice = choose_backend(inputs);
  if (!choice.error.empty()) {
    std::cerr << req.program << ": " << choice.error << "\n";
    return exit_usage;
  }
  auto job = load(req, choice);
  // Where the job goes, and why, first (doc/migrating.md).
  if (job && !req.print_toml && !req.opts.quiet)
    if (auto line = backend_line(inputs, choice, job->cluster.backend); !line.empty())
      std::cerr << req.program << ": " << line << "\n";
  if (req.draft != nullptr && !req.print_toml)
    for (auto& n : req.draft->notes)
      std::cerr << req.program << ": note: " << n << "\n";
  if (!job) {
    std::cerr << to_string(job.error());
    return exit_usage;
  }
  job->setting_names = setting_names_for(words_of(front), *job);
  if (req.print_toml) {
    std::cout << to_toml(*job, toml_comments(req));
    check_supported(req, *job, true);
    return exit_succeeded;
  }
  if (!check_supported(req, *job, false))
    return exit_usage;
  if (req.dry_run) {
    std::cout << to_json(*job) << std::endl;
    return exit_succeeded;
  }
  // --output json: stdout carries the events alone; every human line goes
  // to stderr instead.
  std::ostream json_out(std::cout.rdbuf());
  event_output events(json_out);
  if (req.output == "json") {
    std::cout.rdbuf(std::cerr.rdbuf());
    req.opts.events = &events;
  }
  std::optional<client_task> client;
  if (req.client) {
    client.emplace(req.client->first, req.client->second, *job);
    req.opts.client = &*client;
  }
  if (job->cluster.backend == "yarn")
    return submit_yarn(*job, req.opts);
  if (!req.opts.proxy_user.empty()) {
    std::cerr << req.program << ": --proxy-user " << req.opts.proxy_user
              << " (or HADOOP_PROXY_USER) submits for another user on YARN; the local "
                 "backend runs as you: drop it, or use --backend yarn\n";
    return exit_usage;
  }
  return submit_local(*job, req.opts);
}

} // namespace tony
