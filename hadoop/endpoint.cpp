#include "hadoop/endpoint.hpp"

#include <cctype>

namespace tony::hadoop {

namespace {

std::string_view trim(std::string_view x) {
  while (!x.empty() && std::isspace(static_cast<unsigned char>(x.front())))
    x.remove_prefix(1);
  while (!x.empty() && std::isspace(static_cast<unsigned char>(x.back())))
    x.remove_suffix(1);
  return x;
}

expected<uint16_t> parse_port(std::string_view text, std::string_view whole) {
  if (text.empty() || text.size() > 5)
    return error{error_code::invalid_input,
                 "invalid port in address '" + std::string{whole} + "'"};
  uint32_t port = 0;
  for (auto c : text) {
    if (c < '0' || c > '9')
      return error{error_code::invalid_input,
                   "invalid port in address '" + std::string{whole} + "'"};
    port = port * 10 + static_cast<uint32_t>(c - '0');
  }
  if (port == 0 || port > 65535)
    return error{error_code::invalid_input,
                 "port out of range in address '" + std::string{whole} + "'"};
  return static_cast<uint16_t>(port);
}

} // namespace

std::string to_string(const endpoint& x) {
  if (x.host.find(':') != std::string::npos)
    return "[" + x.host + "]:" + std::to_string(x.port);
  return x.host + ":" + std::to_string(x.port);
}

expected<endpoint> parse_endpoint(std::string_view text, int default_port) {
  auto whole = trim(text);
  if (whole.empty())
    return error{error_code::invalid_input, "empty address (expected host:port)"};
  endpoint result;
  std::string_view port_text;
  if (whole.front() == '[') {
    auto close = whole.find(']');
    if (close == std::string_view::npos)
      return error{error_code::invalid_input,
                   "unterminated '[' in address '" + std::string{whole} + "'"};
    result.host = std::string{whole.substr(1, close - 1)};
    auto rest = whole.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':')
        return error{error_code::invalid_input,
                     "expected ':' after ']' in address '" + std::string{whole} + "'"};
      port_text = rest.substr(1);
    }
  } else {
    auto colon = whole.rfind(':');
    if (colon != std::string_view::npos && whole.find(':') != colon)
      return error{error_code::invalid_input, "IPv6 address '" + std::string{whole} +
                                                  "' needs brackets: [addr]:port"};
    result.host = std::string{whole.substr(0, colon)};
    if (colon != std::string_view::npos)
      port_text = whole.substr(colon + 1);
  }
  if (result.host.empty())
    return error{error_code::invalid_input,
                 "missing host in address '" + std::string{whole} + "'"};
  if (port_text.empty()) {
    if (default_port <= 0)
      return error{error_code::invalid_input, "missing port in address '" +
                                                  std::string{whole} +
                                                  "' (expected host:port)"};
    result.port = static_cast<uint16_t>(default_port);
    return result;
  }
  auto port = parse_port(port_text, whole);
  if (!port)
    return port.error();
  result.port = *port;
  return result;
}

} // namespace tony::hadoop
