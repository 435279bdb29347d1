// libFuzzer target: one node's aggregated-log file (a TFile in YARN's
// AggregatedLogFormat) as tony-submit --logs reads it after a job: the
// BCFile index, the blocks (none and gz, inflated within their bounds) and
// the records. No input may crash, abort or allocate beyond the inflation
// bounds; a bad file is an error.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hadoop/yarn/aggregated_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tony::yarn;
  std::string_view bytes{reinterpret_cast<const char*>(data), size};
  auto log = parse_aggregated_log(bytes);
  if (!log)
    return 0;
  for (auto& c : log->containers)
    if (log->find(c.container_id) == nullptr)
      std::abort();
  size_t pos = 0;
  while (pos < bytes.size() && read_tfile_vlong(bytes, &pos)) {
  }
  return 0;
}
