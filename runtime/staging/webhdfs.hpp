#pragma once

// The few WebHDFS calls tony makes (libcurl, every call bounded): staging
// uploads, the history dir's listing and reads. One place for the HTTP
// plumbing and for turning a NameNode's RemoteException into words.

#include <string>

#include <caf/expected.hpp>

namespace tony::webhdfs {

struct response {
  long status = 0;
  std::string body;
  std::string location; // the Location header (CREATE's redirect)
};

/// One HTTP call. `upload` names a file sent as the body; with `follow`,
/// redirects (NameNode -> DataNode) are followed.
caf::expected<response> call(const std::string& method, const std::string& url,
                             const std::string& upload = {}, bool follow = false);

/// "http://<http_address>/webhdfs/v1<path>?op=<op>&user.name=<user>".
std::string op_url(const std::string& http_address, const std::string& path,
                   const std::string& op, const std::string& user);

/// The message of a WebHDFS RemoteException body, or the body's start.
std::string remote_message(const std::string& body);

} // namespace tony::webhdfs
