#include "hadoop/credentials.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "hadoop/byte_reader.hpp"
#include "hadoop/proto/hadoop_rpc.pb.h"
#include "hadoop/rpc_codec.hpp"
#include "hadoop/vint.hpp"

namespace tony::hadoop {

namespace {

constexpr std::string_view magic = "HDTS";

error corrupt(const std::string& origin, const error& cause) {
  return error{error_code::invalid_input,
               origin + " is corrupt: " + cause.message() +
                   " (was it written by Hadoop? regenerate it or check "
                   "HADOOP_TOKEN_FILE_LOCATION)"};
}

expected<credentials> parse_writable(byte_reader& in) {
  credentials result;
  auto count = in.read_vint("token count");
  if (!count)
    return count.error();
  if (*count < 0)
    return error{error_code::invalid_input,
                 "negative token count " + std::to_string(*count)};
  for (int32_t i = 0; i < *count; ++i) {
    auto alias = in.read_length_prefixed("token alias");
    if (!alias)
      return alias.error();
    token tok;
    auto identifier = in.read_length_prefixed("token identifier");
    if (!identifier)
      return identifier.error();
    auto password = in.read_length_prefixed("token password");
    if (!password)
      return password.error();
    auto kind = in.read_length_prefixed("token kind");
    if (!kind)
      return kind.error();
    auto service = in.read_length_prefixed("token service");
    if (!service)
      return service.error();
    tok.identifier = std::string{*identifier};
    tok.password = std::string{*password};
    tok.kind = std::string{*kind};
    tok.service = std::string{*service};
    result.add_token(std::string{*alias}, std::move(tok));
  }
  auto secrets = in.read_vint("secret count");
  if (!secrets)
    return secrets.error();
  if (*secrets < 0)
    return error{error_code::invalid_input,
                 "negative secret count " + std::to_string(*secrets)};
  for (int32_t i = 0; i < *secrets; ++i) {
    auto alias = in.read_length_prefixed("secret alias");
    if (!alias)
      return alias.error();
    auto value = in.read_length_prefixed("secret value");
    if (!value)
      return value.error();
    result.add_secret(std::string{*alias}, std::string{*value});
  }
  return result;
}

expected<credentials> parse_protobuf(byte_reader& in) {
  auto len = in.read_varint("CredentialsProto length");
  if (!len)
    return len.error();
  if (*len > in.remaining())
    return error{error_code::invalid_input,
                 "CredentialsProto length " + std::to_string(*len) + " exceeds the " +
                     std::to_string(in.remaining()) + " bytes left"};
  auto body = in.read_bytes(static_cast<size_t>(*len), "CredentialsProto");
  if (!body)
    return body.error();
  proto::CredentialsProto msg;
  if (!parse_quietly(*body, msg))
    return error{error_code::invalid_input, "CredentialsProto does not parse"};
  credentials result;
  for (auto& kv : msg.tokens()) {
    if (!kv.has_token())
      return error{error_code::invalid_input,
                   "token entry '" + kv.alias() + "' carries no token"};
    auto& t = kv.token();
    result.add_token(kv.alias(),
                     token{t.identifier(), t.password(), t.kind(), t.service()});
  }
  for (auto& kv : msg.secrets())
    result.add_secret(kv.alias(), kv.secret());
  return result;
}

void append_bytes(std::string& out, std::string_view bytes) {
  append_vint(out, static_cast<int32_t>(bytes.size()));
  out.append(bytes.data(), bytes.size());
}

} // namespace

void credentials::add_token(std::string alias, token x) {
  for (auto& entry : tokens_) {
    if (entry.first == alias) {
      entry.second = std::move(x);
      return;
    }
  }
  tokens_.emplace_back(std::move(alias), std::move(x));
}

void credentials::add_secret(std::string alias, std::string bytes) {
  for (auto& entry : secrets_) {
    if (entry.first == alias) {
      entry.second = std::move(bytes);
      return;
    }
  }
  secrets_.emplace_back(std::move(alias), std::move(bytes));
}

const token* credentials::find(std::string_view kind, std::string_view service) const {
  for (auto& entry : tokens_)
    if (entry.second.kind == kind && (service.empty() || entry.second.service == service))
      return &entry.second;
  return nullptr;
}

std::vector<token> credentials::find_all(std::string_view kind) const {
  std::vector<token> result;
  for (auto& entry : tokens_)
    if (entry.second.kind == kind)
      result.push_back(entry.second);
  return result;
}

expected<credentials> parse_credentials(std::string_view bytes,
                                        const std::string& origin) {
  byte_reader in{bytes};
  auto head = in.read_bytes(magic.size(), "magic");
  if (!head || *head != magic)
    return error{error_code::invalid_input,
                 origin + " is not a Hadoop token file (it does not start with 'HDTS')"};
  auto format = in.read_byte("format byte");
  if (!format)
    return corrupt(origin, format.error());
  expected<credentials> result = error{error_code::invalid_input, ""};
  switch (*format) {
  case static_cast<uint8_t>(credentials_format::writable):
    result = parse_writable(in);
    break;
  case static_cast<uint8_t>(credentials_format::protobuf):
    result = parse_protobuf(in);
    break;
  default:
    return error{error_code::invalid_input,
                 origin + " has unknown format byte " + std::to_string(*format) +
                     " (this reader knows 0 = Writable and 1 = protobuf)"};
  }
  if (!result)
    return corrupt(origin, result.error());
  return result;
}

std::string serialize_credentials(const credentials& x, credentials_format format) {
  std::string out{magic};
  out.push_back(static_cast<char>(format));
  if (format == credentials_format::protobuf) {
    proto::CredentialsProto msg;
    for (auto& [alias, tok] : x.tokens()) {
      auto* kv = msg.add_tokens();
      kv->set_alias(alias);
      auto* t = kv->mutable_token();
      t->set_identifier(tok.identifier);
      t->set_password(tok.password);
      t->set_kind(tok.kind);
      t->set_service(tok.service);
    }
    for (auto& [alias, secret] : x.secrets()) {
      auto* kv = msg.add_secrets();
      kv->set_alias(alias);
      kv->set_secret(secret);
    }
    auto body = msg.SerializeAsString();
    for (auto n = body.size();; n >>= 7) {
      if (n < 0x80) {
        out.push_back(static_cast<char>(n));
        break;
      }
      out.push_back(static_cast<char>((n & 0x7F) | 0x80));
    }
    out += body;
    return out;
  }
  append_vint(out, static_cast<int32_t>(x.tokens().size()));
  for (auto& [alias, tok] : x.tokens()) {
    append_bytes(out, alias);
    append_bytes(out, tok.identifier);
    append_bytes(out, tok.password);
    append_bytes(out, tok.kind);
    append_bytes(out, tok.service);
  }
  append_vint(out, static_cast<int32_t>(x.secrets().size()));
  for (auto& [alias, secret] : x.secrets()) {
    append_bytes(out, alias);
    append_bytes(out, secret);
  }
  return out;
}

expected<credentials> read_credentials_file(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return error{error_code::io, "cannot read token file " + path +
                                     " (does it exist and is it readable?)"};
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad())
    return error{error_code::io, "error reading token file " + path};
  return parse_credentials(buf.str(), "token file " + path);
}

expected<credentials> credentials_from_environment() {
  auto* path = std::getenv("HADOOP_TOKEN_FILE_LOCATION");
  if (path == nullptr || *path == '\0')
    return error{error_code::not_found,
                 "HADOOP_TOKEN_FILE_LOCATION is not set (outside a YARN container, "
                 "pass the token file explicitly)"};
  return read_credentials_file(path);
}

} // namespace tony::hadoop
