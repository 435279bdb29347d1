#include "messages/registration.hpp"

#include <caf/message.hpp>

#include "messages/error.hpp"
#include "messages/type_ids.hpp"

namespace tony {

const char* to_string(errc x) {
  switch (x) {
  case errc::none:
    return "none";
  case errc::invalid_config:
    return "invalid_config";
  case errc::bad_secret:
    return "bad_secret";
  case errc::unknown_task:
    return "unknown_task";
  case errc::duplicate_registration:
    return "duplicate_registration";
  case errc::stale_attempt:
    return "stale_attempt";
  case errc::infrastructure:
    return "infrastructure";
  case errc::unsatisfiable:
    return "unsatisfiable";
  case errc::protocol:
    return "protocol";
  case errc::timeout:
    return "timeout";
  case errc::stopped:
    return "stopped";
  case errc::not_ready:
    return "not_ready";
  }
  return "unknown";
}

std::string describe(const error& err) {
  if (!err)
    return "no error";
  return err.text();
}

std::string to_string(const error& err) {
  std::string result = to_string(err.code());
  if (!err.text().empty()) {
    result += " (";
    result += err.text();
    result += ')';
  }
  return result;
}

caf::error to_caf(const error& err) {
  if (!err)
    return caf::error{};
  return caf_error(err.code(), err.text());
}

error from_caf(const caf::error& err) {
  if (!err)
    return error{};
  if (err.category() == errc_category) {
    auto code = static_cast<errc>(err.code());
    auto& ctx = err.context();
    if (ctx.match_elements<std::string>())
      return error{code, ctx.get_as<std::string>(0)};
    return make_error(code);
  }
  return error{errc::infrastructure, caf::to_string(err)};
}

std::string describe(const caf::error& err) {
  if (!err)
    return "no error";
  if (err.category() == errc_category) {
    auto& ctx = err.context();
    if (ctx.match_elements<std::string>())
      return ctx.get_as<std::string>(0);
    return to_string(static_cast<errc>(err.code()));
  }
  return caf::to_string(err);
}

void add_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_types<caf::id_block::tony>();
  cfg.add_message_type<tony::cluster_map>("tony::cluster_map");
  cfg.add_error_category(errc_category,
                         [](uint8_t code, caf::atom_value, const caf::message& ctx) {
                           std::string result = "tony: ";
                           result += to_string(static_cast<errc>(code));
                           if (ctx.match_elements<std::string>()) {
                             result += " (";
                             result += ctx.get_as<std::string>(0);
                             result += ")";
                           }
                           return result;
                         });
}

} // namespace tony
