#include "runtime/hadoop/digest_md5.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include "runtime/hadoop/crypto.hpp"

namespace tony::hadoop {

namespace {

bool is_lws(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

std::string lower(std::string_view x) {
  std::string result{x};
  std::transform(result.begin(), result.end(), result.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return result;
}

error bad_challenge(const std::string& why) {
  return error{error_code::auth,
               "malformed DIGEST-MD5 challenge from the server: " + why};
}

// Splits "a=b, c=\"d,e\"" into (name, value) pairs, unquoting values.
expected<std::vector<std::pair<std::string, std::string>>>
parse_directives(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> result;
  size_t i = 0;
  auto skip = [&] {
    while (i < text.size() && (is_lws(text[i]) || text[i] == ','))
      ++i;
  };
  skip();
  while (i < text.size()) {
    auto name_start = i;
    while (i < text.size() && text[i] != '=' && text[i] != ',' && !is_lws(text[i]))
      ++i;
    auto name = lower(text.substr(name_start, i - name_start));
    while (i < text.size() && is_lws(text[i]))
      ++i;
    if (name.empty() || i >= text.size() || text[i] != '=')
      return bad_challenge("expected name=value at offset " + std::to_string(name_start));
    ++i;
    while (i < text.size() && is_lws(text[i]))
      ++i;
    std::string value;
    if (i < text.size() && text[i] == '"') {
      ++i;
      bool closed = false;
      while (i < text.size()) {
        auto c = text[i++];
        if (c == '\\' && i < text.size()) {
          value.push_back(text[i++]);
        } else if (c == '"') {
          closed = true;
          break;
        } else {
          value.push_back(c);
        }
      }
      if (!closed)
        return bad_challenge("unterminated quoted value of '" + name + "'");
    } else {
      auto value_start = i;
      while (i < text.size() && text[i] != ',' && !is_lws(text[i]))
        ++i;
      value = std::string{text.substr(value_start, i - value_start)};
    }
    result.emplace_back(std::move(name), std::move(value));
    while (i < text.size() && is_lws(text[i]))
      ++i;
    if (i < text.size() && text[i] != ',')
      return bad_challenge("expected ',' at offset " + std::to_string(i));
    skip();
  }
  return result;
}

std::vector<std::string> split_list(std::string_view x) {
  std::vector<std::string> result;
  size_t start = 0;
  while (start <= x.size()) {
    auto end = x.find(',', start);
    if (end == std::string_view::npos)
      end = x.size();
    auto item = x.substr(start, end - start);
    while (!item.empty() && is_lws(item.front()))
      item.remove_prefix(1);
    while (!item.empty() && is_lws(item.back()))
      item.remove_suffix(1);
    if (!item.empty())
      result.emplace_back(item);
    start = end + 1;
  }
  return result;
}

std::string quote(std::string_view x) {
  std::string result = "\"";
  for (auto c : x) {
    if (c == '"' || c == '\\')
      result.push_back('\\');
    result.push_back(c);
  }
  result.push_back('"');
  return result;
}

std::string hex_ha1(const digest_params& x) {
  auto inner = md5(x.username + ":" + x.realm + ":" + x.password);
  auto a1 = inner + ":" + x.nonce + ":" + x.cnonce;
  if (!x.authzid.empty())
    a1 += ":" + x.authzid;
  return hex_encode(md5(a1));
}

std::string digest_with_a2(const digest_params& x, const std::string& a2) {
  auto kd = hex_ha1(x) + ":" + x.nonce + ":" + x.nc + ":" + x.cnonce + ":" + x.qop + ":" +
            hex_encode(md5(a2));
  return hex_encode(md5(kd));
}

} // namespace

expected<digest_challenge> parse_digest_challenge(std::string_view text) {
  auto directives = parse_directives(text);
  if (!directives)
    return directives.error();
  digest_challenge result;
  bool has_algorithm = false;
  for (auto& [name, value] : *directives) {
    if (name == "realm") {
      result.realms.push_back(value);
    } else if (name == "nonce") {
      if (!result.nonce.empty())
        return bad_challenge("more than one nonce");
      result.nonce = value;
    } else if (name == "qop") {
      for (auto& q : split_list(value))
        result.qop_options.push_back(lower(q));
    } else if (name == "charset") {
      result.utf8 = lower(value) == "utf-8";
    } else if (name == "algorithm") {
      has_algorithm = true;
      result.algorithm = lower(value);
    }
  }
  if (result.nonce.empty())
    return bad_challenge("no nonce");
  if (!has_algorithm || result.algorithm != "md5-sess")
    return bad_challenge("algorithm must be md5-sess, got '" + result.algorithm + "'");
  return result;
}

std::string digest_response_value(const digest_params& x) {
  return digest_with_a2(x, "AUTHENTICATE:" + x.digest_uri);
}

std::string digest_rspauth_value(const digest_params& x) {
  return digest_with_a2(x, ":" + x.digest_uri);
}

digest_md5_client::digest_md5_client(const token& tok, const std::string& protocol,
                                     const std::string& server_id, std::string cnonce) {
  params_.username = base64_encode(tok.identifier);
  params_.password = base64_encode(tok.password);
  params_.digest_uri = protocol + "/" + server_id;
  params_.cnonce = cnonce.empty() ? hex_encode(random_bytes(16)) : std::move(cnonce);
}

expected<std::string> digest_md5_client::respond(std::string_view challenge_text) {
  if (responded_)
    return error{error_code::auth,
                 "the server sent a second DIGEST-MD5 challenge (expected rspauth)"};
  auto challenge = parse_digest_challenge(challenge_text);
  if (!challenge)
    return challenge.error();
  if (!challenge->qop_options.empty() &&
      std::find(challenge->qop_options.begin(), challenge->qop_options.end(), "auth") ==
          challenge->qop_options.end()) {
    std::string offered;
    for (auto& q : challenge->qop_options)
      offered += (offered.empty() ? "" : ",") + q;
    return error{error_code::auth,
                 "the server requires SASL qop '" + offered +
                     "', but tony supports only 'auth' (set hadoop.rpc.protection="
                     "authentication on the cluster)"};
  }
  params_.realm = challenge->realms.empty() ? std::string{} : challenge->realms.front();
  params_.nonce = challenge->nonce;
  params_.qop = "auth";
  responded_ = true;
  std::string result;
  if (challenge->utf8)
    result += "charset=utf-8,";
  result += "username=" + quote(params_.username);
  if (!challenge->realms.empty())
    result += ",realm=" + quote(params_.realm);
  result += ",nonce=" + quote(params_.nonce);
  result += ",nc=" + params_.nc;
  result += ",cnonce=" + quote(params_.cnonce);
  result += ",digest-uri=" + quote(params_.digest_uri);
  result += ",response=" + digest_response_value(params_);
  result += ",qop=" + params_.qop;
  return result;
}

expected<void> digest_md5_client::verify_rspauth(std::string_view server_final) {
  if (!responded_)
    return error{error_code::auth,
                 "the server ended DIGEST-MD5 before the client answered its challenge"};
  auto directives = parse_directives(server_final);
  if (!directives)
    return error{error_code::auth,
                 "malformed DIGEST-MD5 final message from the server: " +
                     directives.error().message()};
  for (auto& [name, value] : *directives) {
    if (name == "rspauth") {
      if (lower(value) != digest_rspauth_value(params_))
        return error{error_code::auth,
                     "the server's DIGEST-MD5 rspauth is wrong: it does not know the "
                     "token's password (wrong server, or a token for another cluster)"};
      complete_ = true;
      return {};
    }
  }
  return error{error_code::auth, "the server's DIGEST-MD5 final message has no rspauth"};
}

} // namespace tony::hadoop
