#pragma once

// One body policy for every HTTP server tony runs (web/http_server.hpp):
// what a request may send after its header is decided from the header
// alone, before a byte of the body is read.
//
//   header ─▶ parse_head ─▶ the route's body_rule (method, path)
//              │ malformed: 400            │ refuse_status: that answer
//              ▼                           ▼
//   framing: Content-Length n | Transfer-Encoding: chunked | neither (no body:
//   a request is never read to the end of the stream, RFC 9112 6.3)
//     - a body on a route that takes none: 413
//     - any Content-Encoding but identity: 415 (nothing is ever inflated)
//     - Content-Length beyond the route's cap: 413; both framings, or an
//       unknown transfer coding: 400 / 501
//   body_reader ─▶ bytes as they arrive, de-chunked, never past the cap
//              (413 when a chunked body grows past it)
//
// So a route that takes no body costs nothing whatever a client sends, and
// one that takes a body holds at most its cap.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tony::http {

/// What one route takes as a request body, decided from the method and the
/// decoded path before the body is read.
struct body_rule {
  /// The largest body the route takes, in bytes; 0: none.
  size_t max_bytes = 0;
  /// When not 0, the request is answered with this status and `refuse_text`
  /// (the whole body) at once, e.g. 403 for a rendezvous request without its
  /// token.
  int refuse_status = 0;
  std::string refuse_text;
};

/// The parts of a request's head the policy reads.
struct request_head {
  std::string method;
  std::string target; // as sent: path and query, still encoded
  std::string version;
  std::vector<std::pair<std::string, std::string>> headers; // in order, as sent
  size_t size = 0; // bytes of the head, the blank line included

  /// The value of the first header named `name` (case-insensitive).
  const std::string* find(std::string_view name) const;
};

/// Parses the head at the start of `buf`, which holds it in full (it ends
/// with a blank line). Nothing when it is not a request head.
std::optional<request_head> parse_head(std::string_view buf);

/// A refusal: the status and the answer's body ("tony: <what>\n").
struct refusal {
  int status = 0;
  std::string text;
};

/// Reads one request's body as its bytes arrive, within `rule`.
class body_reader {
public:
  /// Decides the framing from `head`; refused() says whether it may be read.
  body_reader(const request_head& head, const body_rule& rule);

  /// Takes the body's bytes from the front of `data`; the number taken (the
  /// rest belongs to the next request).
  size_t feed(const char* data, size_t size);

  /// The body is complete.
  bool done() const { return state_ == state::done; }

  /// Why the request is refused, once it is; nothing while it may go on.
  const std::optional<refusal>& refused() const { return refused_; }

  /// Whether the client waits for "100 Continue" before it sends the body.
  bool expects_continue() const { return expects_continue_; }

  /// The body's bytes so far.
  const std::string& body() const { return body_; }
  std::string take_body() { return std::move(body_); }

  /// The body's framing is chunked (it is de-chunked here).
  bool chunked() const { return chunked_; }

private:
  enum class state { size_line, data, data_end, trailer, done, failed };

  void refuse(int status, std::string text);
  size_t feed_chunked(const char* data, size_t size);
  bool take_size_line();
  bool take_trailer_line();

  state state_ = state::done;
  std::optional<refusal> refused_;
  bool expects_continue_ = false;
  bool chunked_ = false;
  size_t max_ = 0;
  uint64_t left_ = 0; // of the body (Content-Length) or of the current chunk
  std::string line_;  // a chunk-size or trailer line being read
  size_t trailer_bytes_ = 0;
  std::string body_;
};

/// "HTTP/1.1 <status> <reason>" with Connection: close and `text` as the
/// body: the answer to a refused request.
std::string refusal_response(const refusal& r);

} // namespace tony::http
