// The body policy's pieces without a server (web/request_body.hpp): the
// head parser, the framing decisions and the chunked reader.

#include "web/request_body.hpp"

#include <gtest/gtest.h>

#include <string>

namespace tony::http {
namespace {

request_head head_of(const std::string& text) {
  auto h = parse_head(text);
  EXPECT_TRUE(h) << text;
  return h ? *h : request_head{};
}

body_rule takes(size_t n) {
  body_rule r;
  r.max_bytes = n;
  return r;
}

TEST(request_body, the_head_is_parsed_with_its_headers_in_order) {
  auto h = head_of("POST /a/b?x=1 HTTP/1.1\r\nHost: tony\r\nX-A:  1 \r\n\r\nBODY");
  EXPECT_EQ(h.method, "POST");
  EXPECT_EQ(h.target, "/a/b?x=1");
  EXPECT_EQ(h.version, "HTTP/1.1");
  ASSERT_EQ(h.headers.size(), 2u);
  EXPECT_EQ(*h.find("x-a"), "1");
  EXPECT_EQ(
      h.size,
      std::string("POST /a/b?x=1 HTTP/1.1\r\nHost: tony\r\nX-A:  1 \r\n\r\n").size());
}

TEST(request_body, malformed_heads_are_not_parsed) {
  for (const char* bad : {"GET /\r\n\r\n", "GET / HTTP/1.1\r\n folded: x\r\n\r\n",
                          "GET / HTTP/1.1\r\nNo colon\r\n\r\n", "GET / SPDY/3\r\n\r\n",
                          "GET / HTTP/1.1\r\nName : v\r\n\r\n", "G(T / HTTP/1.1\r\n\r\n",
                          "GET / HTTP/1.1\r\nHost: x\r\n"})
    EXPECT_FALSE(parse_head(bad)) << bad;
}

TEST(request_body, a_request_without_framing_has_no_body) {
  // Never read to the end of the stream: what follows is the next request.
  body_reader r{head_of("POST / HTTP/1.1\r\n\r\n"), takes(100)};
  EXPECT_FALSE(r.refused());
  EXPECT_TRUE(r.done());
  EXPECT_EQ(r.feed("more bytes", 10), 0u);
  EXPECT_EQ(r.body(), "");
}

TEST(request_body, a_body_on_a_route_that_takes_none_is_refused_unread) {
  for (const char* h : {"POST / HTTP/1.1\r\nContent-Length: 629145600\r\n\r\n",
                        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"}) {
    body_reader r{head_of(h), body_rule{}};
    ASSERT_TRUE(r.refused()) << h;
    EXPECT_EQ(r.refused()->status, 413) << h;
    EXPECT_EQ(r.feed("5\r\nhello", 8), 0u);
  }
}

TEST(request_body, a_content_encoding_is_refused_never_inflated) {
  body_reader r{head_of("POST / HTTP/1.1\r\nContent-Encoding: gzip\r\n"
                        "Content-Length: 10\r\n\r\n"),
                takes(100)};
  ASSERT_TRUE(r.refused());
  EXPECT_EQ(r.refused()->status, 415);
  body_reader identity{head_of("POST / HTTP/1.1\r\nContent-Encoding: identity\r\n"
                               "Content-Length: 2\r\n\r\n"),
                       takes(100)};
  EXPECT_FALSE(identity.refused());
}

TEST(request_body, a_length_past_the_cap_is_refused_before_the_body) {
  body_reader r{head_of("PUT /k HTTP/1.1\r\nContent-Length: 101\r\n\r\n"), takes(100)};
  ASSERT_TRUE(r.refused());
  EXPECT_EQ(r.refused()->status, 413);
}

TEST(request_body, ambiguous_framings_are_refused) {
  body_rule rule = takes(100);
  struct {
    const char* head;
    int status;
  } cases[] = {
      {"POST / HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501},
      {"POST / HTTP/1.1\r\nContent-Length: 2\r\nExpect: magic\r\n\r\n", 417},
  };
  for (auto& c : cases) {
    body_reader r{head_of(c.head), rule};
    ASSERT_TRUE(r.refused()) << c.head;
    EXPECT_EQ(r.refused()->status, c.status) << c.head;
  }
}

TEST(request_body, a_sized_body_is_read_to_its_length_only) {
  body_reader r{head_of("PUT /k HTTP/1.1\r\nContent-Length: 5\r\n\r\n"), takes(100)};
  EXPECT_FALSE(r.done());
  EXPECT_EQ(r.feed("hel", 3), 3u);
  EXPECT_EQ(r.feed("loGET /", 7), 2u);
  EXPECT_TRUE(r.done());
  EXPECT_EQ(r.body(), "hello");
}

TEST(request_body, a_chunked_body_is_dechunked_byte_by_byte) {
  body_reader r{head_of("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n"),
                takes(100)};
  std::string wire = "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\nNEXT";
  size_t taken = 0;
  for (size_t i = 0; i < wire.size() && !r.done(); ++i)
    taken += r.feed(wire.data() + i, 1);
  EXPECT_FALSE(r.refused());
  ASSERT_TRUE(r.done());
  EXPECT_EQ(r.body(), "hello world");
  EXPECT_EQ(wire.substr(taken), "NEXT");
}

TEST(request_body, a_chunked_body_past_the_cap_is_refused_at_its_chunk_size) {
  body_reader r{head_of("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
                takes(8)};
  std::string wire = "5\r\nhello\r\n4\r\n";
  r.feed(wire.data(), wire.size());
  ASSERT_TRUE(r.refused());
  EXPECT_EQ(r.refused()->status, 413);
  body_reader huge{head_of("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
                   takes(8)};
  std::string claim = "ffffffffffffffff\r\n";
  huge.feed(claim.data(), claim.size());
  ASSERT_TRUE(huge.refused());
  EXPECT_EQ(huge.refused()->status, 413);
}

TEST(request_body, malformed_chunks_are_refused) {
  for (std::string wire :
       {std::string("zz\r\n"), std::string("2\r\nabc\r\n"), std::string(2000, '1')}) {
    body_reader r{head_of("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
                  takes(1 << 20)};
    r.feed(wire.data(), wire.size());
    ASSERT_TRUE(r.refused()) << wire.substr(0, 20);
    EXPECT_EQ(r.refused()->status, 400);
  }
}

TEST(request_body, a_rule_may_refuse_before_anything_is_read) {
  body_rule rule;
  rule.refuse_status = 403;
  rule.refuse_text = "no token\n";
  body_reader r{head_of("GET / HTTP/1.1\r\n\r\n"), rule};
  ASSERT_TRUE(r.refused());
  auto answer = refusal_response(*r.refused());
  EXPECT_EQ(answer.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << answer;
  EXPECT_NE(answer.find("Connection: close\r\n"), std::string::npos);
  EXPECT_EQ(answer.substr(answer.size() - 9), "no token\n");
}

TEST(request_body, expect_continue_is_noted_for_a_body_taken) {
  body_reader r{
      head_of("PUT /k HTTP/1.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"),
      takes(100)};
  EXPECT_FALSE(r.refused());
  EXPECT_TRUE(r.expects_continue());
}

} // namespace
} // namespace tony::http
