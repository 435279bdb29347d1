#include "hadoop/token.hpp"

#include "hadoop/proto/hadoop_rpc.pb.h"
#include "hadoop/rpc_codec.hpp"

namespace tony::hadoop {

std::string serialize_token_proto(const token& x) {
  proto::TokenProto msg;
  msg.set_identifier(x.identifier);
  msg.set_password(x.password);
  msg.set_kind(x.kind);
  msg.set_service(x.service);
  return msg.SerializeAsString();
}

expected<token> parse_token_proto(std::string_view bytes) {
  proto::TokenProto msg;
  if (!parse_quietly(bytes, msg))
    return error{error_code::invalid_input, "not a serialized TokenProto (" +
                                                std::to_string(bytes.size()) + " bytes)"};
  return token{msg.identifier(), msg.password(), msg.kind(), msg.service()};
}

std::string describe(const token& x) {
  return (x.kind.empty() ? std::string{"token"} : x.kind) +
         (x.service.empty() ? std::string{} : " for " + x.service);
}

} // namespace tony::hadoop
