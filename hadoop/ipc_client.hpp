#pragma once

// The entry point to Hadoop RPC: a thread-safe pool of connections keyed by
// (address, protocol, user, token, Kerberos identity and protection), and
// blocking calls with deadlines.
// Share one ipc_client per process; the YARN clients take it by
// shared_ptr.

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include <google/protobuf/message_lite.h>

#include "hadoop/connection_params.hpp"
#include "hadoop/deadline.hpp"
#include "hadoop/expected.hpp"
#include "hadoop/ipc_connection.hpp"
#include "hadoop/rpc_codec.hpp"

namespace tony::hadoop {

class ipc_client {
public:
  explicit ipc_client(connection_options opts = {});
  ~ipc_client();

  ipc_client(const ipc_client&) = delete;
  ipc_client& operator=(const ipc_client&) = delete;

  /// Calls `method` on the server `target` names and returns the raw
  /// response body. Connects (and retries connecting) as needed; a pooled
  /// connection found broken before the request was sent is replaced once.
  expected<std::string> call_raw(const connection_params& target,
                                 const std::string& method,
                                 const google::protobuf::MessageLite& request,
                                 deadline until);

  /// Calls `method` and parses the response into a `Response`.
  template <class Response>
  expected<Response> call(const connection_params& target, const std::string& method,
                          const google::protobuf::MessageLite& request, deadline until) {
    auto body = call_raw(target, method, request, until);
    if (!body)
      return std::move(body).error();
    Response response;
    if (auto ok = parse_delimited(*body, response, "response"); !ok)
      return error{error_code::protocol,
                   describe_server(target) + ": " + method + ": " + ok.error().message()};
    return response;
  }

  /// Number of pooled connections that are still usable.
  size_t connection_count() const;

  /// Closes every pooled connection (outstanding calls fail).
  void close_all();

  /// For a process that is ending: every call fails from now on
  /// (error_code::cancelled), connects retrying a refused server stop, and
  /// the pooled connections close, so that no thread stays blocked in a
  /// call to a server that is gone (tony-am's end waits for such threads).
  void shut_down();

  const connection_options& options() const noexcept { return opts_; }

  /// The 16-byte client id sent with every call of this client.
  const std::string& client_id() const noexcept { return client_id_; }

private:
  using key = std::tuple<std::string, uint16_t, std::string, std::string, std::string,
                         std::string, std::string>;

  // One per key. `connecting` lets a single caller connect while others
  // for the same key wait (up to their deadlines) instead of racing.
  struct slot {
    std::mutex mtx;
    std::condition_variable cv;
    bool connecting = false;
    std::shared_ptr<ipc_connection> conn;
  };

  static key key_of(const connection_params& x);

  expected<std::shared_ptr<ipc_connection>> acquire(const connection_params& target,
                                                    deadline until, bool* reused);

  connection_options opts_;
  std::string client_id_;
  std::atomic<bool> shut_down_{false};
  mutable std::mutex mtx_;
  std::map<key, std::shared_ptr<slot>> slots_;
};

} // namespace tony::hadoop
