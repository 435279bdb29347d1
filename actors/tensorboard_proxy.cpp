#include "actors/tensorboard_proxy.hpp"

#include <caf/all.hpp>

#include "messages/error.hpp"
#include "messages/type_ids.hpp"
#include "runtime/http/tracking_routes.hpp"

namespace tony {

namespace {

struct proxy_state {
  lifecycle_monitor_actor monitor;
  std::chrono::milliseconds timeout{3000};

  static inline const char* name = "tensorboard_proxy";
};

using proxy_pointer = tensorboard_proxy_actor::stateful_pointer<proxy_state>;

tensorboard_proxy_actor::behavior_type proxy_impl(proxy_pointer self,
                                                  lifecycle_monitor_actor monitor,
                                                  std::chrono::milliseconds timeout) {
  self->state.monitor = std::move(monitor);
  self->state.timeout = timeout;
  return {
      [=](status_atom) -> caf::result<job_status> {
        auto rp = self->make_response_promise<job_status>();
        self->request(self->state.monitor, self->state.timeout, status_atom_v)
            .then([rp](job_status& st) mutable { rp.deliver(std::move(st)); },
                  [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
        return rp;
      },
  };
}

// The facade the HTTP threads use: one bounded request per call.
class actor_source : public http::job_source {
public:
  actor_source(caf::actor_system& sys, tensorboard_proxy_actor proxy,
               std::chrono::milliseconds timeout)
      : sys_(sys)
      , proxy_(std::move(proxy))
      , timeout_(timeout) {
    // nop
  }

  caf::expected<job_status> status() override {
    caf::expected<job_status> result{
        make_error(errc::infrastructure, "the ApplicationMaster is shutting down")};
    caf::scoped_actor self{sys_};
    self->request(proxy_, timeout_ + std::chrono::milliseconds(500), status_atom_v)
        .receive([&](job_status& st) { result = std::move(st); },
                 [&](caf::error& err) {
                   result = make_error(errc::infrastructure,
                                       "the lifecycle monitor did not answer: " +
                                           sys_.render(err));
                 });
    return result;
  }

  bool live() const override { return true; }

private:
  caf::actor_system& sys_;
  tensorboard_proxy_actor proxy_;
  std::chrono::milliseconds timeout_;
};

} // namespace

tensorboard_proxy_actor spawn_tensorboard_proxy(caf::actor_system& sys,
                                                std::shared_ptr<http::http_server> server,
                                                lifecycle_monitor_actor monitor,
                                                tracking_options opts) {
  auto proxy = sys.spawn(proxy_impl, std::move(monitor), opts.status_timeout);
  auto source = std::make_shared<actor_source>(sys, proxy, opts.status_timeout);
  http::route_options routes;
  routes.public_base = opts.public_base;
  server->start([source, routes](const httplib::Request& req, const std::string& body,
                                 httplib::Response& res) {
    http::handle_job_request(*source, req.path, req, body, res, routes);
  });
  return proxy;
}

} // namespace tony
