#include "hadoop/yarn/nm_token_cache.hpp"

namespace tony::yarn {

void nm_token_cache::put(const std::string& node, hadoop::token tok) {
  std::lock_guard<std::mutex> guard{mtx_};
  tokens_[node] = std::move(tok);
}

std::optional<hadoop::token> nm_token_cache::get(const std::string& node) const {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = tokens_.find(node);
  if (i == tokens_.end())
    return std::nullopt;
  return i->second;
}

size_t nm_token_cache::size() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return tokens_.size();
}

} // namespace tony::yarn
