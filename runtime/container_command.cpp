#include "runtime/container_command.hpp"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>

#include "messages/error.hpp"

namespace tony {

namespace {

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  return out + "'";
}

// Variables of the host that mean nothing inside the image, that the
// container runtime sets itself, or that tell the runtime's client where
// its daemon is.
bool host_only(const std::string& name) {
  return name == "PATH" || name == "HOME" || name == "HOSTNAME" || name == "PWD" ||
         name == "OLDPWD" || name == "SHLVL" || name == "_" || name == "DOCKER_HOST" ||
         name == "DOCKER_CONTEXT" || name == "DOCKER_CONFIG" ||
         name == "DOCKER_CERT_PATH" || name == "DOCKER_TLS_VERIFY" ||
         name == "CONTAINER_HOST" || name == "CONTAINERS_CONF";
}

// The task's GPUs: NVIDIA_VISIBLE_DEVICES as the local pool set it ("0,2";
// "void" for a task without GPUs on a machine with some).
std::vector<std::string> gpu_ids_of(const std::map<std::string, std::string>& env) {
  std::vector<std::string> ids;
  auto i = env.find("NVIDIA_VISIBLE_DEVICES");
  if (i == env.end() || i->second == "void" || i->second == "none" || i->second == "all")
    return ids;
  std::string id;
  for (char c : i->second + ",") {
    if (c != ',') {
      id += c;
      continue;
    }
    if (!id.empty())
      ids.push_back(id);
    id.clear();
  }
  return ids;
}

bool is_podman(const std::string& program) {
  auto base = program.substr(program.rfind('/') + 1);
  return base.rfind("podman", 0) == 0;
}

// What `<program> info` says: its exit code and the last line it printed.
struct probe {
  int code = -1;
  std::string last_line;
};

probe run_info(const std::string& program) {
  probe out;
  auto cmd = "timeout 20 " + quote(program) + " info 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr)
    return out;
  char buf[512];
  std::string line;
  while (std::fgets(buf, sizeof(buf), p) != nullptr) {
    line = buf;
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
      line.pop_back();
    if (!line.empty())
      out.last_line = line;
  }
  auto status = ::pclose(p);
  out.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

} // namespace

std::vector<std::string> container_run_args(const std::string& program,
                                            const docker_contract& docker,
                                            const std::string& container_name,
                                            const std::string& work_dir,
                                            const std::map<std::string, std::string>& env,
                                            const std::string& command) {
  std::vector<std::string> args{"run", "--rm", "--init", "--name", container_name};
  args.push_back("--network=" + docker.network);
  args.push_back("-v");
  args.push_back(work_dir + ":" + work_dir);
  args.push_back("-w");
  args.push_back(work_dir);
  for (auto& m : docker.mounts) {
    args.push_back("-v");
    args.push_back(m);
  }
  auto gpus = docker.gpus ? gpu_ids_of(env) : std::vector<std::string>{};
  if (!gpus.empty()) {
    std::string ids;
    std::string inside;
    for (size_t k = 0; k < gpus.size(); ++k) {
      ids += (k ? "," : "") + gpus[k];
      inside += (k ? "," : "") + std::to_string(k);
    }
    if (is_podman(program)) {
      for (auto& id : gpus) {
        args.push_back("--device");
        args.push_back("nvidia.com/gpu=" + id);
      }
    } else {
      // Quoted: docker reads the value as CSV, where "device=0,1" would be
      // two fields.
      args.push_back("--gpus");
      args.push_back("\"device=" + ids + "\"");
    }
    args.push_back("-e");
    args.push_back("CUDA_VISIBLE_DEVICES=" + inside);
  }
  for (auto& [name, value] : env)
    if (!host_only(name) && !(!gpus.empty() && name == "CUDA_VISIBLE_DEVICES")) {
      args.push_back("-e");
      args.push_back(name);
    }
  args.insert(args.end(), docker.run_options.begin(), docker.run_options.end());
  args.push_back(docker.image);
  args.push_back("/bin/sh");
  args.push_back("-c");
  args.push_back(command);
  return args;
}

std::string shell_command(const std::string& program,
                          const std::vector<std::string>& args) {
  auto out = "exec " + quote(program);
  for (auto& a : args)
    out += " " + quote(a);
  return out;
}

expected<std::string> find_container_runtime(const std::string& image,
                                             const std::string& task) {
  std::vector<std::string> candidates{"docker", "podman"};
  if (auto forced = std::getenv("TONY_CONTAINER_RUNTIME"); forced && *forced)
    candidates = {forced};
  std::string answers;
  for (auto& program : candidates) {
    auto p = run_info(program);
    if (p.code == 0)
      return program;
    answers += "; `" + program + " info` " +
               (p.code == 127 ? std::string{"found no such program"}
                              : "exited " + std::to_string(p.code) +
                                    (p.last_line.empty() ? "" : ": " + p.last_line));
  }
  return make_error(errc::invalid_config,
                    task + " runs in the Docker image " + image +
                        ", but no container runtime can run it on this machine" +
                        answers +
                        ". Install and start Docker (or podman), set "
                        "TONY_CONTAINER_RUNTIME to one that works, run the job on "
                        "YARN, or remove the image ([docker] image, "
                        "[tasks.<type>] docker_image)");
}

} // namespace tony
