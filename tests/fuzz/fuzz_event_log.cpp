// libFuzzer target: an event log as tony-history reads it back (show,
// list, serve): parse_event_log, then replay (the job's last status) and
// build_record (timeline and metrics for the page). No input may crash,
// throw or abort. Every event that parsed is written as a line again and
// must parse back.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime/history/event_log.hpp"
#include "runtime/history/job_record.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tony::history;
  std::string text{reinterpret_cast<const char*>(data), size};
  auto events = parse_event_log(text);
  if (!events)
    return 0;
  (void)replay(*events);
  (void)build_record(*events);
  for (auto& e : *events) {
    auto line = to_json_line(e);
    if (!event_from_json(line)) {
      std::fprintf(stderr, "a line written does not parse back: %s\n", line.c_str());
      std::abort();
    }
  }
  return 0;
}
