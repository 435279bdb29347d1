#include "hadoop/hdfs/nameservice.hpp"

#include <algorithm>

namespace tony::hdfs {

namespace {

std::string without_spaces(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  return text;
}

} // namespace

bool is_nameservice(const hadoop::configuration& conf, const std::string& authority) {
  auto names = "," + without_spaces(conf.get_or("dfs.nameservices", "")) + ",";
  return authority.find(':') == std::string::npos &&
         names.find("," + authority + ",") != std::string::npos;
}

std::string unset_key::named(const std::string& what) const {
  return id.empty() ? key : key + " (NameNode " + id + "'s " + what + ")";
}

nameservice_namenodes namenodes_of(const hadoop::configuration& conf,
                                   const std::string& ns, const std::string& kind) {
  nameservice_namenodes out;
  auto ids = without_spaces(conf.get_or("dfs.ha.namenodes." + ns, ""));
  size_t at = 0;
  while (at <= ids.size()) {
    auto comma = std::min(ids.find(',', at), ids.size());
    auto id = ids.substr(at, comma - at);
    at = comma + 1;
    if (id.empty())
      continue;
    auto key = "dfs.namenode." + kind + "." + ns + "." + id;
    auto address = conf.get_or(key, "");
    if (address.empty())
      return {{}, unset_key{key, id}};
    out.namenodes.push_back({id, key, address});
  }
  if (out.namenodes.empty())
    out.unset = unset_key{"dfs.ha.namenodes." + ns, {}};
  return out;
}

} // namespace tony::hdfs
