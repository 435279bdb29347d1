#include "runtime/gate/caf_bridge.hpp"

#include <unistd.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/io/basp_broker.hpp>
#include <caf/io/network/multiplexer.hpp>
#include <caf/io/scribe.hpp>

#include "messages/error.hpp"
#include "runtime/gate/gate_session.hpp"

namespace tony::gate {

namespace {

caf::actor basp_broker_of(caf::actor_system& sys) {
  return sys.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
}

} // namespace

bool is_refusal(const error& err) {
  return err.code() == errc::bad_secret;
}

bool is_final(const error& err) {
  return is_refusal(err) || err.code() == errc::protocol;
}

published_gate::~published_gate() {
  if (listener_)
    listener_->stop();
}

expected<std::unique_ptr<published_gate>>
published_gate::publish(caf::actor_system& sys, caf::strong_actor_ptr whom,
                        std::set<std::string> sigs, const std::string& host,
                        uint16_t port, std::string secret, gate_options opts) {
  if (secret.empty())
    return make_error(errc::invalid_config, "the gate needs a job secret");
  auto key = std::make_shared<const std::string>(std::move(secret));
  auto basp = basp_broker_of(sys);
  auto& backend = sys.middleman().backend();
  std::unique_ptr<published_gate> result{new published_gate};
  // The published port, filled in after bind(): BASP's server handshake
  // names the actor published at the port the connection arrived on.
  auto public_port = std::make_shared<uint16_t>(0);
  listener_options lopts;
  lopts.name = "registry gate";
  lopts.max_pending = opts.max_pending;
  lopts.deadline = opts.deadline;
  lopts.evict_after = opts.evict_after;
  lopts.backlog = opts.backlog;
  auto specs = opts.specs;
  result->listener_ = std::make_unique<listener>(
      lopts, [key, offer = specs != nullptr] { return make_gate_session(key, offer); },
      [&backend, basp, whom, sigs, public_port, specs](int fd,
                                                       std::unique_ptr<session> s) {
        if (purpose_of(*s) == purpose::spec_channel) {
          specs->add(fd); // offered only where specs is set
          return;
        }
        // Creating a scribe only wraps the socket; the broker registers it
        // with the multiplexer when it handles the message.
        auto scribe = backend.new_scribe(fd);
        caf::anon_send(basp, caf::publish_atom_v, std::move(scribe), *public_port, whom,
                       sigs);
      });
  auto bound = result->listener_->bind(host, port);
  if (!bound)
    return bound.error();
  *public_port = *bound;
  result->listener_->start();
  return result;
}

expected<caf::strong_actor_ptr> remote_actor(caf::actor_system& sys,
                                             const std::string& host, uint16_t port,
                                             const std::string& secret,
                                             const std::set<std::string>& ifs,
                                             std::chrono::milliseconds timeout) {
  auto start = std::chrono::steady_clock::now();
  auto fd = connect_through_gate(host, port, secret, timeout);
  if (!fd)
    return fd.error();
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      timeout - (std::chrono::steady_clock::now() - start));
  if (left.count() < 100)
    left = std::chrono::milliseconds(100);
  auto scribe = sys.middleman().backend().new_scribe(*fd);
  auto where = host + ":" + std::to_string(port);
  expected<caf::strong_actor_ptr> result =
      make_error(errc::timeout, "the AM at " + where + " did not answer CAF's handshake");
  caf::scoped_actor self{sys};
  self->request(basp_broker_of(sys), left, caf::connect_atom_v, std::move(scribe), port)
      .receive(
          [&](caf::node_id&, caf::strong_actor_ptr& ptr, std::set<std::string>& sigs) {
            if (!ptr)
              result = make_error(errc::protocol, "the AM at " + where +
                                                      " publishes no actor at its gate");
            else if (!sys.assignable(sigs, ifs))
              result = make_error(errc::protocol,
                                  "the actor behind the gate at " + where +
                                      " has another interface (a tony of another "
                                      "version?)");
            else
              result = std::move(ptr);
          },
          [&](caf::error& err) {
            result = make_error(err == caf::sec::request_timeout ? errc::timeout
                                                                 : errc::infrastructure,
                                "CAF's handshake with the AM at " + where +
                                    " failed: " + sys.render(err));
          });
  return result;
}

} // namespace tony::gate
