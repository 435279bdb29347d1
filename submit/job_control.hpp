#pragma once

// tony-submit --status, --kill and --logs for an application id, on either
// backend. A local-backend job is found by its directory under the jobs dir
// (<jobs_dir>/<app>/: job.json, am.json while the AM runs, status.json once
// it ended, one directory of logs per container); anything else is asked of
// YARN (submit/yarn_query.cpp).
//
//   which backend   --backend if given; else local when <jobs_dir>/<app>
//                   exists; else YARN when a Hadoop configuration is known
//                   (--hadoop-conf, HADOOP_CONF_DIR, YARN_CONF_DIR, the
//                   hadoop command's); else an unknown id.
//
// Exit codes are tony-submit's (submit.hpp, doc/operations.md): 0 done,
// 2 unknown id / task / file or bad usage, 3 the AM or the RM cannot be
// reached.

#include <functional>
#include <optional>
#include <string>

#include "submit/submit.hpp"

namespace tony {

/// tony-submit --status APP [--json].
int status_command(const std::string& app_id, const submit_options& opts, bool json);

/// tony-submit --kill APP.
int kill_command(const std::string& app_id, const submit_options& opts);

/// tony-submit --logs APP [--task T] [--file F].
int logs_command(const std::string& app_id, const submit_options& opts,
                 const logs_request& req);

/// The local job dir of `app_id` under the jobs dir of `opts`, or empty when
/// there is none.
std::string local_job_dir(const std::string& app_id, const submit_options& opts);

/// True if `app_id` looks like application_<digits>_<digits>.
bool valid_app_id(const std::string& app_id);

/// Prints the logs of the tasks of `st` that `req` selects, reading each
/// file with `read` (nullopt: the file is not there). Returns the exit code.
int print_task_logs(const job_status& st, const logs_request& req,
                    const std::function<std::optional<std::string>(
                        const task_status&, const std::string&)>& read);

} // namespace tony
