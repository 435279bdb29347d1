#include "hadoop/yarn/rm_token.hpp"

#include "hadoop/yarn/proto/yarn.pb.h"

namespace tony::yarn {

hadoop::expected<rm_token_identity> parse_rm_token_identifier(std::string_view bytes) {
  proto::YARNDelegationTokenIdentifierProto p;
  if (!p.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) || !p.has_owner() ||
      p.owner().empty())
    return hadoop::error{hadoop::error_code::invalid_input,
                         "not an RM delegation token identifier (" +
                             std::to_string(bytes.size()) + " bytes)"};
  rm_token_identity id;
  id.owner = p.owner();
  id.renewer = p.renewer();
  id.real_user = p.realuser();
  id.issue_date_ms = p.issuedate();
  id.max_date_ms = p.maxdate();
  return id;
}

std::string principal_short_name(const std::string& principal) {
  return principal.substr(0, principal.find_first_of("/@"));
}

} // namespace tony::yarn
