#include "runtime/yarn/yarn_rm_actor.hpp"

#include <caf/all.hpp>

#include "messages/error.hpp"
#include "messages/type_ids.hpp"

namespace tony::yarn {

caf::error to_caf_error(const hadoop::error& err) {
  auto code = err.code() == hadoop::error_code::timeout    ? errc::timeout
              : err.code() == hadoop::error_code::protocol ? errc::protocol
                                                           : errc::infrastructure;
  return caf_error(code, err.message());
}

namespace {

// The RM no longer knows this AM attempt: it says so
// (ApplicationAttemptNotFoundException), or it refused the registration the
// AM made again when told to resync (amrm_client::reregister), which an RM
// that failed over or restarted with its state does not.
bool attempt_gone(const hadoop::error& err) {
  return err.is_remote("ApplicationAttemptNotFoundException") ||
         (err.code() == hadoop::error_code::remote &&
          err.message().find("registering again failed") != std::string::npos);
}

} // namespace

rm_client_actor spawn_yarn_rm(caf::actor_system& sys, std::shared_ptr<amrm_client> client,
                              std::chrono::milliseconds call_timeout) {
  auto impl = [](rm_client_actor::pointer, std::shared_ptr<amrm_client> client,
                 std::chrono::milliseconds timeout) -> rm_client_actor::behavior_type {
    return {
        [=](register_atom, const am_registration& reg) -> caf::result<rm_registration> {
          auto res =
              client->register_application_master(reg, hadoop::deadline_after(timeout));
          if (!res)
            return to_caf_error(res.error());
          return std::move(*res);
        },
        [=](allocate_atom,
            const allocate_request& req) -> caf::result<allocate_response> {
          auto res = client->allocate(req, hadoop::deadline_after(timeout));
          if (!res && attempt_gone(res.error()))
            return attempt_gone_error("the resource manager no longer knows this AM "
                                      "attempt: " +
                                      res.error().message());
          if (!res)
            return to_caf_error(res.error());
          return std::move(*res);
        },
        [=](finish_atom, const final_report& report) -> caf::result<bool> {
          auto res =
              client->finish_application_master(report, hadoop::deadline_after(timeout));
          if (!res)
            return to_caf_error(res.error());
          return true;
        },
    };
  };
  return sys.spawn<caf::detached>(impl, std::move(client), call_timeout);
}

} // namespace tony::yarn
