// libFuzzer target: token files (HADOOP_TOKEN_FILE_LOCATION) in both
// formats. Anything that parses must serialize and parse back to the same
// credentials in either format.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hadoop/credentials.hpp"

namespace {

using namespace tony::hadoop;

bool same(const credentials& x, const credentials& y) {
  return x.tokens() == y.tokens() && x.secrets() == y.secrets();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in{reinterpret_cast<const char*>(data), size};
  auto creds = parse_credentials(in, "fuzz input");
  if (!creds)
    return 0;
  for (auto format : {credentials_format::writable, credentials_format::protobuf}) {
    auto back = parse_credentials(serialize_credentials(*creds, format));
    if (!back || !same(*back, *creds))
      std::abort();
  }
  for (auto& [alias, tok] : creds->tokens()) {
    auto again = parse_token_proto(serialize_token_proto(tok));
    if (!again || *again != tok)
      std::abort();
  }
  return 0;
}
