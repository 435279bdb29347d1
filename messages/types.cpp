#include "messages/types.hpp"

namespace tony {

std::string to_string(const task_id& x) {
  return x.type + ":" + std::to_string(x.index);
}

std::string to_string(const resource& x) {
  auto result = std::to_string(x.memory_mb) + " MiB, " + std::to_string(x.vcores)
                + " vcores";
  if (x.gpus > 0)
    result += ", " + std::to_string(x.gpus) + " GPUs";
  return result;
}

bool is_final(const job_status& x) {
  return x.state == "SUCCEEDED" || x.state == "FAILED" || x.state == "KILLED";
}

} // namespace tony
