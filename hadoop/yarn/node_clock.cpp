#include "hadoop/yarn/node_clock.hpp"

#include <cctype>

#include "hadoop/token.hpp"
#include "hadoop/yarn/proto/yarn.pb.h"

namespace tony::yarn {

namespace {

constexpr std::string_view sentence = "This token is expired. current time is ";

// A run of digits at `pos`; advances `pos` past it.
std::optional<int64_t> number_at(std::string_view text, size_t& pos) {
  auto start = pos;
  int64_t value = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])) &&
         pos - start < 18) {
    value = value * 10 + (text[pos] - '0');
    ++pos;
  }
  if (pos == start)
    return std::nullopt;
  return value;
}

} // namespace

std::optional<expired_token> parse_expired_token(std::string_view message) {
  auto at = message.find(sentence);
  if (at == std::string_view::npos)
    return std::nullopt;
  auto pos = at + sentence.size();
  auto now = number_at(message, pos);
  constexpr std::string_view found = " found ";
  if (!now || message.substr(pos, found.size()) != found)
    return std::nullopt;
  pos += found.size();
  auto expiry = number_at(message, pos);
  if (!expiry)
    return std::nullopt;
  return expired_token{*now, *expiry};
}

std::optional<container_token_times> token_times(std::string_view serialized_token) {
  auto tok = hadoop::parse_token_proto(serialized_token);
  if (!tok || tok->kind != hadoop::container_token_kind)
    return std::nullopt;
  proto::ContainerTokenIdentifierProto id;
  if (!id.ParseFromString(tok->identifier) || !id.has_expirytimestamp())
    return std::nullopt;
  return container_token_times{id.has_creationtime() ? id.creationtime() : 0,
                               id.expirytimestamp()};
}

std::string describe_duration(int64_t ms) {
  auto s = (ms + 500) / 1000;
  std::string text;
  if (s >= 3600)
    text = std::to_string(s / 3600) + " h " + std::to_string(s % 3600 / 60) + " min";
  else if (s >= 60)
    text = std::to_string(s / 60) + " min " + std::to_string(s % 60) + " s";
  else
    return std::to_string(s) + " s";
  return text + " (" + std::to_string(s) + " s)";
}

std::string describe_clock_ahead(const std::string& host, const expired_token& x,
                                 const std::optional<container_token_times>& times) {
  std::string text = "node " + host + "'s clock ";
  if (times && times->created_ms > 0 && x.node_now_ms > times->created_ms)
    text += "is about " + describe_duration(x.node_now_ms - times->created_ms) +
            " ahead of the ResourceManager's";
  else
    text += "is ahead of the ResourceManager's by more than the container token "
            "lifetime (yarn.resourcemanager.rm.container-allocation.expiry-interval-ms, "
            "10 min by default) and " +
            describe_duration(x.node_now_ms - x.expiry_ms);
  text += ": its NodeManager takes every container token for expired and starts no "
          "container (YARN: This token is expired. current time is " +
          std::to_string(x.node_now_ms) + " found " + std::to_string(x.expiry_ms) +
          "); keep the nodes' clocks in step (NTP: chrony, ntpd, systemd-timesyncd)";
  return text;
}

std::optional<std::string> describe_am_clock_ahead(const std::string& rm_diagnostics,
                                                   int64_t rm_time_ms) {
  auto x = parse_expired_token(rm_diagnostics);
  if (!x || rm_diagnostics.find("Error launching appattempt") == std::string::npos)
    return std::nullopt;
  std::string text =
      "the ResourceManager could not start the AM: the clock of the node it "
      "chose ";
  if (rm_time_ms > 0 && x->node_now_ms > rm_time_ms)
    text += "is about " + describe_duration(x->node_now_ms - rm_time_ms) +
            " ahead of the ResourceManager's";
  else
    text += "is ahead of the ResourceManager's by more than the container token lifetime "
            "(yarn.resourcemanager.rm.container-allocation.expiry-interval-ms, 10 min by "
            "default)";
  return text + ", and its NodeManager takes every container token for expired (the "
                "ResourceManager's page of the application names the node of each "
                "attempt); keep the nodes' clocks in step (NTP: chrony, ntpd, "
                "systemd-timesyncd)";
}

} // namespace tony::yarn
