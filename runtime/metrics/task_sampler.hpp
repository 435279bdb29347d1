#pragma once

// What an executor measures of its task: the command's process tree (its
// main process, every descendant, and its process group) — resident memory
// as YARN's physical-memory check counts it, CPU time per wall time, the
// number of processes — and, where NVML loads, the GPUs the tree uses.
// One sampler per task; each sample is compared with the previous one for
// the CPU figure.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "messages/types.hpp"
#include "runtime/metrics/nvml.hpp"

namespace tony::metrics {

class task_sampler {
public:
  /// `visible_gpus`: the task's CUDA_VISIBLE_DEVICES as indices (its GPUs
  /// are sampled even before it uses them). NVML is loaded on the first
  /// sample; without it samples carry no GPUs.
  explicit task_sampler(std::vector<int> visible_gpus = {});
  ~task_sampler();
  task_sampler(task_sampler&&) noexcept;
  task_sampler& operator=(task_sampler&&) noexcept;

  /// The tree under `root` (and group `pgid`) at `now_ms` (wall clock).
  /// An empty sample (time_ms 0) when `root` is gone.
  task_sample sample(pid_t root, pid_t pgid, int64_t now_ms);

private:
  std::vector<int> visible_;
  bool nvml_tried_ = false;
  std::unique_ptr<nvml> nvml_;
  std::map<pid_t, uint64_t> last_ticks_;
  int64_t last_ms_ = 0;
};

} // namespace tony::metrics
