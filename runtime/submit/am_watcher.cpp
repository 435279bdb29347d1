#include "runtime/submit/am_watcher.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "messages/error.hpp"
#include "messages/type_ids.hpp"
#include "runtime/gate/caf_bridge.hpp"

namespace tony {

bool am_watcher::connect(const std::string& host, uint16_t port) {
  if (registry_)
    return true;
  if (!refusal_.empty() || secret_.empty())
    return false;
  auto r = gate::remote_actor<registry_actor>(sys_, host, port, secret_,
                                              std::chrono::seconds(5));
  if (r)
    registry_ = *r;
  else if (gate::is_final(r.error()))
    refusal_ = describe(r.error());
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
