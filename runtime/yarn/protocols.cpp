#include "runtime/yarn/protocols.hpp"

namespace tony::yarn {

hadoop::expected<hadoop::endpoint> address_of(const hadoop::configuration& conf,
                                              const char* key) {
  auto value = conf.get(key);
  if (!value)
    return value.error();
  auto result = hadoop::parse_endpoint(*value);
  if (!result)
    return hadoop::error{hadoop::error_code::invalid_input,
                         std::string{key} + " (" + conf.origin(key) +
                             "): " + result.error().message()};
  return result;
}

hadoop::expected<hadoop::endpoint> rm_address(const hadoop::configuration& conf) {
  return address_of(conf, "yarn.resourcemanager.address");
}

hadoop::expected<hadoop::endpoint> scheduler_address(const hadoop::configuration& conf) {
  return address_of(conf, "yarn.resourcemanager.scheduler.address");
}

hadoop::expected<hadoop::endpoint> webapp_address(const hadoop::configuration& conf) {
  return address_of(conf, "yarn.resourcemanager.webapp.address");
}

} // namespace tony::yarn
