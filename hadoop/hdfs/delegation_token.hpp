#pragma once

// HDFS delegation tokens as values: what a token's identifier says, the URL
// form WebHDFS takes (`delegation=`), and the service a NameNode's token is
// filed under so that Hadoop's clients select it.
//
//   identifier (AbstractDelegationTokenIdentifier.write, Writable):
//     version byte 0 | Text owner | Text renewer | Text real user |
//     vlong issue date | vlong max date | vint sequence number |
//     vint master key id                      (dates: ms since the epoch)
//   URL string (Token.encodeToUrlString): URL-safe base64, no padding, of
//     vint len + identifier | vint len + password | Text kind | Text service
//
// The NameNode decides a token's life: it expires `renew interval` after
// its issue or last renewal (only the renewer may renew it), and never
// lives past `max date`.

#include <cstdint>
#include <string>
#include <string_view>

#include "hadoop/endpoint.hpp"
#include "hadoop/expected.hpp"
#include "hadoop/token.hpp"

namespace tony::hdfs {

/// The kind of an HDFS delegation token (DelegationTokenIdentifier's), the
/// one DFSClient, libhdfs and the NodeManager's localizer select.
constexpr const char* delegation_token_kind = "HDFS_DELEGATION_TOKEN";

/// What a delegation token's identifier holds.
struct token_identity {
  std::string owner;     // the user it acts for
  std::string renewer;   // the short name of who may renew it
  std::string real_user; // empty unless issued to a proxy user
  int64_t issue_date_ms = 0;
  int64_t max_date_ms = 0;
  int32_t sequence_number = 0;
  int32_t master_key_id = 0;
};

/// Decodes an identifier; invalid_input for anything else.
hadoop::expected<token_identity> parse_identifier(std::string_view bytes);

/// Token.encodeToUrlString: the token as WebHDFS's `delegation` parameter.
std::string to_url_string(const hadoop::token& x);

/// Token.decodeFromUrlString (either base64 alphabet, padding optional).
hadoop::expected<hadoop::token> from_url_string(std::string_view text);

/// The service Hadoop files a NameNode's token under
/// (SecurityUtil.buildTokenService with hadoop.security.token.service.use_ip,
/// its default): "<IPv4 of the host>:<port>". connect_failed when the host
/// does not resolve.
hadoop::expected<std::string> token_service(const hadoop::endpoint& namenode);

/// The service Hadoop files an HA nameservice's token under
/// (HAUtilClient.buildTokenServiceForLogicalUri): "ha-hdfs:<nameservice>".
std::string ha_token_service(const std::string& nameservice);

} // namespace tony::hdfs
