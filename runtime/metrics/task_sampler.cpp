#include "runtime/metrics/task_sampler.hpp"

#include <spdlog/spdlog.h>

#include "runtime/metrics/proc_tree.hpp"

namespace tony::metrics {

task_sampler::task_sampler(std::vector<int> visible_gpus)
    : visible_(std::move(visible_gpus)) {
  // nop
}

task_sampler::~task_sampler() {
  // nop
}

task_sampler::task_sampler(task_sampler&&) noexcept = default;

task_sampler& task_sampler::operator=(task_sampler&&) noexcept = default;

task_sample task_sampler::sample(pid_t root, pid_t pgid, int64_t now_ms) {
  task_sample result;
  auto all = read_processes();
  auto pids = tree_of(all, root, pgid);
  if (pids.empty())
    return result;
  auto usage = usage_of(all, pids);
  result.time_ms = now_ms;
  result.rss_bytes = usage.rss_bytes;
  result.processes = usage.processes;
  // CPU: ticks each live process used since the previous sample (all of a
  // new process's ticks), over the wall time between the samples.
  std::map<pid_t, uint64_t> ticks;
  uint64_t used = 0;
  for (auto pid : pids) {
    auto& p = all.at(pid);
    auto total = p.utime + p.stime;
    ticks[pid] = total;
    auto before = last_ticks_.find(pid);
    auto prev = before == last_ticks_.end() ? 0 : before->second;
    if (total > prev)
      used += total - prev;
  }
  if (last_ms_ > 0 && now_ms > last_ms_) {
    double seconds = static_cast<double>(now_ms - last_ms_) / 1000.0;
    result.cpu_cores =
        static_cast<float>(static_cast<double>(used) /
                           static_cast<double>(clock_ticks_per_second()) / seconds);
  }
  last_ticks_ = std::move(ticks);
  last_ms_ = now_ms;
  if (!nvml_tried_) {
    nvml_tried_ = true;
    std::string why;
    nvml_ = nvml::load({}, &why);
    if (nvml_)
      spdlog::info("tony-executor: NVML loaded: GPU metrics of {} devices",
                   nvml_->device_count());
    else
      spdlog::debug("tony-executor: no GPU metrics: {}", why);
  }
  if (nvml_)
    result.gpus = sample_gpus(*nvml_, pids, visible_);
  return result;
}

} // namespace tony::metrics
