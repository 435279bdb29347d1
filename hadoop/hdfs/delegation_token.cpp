#include "hadoop/hdfs/delegation_token.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>

#include "hadoop/byte_reader.hpp"
#include "hadoop/crypto.hpp"
#include "hadoop/vint.hpp"

namespace tony::hdfs {

namespace {

hadoop::error bad_identifier(const hadoop::error& cause) {
  return hadoop::error{hadoop::error_code::invalid_input,
                       "not an HDFS delegation token identifier: " + cause.message()};
}

void append_text(std::string& out, std::string_view bytes) {
  hadoop::append_vint(out, static_cast<int32_t>(bytes.size()));
  out.append(bytes.data(), bytes.size());
}

} // namespace

hadoop::expected<token_identity> parse_identifier(std::string_view bytes) {
  hadoop::byte_reader in{bytes};
  auto version = in.read_byte("version");
  if (!version)
    return bad_identifier(version.error());
  if (*version != 0)
    return hadoop::error{hadoop::error_code::invalid_input,
                         "unknown delegation token identifier version " +
                             std::to_string(*version)};
  token_identity result;
  for (auto [field, what] :
       {std::pair{&result.owner, "owner"}, std::pair{&result.renewer, "renewer"},
        std::pair{&result.real_user, "real user"}}) {
    auto text = in.read_length_prefixed(what);
    if (!text)
      return bad_identifier(text.error());
    *field = std::string{*text};
  }
  auto issue = in.read_vlong("issue date");
  if (!issue)
    return bad_identifier(issue.error());
  auto max = in.read_vlong("max date");
  if (!max)
    return bad_identifier(max.error());
  auto sequence = in.read_vint("sequence number");
  if (!sequence)
    return bad_identifier(sequence.error());
  auto key = in.read_vint("master key id");
  if (!key)
    return bad_identifier(key.error());
  result.issue_date_ms = *issue;
  result.max_date_ms = *max;
  result.sequence_number = *sequence;
  result.master_key_id = *key;
  return result;
}

std::string to_url_string(const hadoop::token& x) {
  std::string raw;
  append_text(raw, x.identifier);
  append_text(raw, x.password);
  append_text(raw, x.kind);
  append_text(raw, x.service);
  auto text = hadoop::base64_encode(raw);
  std::replace(text.begin(), text.end(), '+', '-');
  std::replace(text.begin(), text.end(), '/', '_');
  while (!text.empty() && text.back() == '=')
    text.pop_back();
  return text;
}

hadoop::expected<hadoop::token> from_url_string(std::string_view text) {
  std::string standard{text};
  std::replace(standard.begin(), standard.end(), '-', '+');
  std::replace(standard.begin(), standard.end(), '_', '/');
  auto raw = hadoop::base64_decode(standard);
  if (!raw)
    return hadoop::error{hadoop::error_code::invalid_input,
                         "not a delegation token URL string: " + raw.error().message()};
  hadoop::byte_reader in{*raw};
  hadoop::token result;
  for (auto [field, what] :
       {std::pair{&result.identifier, "identifier"},
        std::pair{&result.password, "password"}, std::pair{&result.kind, "kind"},
        std::pair{&result.service, "service"}}) {
    auto bytes = in.read_length_prefixed(what);
    if (!bytes)
      return hadoop::error{hadoop::error_code::invalid_input,
                           "not a delegation token URL string: " +
                               bytes.error().message()};
    *field = std::string{*bytes};
  }
  return result;
}

std::string ha_token_service(const std::string& nameservice) {
  return "ha-hdfs:" + nameservice;
}

hadoop::expected<std::string> token_service(const hadoop::endpoint& namenode) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(namenode.host.c_str(), nullptr, &hints, &found) != 0 ||
      found == nullptr)
    return hadoop::error{hadoop::error_code::connect_failed,
                         "cannot resolve the NameNode host " + namenode.host};
  char ip[INET_ADDRSTRLEN] = {};
  auto* addr = reinterpret_cast<sockaddr_in*>(found->ai_addr);
  ::inet_ntop(AF_INET, &addr->sin_addr, ip, sizeof ip);
  ::freeaddrinfo(found);
  return std::string{ip} + ":" + std::to_string(namenode.port);
}

} // namespace tony::hdfs
