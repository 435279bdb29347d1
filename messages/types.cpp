#include "messages/types.hpp"

namespace tony {

std::string to_string(const task_id& x) {
  return x.type + ":" + std::to_string(x.index);
}

std::string to_string(const resource& x) {
  auto result =
      std::to_string(x.memory_mb) + " MiB, " + std::to_string(x.vcores) + " vcores";
  if (x.gpus > 0)
    result += ", " + std::to_string(x.gpus) + (x.gpus == 1 ? " GPU" : " GPUs");
  return result;
}

std::string encode_cluster(const cluster_map& x) {
  std::map<std::string, size_t> index;
  std::string hosts;
  std::string types;
  for (auto& [type, addresses] : x) {
    types += type;
    for (auto& address : addresses) {
      auto colon = address.rfind(':');
      if (address.empty() || colon == std::string::npos) {
        types += " -";
        continue;
      }
      auto host = address.substr(0, colon);
      auto [pos, added] = index.emplace(host, index.size());
      if (added) {
        if (!hosts.empty())
          hosts += ' ';
        hosts += host;
      }
      types += ' ';
      types += std::to_string(pos->second);
      types += address.substr(colon);
    }
    types += '\n';
  }
  return hosts + '\n' + types;
}

namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    auto end = text.find(sep, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos)
      return parts;
    start = end + 1;
  }
}

} // namespace

std::optional<cluster_map> decode_cluster(const std::string& text) {
  if (text.empty() || text.back() != '\n')
    return std::nullopt;
  auto lines = split(text.substr(0, text.size() - 1), '\n');
  std::vector<std::string> hosts;
  if (!lines[0].empty())
    hosts = split(lines[0], ' ');
  cluster_map result;
  for (size_t i = 1; i < lines.size(); ++i) {
    auto fields = split(lines[i], ' ');
    if (fields[0].empty() || result.count(fields[0]) > 0)
      return std::nullopt;
    auto& addresses = result[fields[0]];
    for (size_t j = 1; j < fields.size(); ++j) {
      auto& field = fields[j];
      if (field == "-") {
        addresses.emplace_back();
        continue;
      }
      auto colon = field.find(':');
      if (colon == 0 || colon == std::string::npos || colon + 1 == field.size())
        return std::nullopt;
      size_t host = 0;
      for (size_t k = 0; k < colon; ++k) {
        if (field[k] < '0' || field[k] > '9' || host > hosts.size())
          return std::nullopt;
        host = host * 10 + static_cast<size_t>(field[k] - '0');
      }
      if (host >= hosts.size())
        return std::nullopt;
      for (size_t k = colon + 1; k < field.size(); ++k)
        if (field[k] < '0' || field[k] > '9')
          return std::nullopt;
      addresses.push_back(hosts[host] + field.substr(colon));
    }
  }
  return result;
}

std::string to_channel_frame(const cluster_spec& x) {
  return std::to_string(x.attempt) + '\n' + x.encoded;
}

std::optional<cluster_spec> from_channel_frame(const std::string& frame) {
  auto newline = frame.find('\n');
  if (newline == 0 || newline == std::string::npos || newline > 10)
    return std::nullopt;
  int64_t attempt = 0;
  for (size_t i = 0; i < newline; ++i) {
    if (frame[i] < '0' || frame[i] > '9')
      return std::nullopt;
    attempt = attempt * 10 + (frame[i] - '0');
  }
  if (attempt > INT32_MAX)
    return std::nullopt;
  return cluster_spec{static_cast<int32_t>(attempt), frame.substr(newline + 1)};
}

} // namespace tony
