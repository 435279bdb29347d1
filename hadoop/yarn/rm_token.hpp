#pragma once

// ResourceManager delegation tokens (RM_DELEGATION_TOKEN), as a workflow
// scheduler (Oozie's launcher) hands them to its actions in
// HADOOP_TOKEN_FILE_LOCATION: a client with one talks to the RM's
// ApplicationClientProtocol over SASL DIGEST-MD5 (TOKEN) instead of
// Kerberos, as the token's owner.

#include <cstdint>
#include <string>
#include <string_view>

#include "hadoop/expected.hpp"

namespace tony::yarn {

constexpr const char* rm_delegation_token_kind = "RM_DELEGATION_TOKEN";

/// What an RM delegation token's identifier says (Hadoop's
/// YARNDelegationTokenIdentifier, a protobuf message).
struct rm_token_identity {
  std::string owner;     // the user it acts for, as the RM knows it (a principal)
  std::string renewer;   // who may renew it
  std::string real_user; // empty unless issued to a proxy user
  int64_t issue_date_ms = 0;
  int64_t max_date_ms = 0;
};

/// Decodes an identifier; invalid_input for anything else.
hadoop::expected<rm_token_identity> parse_rm_token_identifier(std::string_view bytes);

/// A principal's short name by Hadoop's default rule: "alice@REALM" and
/// "alice/host@REALM" are "alice".
std::string principal_short_name(const std::string& principal);

} // namespace tony::yarn
