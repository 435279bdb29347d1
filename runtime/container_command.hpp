#pragma once

// A task's command in a container on the local backend (doc/docker.md): the
// executor stays on the host (it reserves the port, talks to the AM, kills
// the command's process group) and runs
//
//   <docker|podman> run --rm --init --name tony-<container id>
//       --network <network> -v <work dir>:<work dir> -w <work dir>
//       -v <mount>... [<GPUs>] -e <NAME>... <run options>... <image>
//       /bin/sh -c <command>
//
// with the task's environment as the client's own, so `-e NAME` passes each
// value without putting it on a command line. The task's GPUs of the local
// pool (NVIDIA_VISIBLE_DEVICES), on a machine that has GPUs: docker's
// `--gpus "device=<ids>"` or podman's CDI `--device nvidia.com/gpu=<id>`
// each, and `-e CUDA_VISIBLE_DEVICES=0,...` (the container numbers its
// GPUs from 0). On YARN the NodeManager's
// Docker runtime runs the whole container in the image instead (the yarn
// backend sets YARN_CONTAINER_RUNTIME_*; am/yarn_backend.cpp).

#include <map>
#include <string>
#include <vector>

#include "messages/error.hpp"
#include "runtime/launch_context.hpp"

namespace tony {

/// The arguments of the `run` command (after the program's name) for the
/// runtime `program` (a path or name: podman's GPU flags differ).
std::vector<std::string> container_run_args(const std::string& program,
                                            const docker_contract& docker,
                                            const std::string& container_name,
                                            const std::string& work_dir,
                                            const std::map<std::string, std::string>& env,
                                            const std::string& command);

/// One shell command line of `program` and `args`, each quoted for /bin/sh.
std::string shell_command(const std::string& program,
                          const std::vector<std::string>& args);

/// A container runtime that can run containers here: $TONY_CONTAINER_RUNTIME
/// when set, else `docker`, else `podman`, each checked with `<program>
/// info` (a docker client without its daemon cannot run anything). When
/// none can, errc::invalid_config saying what each answered and what to do.
expected<std::string> find_container_runtime(const std::string& image,
                                             const std::string& task);

} // namespace tony
