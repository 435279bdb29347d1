// libFuzzer target: the request path of every HTTP server tony runs, as the
// listener's session reads it (web/http_server.cpp): a complete head is
// parsed (parse_head), the route's rule decides the body's framing
// (body_reader), the body's bytes are fed as they arrive, in pieces, and a
// refusal becomes an answer (refusal_response). The target's path is
// decoded as the server routes by it (cpp-httplib's decode_url).
//
// The first two bytes of the input choose the route's cap and the size of
// the pieces the body arrives in; the rest is what the client sent.
// Properties checked besides "no crash": the head is within what was sent,
// a body never grows past its cap, a reader never takes more than it is
// given, and a finished body takes nothing more.

#include <httplib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "web/request_body.hpp"

namespace {

using namespace tony::http;

// The caps the routes use: none (most pages), small, the TensorBoard proxy's.
constexpr size_t caps[] = {0, 1, 64, 4096, size_t{32} << 20};

bool head_complete(std::string_view buf) {
  return buf.find("\r\n\r\n") != std::string_view::npos ||
         buf.find("\n\n") != std::string_view::npos;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2)
    return 0;
  body_rule rule;
  rule.max_bytes = caps[data[0] % (sizeof(caps) / sizeof(caps[0]))];
  size_t piece = 1 + data[1] % 64;
  std::string_view in{reinterpret_cast<const char*>(data) + 2, size - 2};
  if (!head_complete(in))
    return 0;
  auto head = parse_head(in);
  if (!head)
    return 0;
  if (head->size == 0 || head->size > in.size())
    std::abort();
  (void)head->find("content-length");
  auto target = std::string_view(head->target);
  (void)httplib::detail::decode_url(std::string(target.substr(0, target.find('?'))),
                                    false);
  body_reader reader(*head, rule);
  auto rest = in.substr(head->size);
  while (!reader.refused() && !reader.done() && !rest.empty()) {
    auto n = std::min(piece, rest.size());
    auto taken = reader.feed(rest.data(), n);
    if (taken > n)
      std::abort();
    if (reader.body().size() > rule.max_bytes)
      std::abort();
    if (!reader.refused() && !reader.done() && taken < n)
      std::abort(); // an unfinished body takes all it is given
    rest.remove_prefix(taken);
    if (taken < n)
      break; // the rest belongs to the next request
  }
  if (reader.done() && !reader.refused()) {
    if (reader.feed("x", 1) != 0)
      std::abort();
    if (reader.body().size() > rule.max_bytes)
      std::abort();
  }
  if (auto& r = reader.refused()) {
    auto answer = refusal_response(*r);
    if (answer.rfind("HTTP/1.1 ", 0) != 0)
      std::abort();
  }
  return 0;
}
