#include "runtime/submit/am_watcher.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "messages/type_ids.hpp"

namespace tony {

bool am_watcher::connect(const std::string& host, uint16_t port) {
  if (registry_)
    return true;
  auto r = sys_.middleman().remote_actor<registry_actor>(host, port);
  if (r)
    registry_ = *r;
  return static_cast<bool>(registry_);
}

std::optional<job_status> am_watcher::poll(std::chrono::milliseconds timeout) {
  if (!registry_)
    return std::nullopt;
  std::optional<job_status> result;
  caf::scoped_actor self{sys_};
  self->request(registry_, timeout, status_atom_v)
      .receive([&](job_status& st) { result = std::move(st); }, [&](caf::error&) {});
  return result;
}

} // namespace tony
