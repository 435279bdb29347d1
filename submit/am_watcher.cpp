#include "submit/am_watcher.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "messages/error.hpp"
#include "messages/type_ids.hpp"
#include "runtime/gate/caf_bridge.hpp"

namespace tony {

namespace {

// Waits for the end, keeps the final status, says bye.
// Ends with the AM's connection (noting it is lost), or when the watcher goes.
void end_waiter(caf::event_based_actor* self, registry_actor registry,
                std::shared_ptr<am_watcher::end_box> box) {
  self->monitor(registry);
  self->set_down_handler([=](const caf::down_msg&) {
    std::lock_guard<std::mutex> guard{box->mtx};
    box->lost = true;
    self->quit();
  });
  self->request(registry, caf::infinite, wait_atom_v)
      .then(
          [=](job_status& st) {
            {
              std::lock_guard<std::mutex> guard{box->mtx};
              box->status = std::move(st);
            }
            self->send(registry, bye_atom_v);
            self->quit();
          },
          [=](caf::error&) { self->quit(); });
}

} // namespace

void am_watcher::forget() {
  if (waiter_)
    caf::anon_send_exit(waiter_, caf::exit_reason::user_shutdown);
  waiter_ = nullptr;
  registry_ = nullptr;
  std::lock_guard<std::mutex> guard{end_->mtx};
  end_->lost = false;
  end_->status.reset(); // an earlier AM's word is not the next one's end
}

bool am_watcher::lost() const {
  std::lock_guard<std::mutex> guard{end_->mtx};
  return end_->lost;
}

bool am_watcher::connect(const std::string& host, uint16_t port) {
  if (registry_ && (host != host_ || port != port_ || lost()))
    forget(); // the next attempt's AM, or the same address after a drop
  if (registry_)
    return true;
  if (!refusal_.empty() || secret_.empty())
    return false;
  auto r = gate::remote_actor<registry_actor>(sys_, host, port, secret_,
                                              std::chrono::seconds(5));
  if (r) {
    registry_ = *r;
    host_ = host;
    port_ = port;
  } else if (gate::is_final(r.error()))
    refusal_ = describe(r.error());
  return static_cast<bool>(registry_);
}

std::optional<job_status> am_watcher::poll(std::chrono::milliseconds timeout) {
  if (!registry_ || lost())
    return std::nullopt; // no wait on a dead connection
  std::optional<job_status> result;
  caf::scoped_actor self{sys_};
  self->request(registry_, timeout, status_atom_v)
      .receive([&](job_status& st) { result = std::move(st); }, [&](caf::error&) {});
  return result;
}

void am_watcher::watch_end() {
  if (!registry_ || waiter_)
    return;
  waiter_ = sys_.spawn(end_waiter, registry_, end_);
}

am_watcher::~am_watcher() {
  if (waiter_)
    caf::anon_send_exit(waiter_, caf::exit_reason::user_shutdown);
}

std::optional<job_status> am_watcher::final_status() const {
  std::lock_guard<std::mutex> guard{end_->mtx};
  return end_->status;
}

} // namespace tony
