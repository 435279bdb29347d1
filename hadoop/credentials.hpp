#pragma once

// Hadoop credentials (org.apache.hadoop.security.Credentials): the token
// file named by HADOOP_TOKEN_FILE_LOCATION and the `tokens` bytes of a
// ContainerLaunchContext.
//
//   "HDTS" | format byte | body
//   format 0 WRITABLE:  vint n, n × (Text alias, Token), vint m, m × (Text alias,
//                       vint len + secret bytes)
//                       Token = vint len + identifier, vint len + password,
//                               Text kind, Text service
//                       Text  = vint len + UTF-8 bytes (vints: see vint.hpp)
//   format 1 PROTOBUF:  one varint-delimited CredentialsProto

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hadoop/expected.hpp"
#include "hadoop/token.hpp"

namespace tony::hadoop {

enum class credentials_format : uint8_t {
  writable = 0,
  protobuf = 1,
};

class credentials {
public:
  using token_entry = std::pair<std::string, token>;        // alias, token
  using secret_entry = std::pair<std::string, std::string>; // alias, bytes

  const std::vector<token_entry>& tokens() const noexcept { return tokens_; }
  const std::vector<secret_entry>& secrets() const noexcept { return secrets_; }

  bool empty() const noexcept { return tokens_.empty() && secrets_.empty(); }

  /// Adds or replaces the token stored under `alias`.
  void add_token(std::string alias, token x);

  /// Adds or replaces the secret stored under `alias`.
  void add_secret(std::string alias, std::string bytes);

  /// The first token of `kind` whose service equals `service`, or of that
  /// kind at all if `service` is empty. Null if none.
  const token* find(std::string_view kind, std::string_view service = {}) const;

  /// Every token of `kind`, in file order.
  std::vector<token> find_all(std::string_view kind) const;

private:
  std::vector<token_entry> tokens_;
  std::vector<secret_entry> secrets_;
};

/// Parses a token storage blob in either format. `origin` names the source
/// in error messages ("token file /x/container_tokens").
expected<credentials> parse_credentials(std::string_view bytes,
                                        const std::string& origin = "credentials");

/// Serializes `x`. WRITABLE is what Hadoop writes by default and what every
/// Hadoop version reads.
std::string
serialize_credentials(const credentials& x,
                      credentials_format format = credentials_format::writable);

/// Reads and parses a token file.
expected<credentials> read_credentials_file(const std::string& path);

/// Reads the file named by HADOOP_TOKEN_FILE_LOCATION; not_found if unset.
expected<credentials> credentials_from_environment();

} // namespace tony::hadoop
