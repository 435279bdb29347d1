#pragma once

// NMTokens by node ("host:port"). The RM hands out one per node per attempt
// (AllocateResponse.nm_tokens, RegisterApplicationMasterResponse for kept
// containers); the amrm_client fills the cache and the nm_client reads it.
// Thread-safe.

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "hadoop/token.hpp"

namespace tony::yarn {

class nm_token_cache {
public:
  /// Adds or replaces the token for `node`.
  void put(const std::string& node, hadoop::token tok);

  std::optional<hadoop::token> get(const std::string& node) const;

  size_t size() const;

private:
  mutable std::mutex mtx_;
  std::map<std::string, hadoop::token> tokens_;
};

} // namespace tony::yarn
