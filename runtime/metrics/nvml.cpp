#include "runtime/metrics/nvml.hpp"

#include <dirent.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <set>

namespace tony::metrics {

namespace {

// The NVML types this file needs, as nvml.h declares them (stable ABI).
using nvml_return = int; // nvmlReturn_t: 0 is NVML_SUCCESS
constexpr nvml_return nvml_success = 0;
constexpr nvml_return nvml_insufficient_size = 7;
using nvml_device = void*; // nvmlDevice_t, an opaque pointer

struct nvml_utilization { // nvmlUtilization_t
  unsigned int gpu;
  unsigned int memory;
};

struct nvml_memory { // nvmlMemory_t
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct nvml_process_v1 { // nvmlProcessInfo_v1_t
  unsigned int pid;
  unsigned long long used_gpu_memory; // ~0ull: NVML_VALUE_NOT_AVAILABLE
};

} // namespace

struct nvml::api {
  void* handle = nullptr;
  nvml_return (*init)() = nullptr;
  nvml_return (*shutdown)() = nullptr;
  nvml_return (*count)(unsigned int*) = nullptr;
  nvml_return (*by_index)(unsigned int, nvml_device*) = nullptr;
  nvml_return (*utilization)(nvml_device, nvml_utilization*) = nullptr;
  nvml_return (*memory)(nvml_device, nvml_memory*) = nullptr;
  nvml_return (*processes)(nvml_device, unsigned int*, nvml_process_v1*) = nullptr;
};

namespace {

template <class F>
bool bind(void* handle, const char* name, F& fn) {
  fn = reinterpret_cast<F>(::dlsym(handle, name));
  return fn != nullptr;
}

} // namespace

nvml::nvml(std::unique_ptr<api> fns)
    : api_(std::move(fns)) {
  // nop
}

nvml::~nvml() {
  if (api_->shutdown)
    api_->shutdown();
  ::dlclose(api_->handle);
}

std::unique_ptr<nvml> nvml::load(const std::string& path, std::string* why) {
  auto fail = [why](std::string text) -> std::unique_ptr<nvml> {
    if (why)
      *why = std::move(text);
    return nullptr;
  };
  std::string file = path;
  if (file.empty())
    if (auto env = std::getenv("TONY_NVML_LIBRARY"); env && *env)
      file = env;
  if (file.empty())
    file = "libnvidia-ml.so.1";
  auto handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    auto err = ::dlerror();
    return fail("cannot load " + file + ": " + (err ? err : "unknown error"));
  }
  auto fns = std::make_unique<api>();
  fns->handle = handle;
  bool ok = bind(handle, "nvmlInit_v2", fns->init) &&
            bind(handle, "nvmlShutdown", fns->shutdown) &&
            bind(handle, "nvmlDeviceGetCount_v2", fns->count) &&
            bind(handle, "nvmlDeviceGetHandleByIndex_v2", fns->by_index) &&
            bind(handle, "nvmlDeviceGetUtilizationRates", fns->utilization) &&
            bind(handle, "nvmlDeviceGetMemoryInfo", fns->memory);
  // Optional: without it the task's share of a device's memory is unknown.
  bind(handle, "nvmlDeviceGetComputeRunningProcesses", fns->processes);
  if (!ok) {
    ::dlclose(handle);
    return fail(file + " lacks an NVML function tony needs");
  }
  if (auto rc = fns->init(); rc != nvml_success) {
    ::dlclose(handle);
    return fail("nvmlInit failed with NVML error " + std::to_string(rc) + " (" + file +
                ")");
  }
  return std::unique_ptr<nvml>(new nvml(std::move(fns)));
}

int nvml::device_count() {
  unsigned int n = 0;
  if (api_->count(&n) != nvml_success)
    return 0;
  return static_cast<int>(n);
}

bool nvml::read(int index, device_state& out) {
  nvml_device dev = nullptr;
  if (index < 0 || api_->by_index(static_cast<unsigned int>(index), &dev) != nvml_success)
    return false;
  out = device_state{};
  out.index = index;
  nvml_utilization util{};
  if (api_->utilization(dev, &util) == nvml_success)
    out.util_pct = static_cast<float>(util.gpu);
  nvml_memory mem{};
  if (api_->memory(dev, &mem) == nvml_success) {
    out.used_bytes = static_cast<int64_t>(mem.used);
    out.total_bytes = static_cast<int64_t>(mem.total);
  }
  if (!api_->processes)
    return true;
  // Ask with room for a few, grow once if the driver says it needs more.
  std::vector<nvml_process_v1> procs(16);
  auto n = static_cast<unsigned int>(procs.size());
  auto rc = api_->processes(dev, &n, procs.data());
  if (rc == nvml_insufficient_size && n > procs.size() && n < 65536) {
    procs.resize(n + 8);
    n = static_cast<unsigned int>(procs.size());
    rc = api_->processes(dev, &n, procs.data());
  }
  if (rc != nvml_success)
    return true;
  n = std::min<unsigned int>(n, static_cast<unsigned int>(procs.size()));
  for (unsigned int i = 0; i < n; ++i) {
    process_use use;
    use.pid = procs[i].pid;
    if (procs[i].used_gpu_memory != ~0ull)
      use.used_bytes = static_cast<int64_t>(procs[i].used_gpu_memory);
    out.processes.push_back(use);
  }
  return true;
}

std::vector<gpu_sample> sample_gpus(nvml& lib, const std::vector<pid_t>& pids,
                                    const std::vector<int>& visible) {
  std::vector<gpu_sample> result;
  std::set<pid_t> mine(pids.begin(), pids.end());
  std::set<int> wanted(visible.begin(), visible.end());
  auto count = lib.device_count();
  for (int i = 0; i < count; ++i) {
    nvml::device_state dev;
    if (!lib.read(i, dev))
      continue;
    bool used = false;
    bool known = false; // the driver reported the memory of our processes
    int64_t held = 0;
    for (auto& p : dev.processes) {
      if (mine.count(static_cast<pid_t>(p.pid)) == 0)
        continue;
      used = true;
      if (p.used_bytes >= 0) {
        known = true;
        held += p.used_bytes;
      }
    }
    if (!used && wanted.count(i) == 0)
      continue;
    gpu_sample s;
    s.index = i;
    s.util_pct = dev.util_pct;
    s.used_bytes = known ? held : (used ? dev.used_bytes : 0);
    s.total_bytes = dev.total_bytes;
    result.push_back(s);
  }
  return result;
}

std::vector<int> parse_device_list(const std::string& text) {
  std::vector<int> result;
  size_t pos = 0;
  while (pos <= text.size() && !text.empty()) {
    auto comma = text.find(',', pos);
    auto item =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos ||
        item.size() > 6)
      return {};
    result.push_back(std::atoi(item.c_str()));
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  return result;
}

int count_gpus(const std::string& proc_dir) {
  if (auto lib = nvml::load())
    if (auto n = lib->device_count(); n > 0)
      return n;
  int n = 0;
  if (auto dir = ::opendir(proc_dir.c_str())) {
    while (auto entry = ::readdir(dir))
      if (entry->d_name[0] != '.')
        ++n;
    ::closedir(dir);
  }
  return n;
}

} // namespace tony::metrics
