#pragma once

// NVIDIA's management library, loaded at run time. tony links nothing of
// NVIDIA's: a node without a driver (or without GPUs) simply has no NVML,
// and GPU metrics and the local backend's GPU pool are then empty.
//
// libnvidia-ml.so.1 is opened with dlopen (TONY_NVML_LIBRARY names another
// file, which the tests use for a fake library exporting the same
// functions). Only long-stable entry points are used: nvmlInit_v2,
// nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2,
// nvmlDeviceGetUtilizationRates, nvmlDeviceGetMemoryInfo,
// nvmlDeviceGetComputeRunningProcesses (its v1 record: pid, used memory)
// and nvmlShutdown.

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "messages/types.hpp"

namespace tony::metrics {

class nvml {
public:
  ~nvml();

  nvml(const nvml&) = delete;
  nvml& operator=(const nvml&) = delete;

  /// The library at `path` (empty: $TONY_NVML_LIBRARY, else
  /// libnvidia-ml.so.1), initialised; nullptr when it cannot be loaded or
  /// initialised, with the reason in `*why` (when given).
  static std::unique_ptr<nvml> load(const std::string& path = {},
                                    std::string* why = nullptr);

  /// Devices NVML sees; 0 when it cannot tell.
  int device_count();

  struct process_use {
    uint32_t pid = 0;
    int64_t used_bytes = -1; // -1: the driver does not say
  };

  struct device_state {
    int index = 0;
    float util_pct = 0;
    int64_t used_bytes = 0;
    int64_t total_bytes = 0;
    std::vector<process_use> processes;
  };

  /// Device `index` now; false when NVML cannot read it.
  bool read(int index, device_state& out);

private:
  struct api;
  explicit nvml(std::unique_ptr<api> fns);

  std::unique_ptr<api> api_;
};

/// The GPUs a task uses, sampled: every device running a compute process of
/// the task (`pids`), and every device in `visible` (its
/// CUDA_VISIBLE_DEVICES, when numeric) even before it touches one. The
/// memory is what the task's processes hold, or the device's use when the
/// driver does not report processes.
std::vector<gpu_sample> sample_gpus(nvml& lib, const std::vector<pid_t>& pids,
                                    const std::vector<int>& visible);

/// "0,2" -> {0, 2}; anything that is not a list of indices (UUIDs, "",
/// "all") -> {}.
std::vector<int> parse_device_list(const std::string& text);

/// The GPUs of this machine: NVML's count, else the entries of
/// /proc/driver/nvidia/gpus (`proc_dir` for tests), else 0.
int count_gpus(const std::string& proc_dir = "/proc/driver/nvidia/gpus");

} // namespace tony::metrics
