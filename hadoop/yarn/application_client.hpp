#pragma once

// The client side of YARN's ApplicationClientProtocol: what tony-submit
// asks the ResourceManager (new application, submit, report, kill, nodes).
// Blocking and thread-safe; every call takes a deadline. SIMPLE
// authentication with the user given at construction, or Kerberos (SASL
// GSSAPI) with the user's credentials, the RM's principal checked against
// yarn.resourcemanager.principal. With ResourceManager HA every call goes to
// the active RM among the rm-ids and fails over when it changes
// (rm_failover.hpp).

#include <memory>
#include <string>
#include <vector>

#include "hadoop/configuration.hpp"
#include "hadoop/connection_params.hpp"
#include "hadoop/deadline.hpp"
#include "hadoop/expected.hpp"
#include "hadoop/ipc_client.hpp"
#include "hadoop/kerberos.hpp"
#include "hadoop/yarn/ids.hpp"
#include "hadoop/yarn/records.hpp"
#include "hadoop/yarn/rm_failover.hpp"

namespace tony::yarn {

class application_client {
public:
  application_client(std::shared_ptr<hadoop::ipc_client> ipc, hadoop::endpoint rm,
                     std::string user);

  /// A client of the ResourceManagers in `peers` (the active one is found).
  application_client(std::shared_ptr<hadoop::ipc_client> ipc, std::vector<rm_peer> peers,
                     std::string user, failover_options failover = {});

  /// A client for yarn.resourcemanager.address of `conf` (of each rm-id
  /// with yarn.resourcemanager.ha.enabled), as `user`
  /// (default: hadoop::current_user()). With `kerberos` the client
  /// authenticates as its principal instead, accepts the QOPs of
  /// hadoop.rpc.protection, and expects the RM to be
  /// yarn.resourcemanager.principal (or match its .pattern).
  static hadoop::expected<application_client>
  from_configuration(std::shared_ptr<hadoop::ipc_client> ipc,
                     const hadoop::configuration& conf, std::string user = {},
                     std::shared_ptr<const hadoop::kerberos_credentials> kerberos = {});

  hadoop::expected<new_application> get_new_application(hadoop::deadline until);

  hadoop::expected<void> submit_application(const submission_context& ctx,
                                            hadoop::deadline until);

  hadoop::expected<application_report> get_application_report(const application_id& id,
                                                              hadoop::deadline until);

  /// True once the RM reports the kill completed (it may take a second
  /// call; YARN's client polls).
  hadoop::expected<bool> force_kill_application(const application_id& id,
                                                const std::string& diagnostics,
                                                hadoop::deadline until);

  /// Every node the RM knows, whatever its state.
  hadoop::expected<std::vector<node_report>> get_cluster_nodes(hadoop::deadline until);

  hadoop::expected<cluster_metrics> get_cluster_metrics(hadoop::deadline until);

  /// The scheduler's queue tree from `root` down (getQueueInfo, recursive).
  hadoop::expected<queue_info> get_queue_tree(const std::string& root,
                                              hadoop::deadline until);

  /// The connection to the RM that answered last.
  hadoop::connection_params target() const { return failover_->current(target_); }

  /// Every later call acts for `user` (Hadoop's proxy users): the RM
  /// checks that the authenticated user may, and an application submitted
  /// is `user`'s. Empty: the authenticated user's own calls.
  void act_as(std::string user) { target_.proxy_user = std::move(user); }

  /// Every later call authenticates with `rm_token`, an RM delegation token
  /// (SASL DIGEST-MD5), as `owner`, instead of a Kerberos login.
  void authenticate_with(hadoop::token rm_token, std::string owner) {
    target_.auth_token = std::move(rm_token);
    target_.kerberos = nullptr;
    target_.user = std::move(owner);
  }

  /// The ResourceManagers this client knows, and how often it failed over.
  const rm_failover& failover() const noexcept { return *failover_; }

private:
  template <class Response>
  hadoop::expected<Response> call(const std::string& method,
                                  const google::protobuf::MessageLite& req,
                                  hadoop::deadline until);

  std::shared_ptr<hadoop::ipc_client> ipc_;
  hadoop::connection_params target_; // all but the address, which failover_ picks
  std::shared_ptr<rm_failover> failover_;
};

} // namespace tony::yarn
