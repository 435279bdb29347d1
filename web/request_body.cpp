#include "web/request_body.hpp"

#include <algorithm>
#include <cstring>

#include "base/text.hpp"

namespace tony::http {

namespace {

// A chunk-size line ("1a2b;ext=x") and all trailer lines together.
constexpr size_t max_size_line = 1024;
constexpr size_t max_trailer_bytes = 8 << 10;

bool is_token_char(char c) {
  return c > 32 && c < 127 && std::strchr("()<>@,;:\\\"/[]?={}", c) == nullptr;
}

// Content-Length: digits only; nothing when it is not that or overflows.
std::optional<uint64_t> parse_length(const std::string& v) {
  auto s = base::trim(v);
  if (s.empty() || s.size() > 19)
    return std::nullopt;
  uint64_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

const char* reason(int status) {
  switch (status) {
  case 400:
    return "Bad Request";
  case 403:
    return "Forbidden";
  case 404:
    return "Not Found";
  case 405:
    return "Method Not Allowed";
  case 408:
    return "Request Timeout";
  case 410:
    return "Gone";
  case 413:
    return "Content Too Large";
  case 415:
    return "Unsupported Media Type";
  case 417:
    return "Expectation Failed";
  case 501:
    return "Not Implemented";
  case 503:
    return "Service Unavailable";
  default:
    return "Error";
  }
}

} // namespace

const std::string* request_head::find(std::string_view name) const {
  auto want = base::lower(name);
  for (auto& [k, v] : headers)
    if (k.size() == want.size() && base::lower(k) == want)
      return &v;
  return nullptr;
}

std::optional<request_head> parse_head(std::string_view buf) {
  request_head h;
  size_t pos = 0;
  auto next_line = [&](std::string_view& line) {
    auto eol = buf.find('\n', pos);
    if (eol == std::string_view::npos)
      return false;
    line = buf.substr(pos, eol - pos);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    pos = eol + 1;
    return true;
  };
  std::string_view line;
  if (!next_line(line))
    return std::nullopt;
  auto sp1 = line.find(' ');
  auto sp2 = line.rfind(' ');
  if (sp1 == std::string_view::npos || sp2 == sp1)
    return std::nullopt;
  h.method = std::string(line.substr(0, sp1));
  h.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  h.version = std::string(line.substr(sp2 + 1));
  if (h.method.empty() || h.target.empty() || h.version.rfind("HTTP/1.", 0) != 0 ||
      !std::all_of(h.method.begin(), h.method.end(), is_token_char))
    return std::nullopt;
  for (;;) {
    if (!next_line(line))
      return std::nullopt;
    if (line.empty())
      break;
    auto colon = line.find(':');
    // No folded lines (RFC 9112 5.2), no space before the colon.
    if (colon == std::string_view::npos || colon == 0 || line[0] == ' ' ||
        line[0] == '\t' || line[colon - 1] == ' ' || line[colon - 1] == '\t')
      return std::nullopt;
    auto name = line.substr(0, colon);
    if (!std::all_of(name.begin(), name.end(), is_token_char))
      return std::nullopt;
    h.headers.emplace_back(std::string(name), base::trim(line.substr(colon + 1)));
  }
  h.size = pos;
  return h;
}

body_reader::body_reader(const request_head& head, const body_rule& rule)
    : max_(rule.max_bytes) {
  if (rule.refuse_status != 0) {
    state_ = state::failed;
    refused_ = refusal{rule.refuse_status, rule.refuse_text};
    return;
  }
  auto te = head.find("Transfer-Encoding");
  std::optional<uint64_t> length;
  for (auto& [k, v] : head.headers) {
    if (base::lower(k) != "content-length")
      continue;
    auto n = parse_length(v);
    if (!n || (length && *length != *n)) {
      refuse(400, "the request's Content-Length is not one number");
      return;
    }
    length = n;
  }
  if (te != nullptr) {
    if (length) {
      refuse(400, "the request has both a Content-Length and a Transfer-Encoding");
      return;
    }
    if (base::lower(base::trim(*te)) != "chunked") {
      refuse(501, "the only transfer coding taken is chunked");
      return;
    }
    chunked_ = true;
  }
  bool has_body = chunked_ || (length && *length > 0);
  if (!has_body)
    return; // done: no body (never read to the end of the stream)
  if (max_ == 0) {
    refuse(413, "this path takes no request body");
    return;
  }
  if (auto ce = head.find("Content-Encoding");
      ce != nullptr && base::lower(base::trim(*ce)) != "identity" && !ce->empty()) {
    refuse(415, "request bodies are taken only without a Content-Encoding (" + *ce +
                    " is not inflated here)");
    return;
  }
  if (length && *length > max_) {
    refuse(413, "the request body of " + std::to_string(*length) +
                    " bytes is larger than this path takes (" + std::to_string(max_) +
                    " bytes)");
    return;
  }
  if (auto expect = head.find("Expect"); expect != nullptr) {
    if (base::lower(base::trim(*expect)) != "100-continue") {
      refuse(417, "the only expectation met is 100-continue");
      return;
    }
    expects_continue_ = true;
  }
  if (chunked_) {
    state_ = state::size_line;
  } else {
    state_ = state::data;
    left_ = *length;
    body_.reserve(static_cast<size_t>(left_));
  }
}

void body_reader::refuse(int status, std::string text) {
  state_ = state::failed;
  refused_ = refusal{status, "tony: " + text + "\n"};
}

size_t body_reader::feed(const char* data, size_t size) {
  if (state_ == state::done || state_ == state::failed)
    return 0;
  if (chunked_)
    return feed_chunked(data, size);
  auto n = static_cast<size_t>(std::min<uint64_t>(left_, size));
  body_.append(data, n);
  left_ -= n;
  if (left_ == 0)
    state_ = state::done;
  return n;
}

size_t body_reader::feed_chunked(const char* data, size_t size) {
  size_t pos = 0;
  while (pos < size && state_ != state::done && state_ != state::failed) {
    switch (state_) {
    case state::size_line:
    case state::trailer:
    case state::data_end: {
      auto c = data[pos++];
      if (c != '\n') {
        line_.push_back(c);
        if (line_.size() > max_size_line)
          refuse(400, "a chunk-size or trailer line of the request is too long");
        break;
      }
      if (!line_.empty() && line_.back() == '\r')
        line_.pop_back();
      if (state_ == state::data_end) {
        if (!line_.empty())
          refuse(400, "a chunk of the request does not end where its size says");
        else
          state_ = state::size_line;
      } else if (state_ == state::size_line) {
        take_size_line();
      } else {
        take_trailer_line();
      }
      line_.clear();
      break;
    }
    case state::data: {
      auto n = static_cast<size_t>(std::min<uint64_t>(left_, size - pos));
      body_.append(data + pos, n);
      pos += n;
      left_ -= n;
      if (left_ == 0)
        state_ = state::data_end;
      break;
    }
    default:
      break;
    }
  }
  return pos;
}

bool body_reader::take_size_line() {
  auto hex = std::string_view(line_).substr(0, line_.find(';'));
  while (!hex.empty() && (hex.back() == ' ' || hex.back() == '\t'))
    hex.remove_suffix(1);
  if (hex.empty() || hex.size() > 16) {
    refuse(400, "a chunk size of the request is not a hex number");
    return false;
  }
  uint64_t n = 0;
  for (char c : hex) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) {
      refuse(400, "a chunk size of the request is not a hex number");
      return false;
    }
    n = n * 16 + static_cast<uint64_t>(d);
  }
  if (n > max_ - body_.size()) {
    refuse(413, "the request body is larger than this path takes (" +
                    std::to_string(max_) + " bytes)");
    return false;
  }
  if (n == 0) {
    state_ = state::trailer;
    return true;
  }
  left_ = n;
  state_ = state::data;
  return true;
}

bool body_reader::take_trailer_line() {
  if (line_.empty()) {
    state_ = state::done;
    return true;
  }
  trailer_bytes_ += line_.size();
  if (trailer_bytes_ > max_trailer_bytes) {
    refuse(400, "the request's trailer is too long");
    return false;
  }
  return true; // trailer fields are read and dropped
}

std::string refusal_response(const refusal& r) {
  auto& text = r.text;
  return "HTTP/1.1 " + std::to_string(r.status) + " " + reason(r.status) +
         "\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n"
         "Content-Length: " +
         std::to_string(text.size()) + "\r\n\r\n" + text;
}

} // namespace tony::http
