// Tokens sealed with the job secret on their way to executors: what opens,
// and everything that must not (another secret, job or generation, a
// flipped bit, a cut blob).

#include <gtest/gtest.h>

#include <string>

#include "messages/error.hpp"
#include "runtime/gate/token_seal.hpp"

namespace tony::gate {
namespace {

const std::string secret =
    "8f1c0d5e2b7a4c3d9e6f1a2b3c4d5e6f8f1c0d5e2b7a4c3d9e6f1a2b3c4d5e6f";
const std::string app = "application_1795407339797_0013";
const std::string tokens = std::string("HDTS\0\x01", 6) + "a token's bytes";

TEST(token_seal, sealed_tokens_open_with_the_same_secret_job_and_generation) {
  auto sealed = seal_tokens(secret, app, 3, tokens);
  ASSERT_EQ(sealed.size(), 12 + tokens.size() + 16);
  EXPECT_EQ(sealed.find("a token's bytes"), std::string::npos); // encrypted
  auto opened = open_tokens(secret, app, 3, sealed);
  ASSERT_TRUE(opened) << describe(opened.error());
  EXPECT_EQ(*opened, tokens);
}

TEST(token_seal, every_seal_is_different) {
  EXPECT_NE(seal_tokens(secret, app, 1, tokens), seal_tokens(secret, app, 1, tokens));
}

TEST(token_seal, another_secret_job_or_generation_does_not_open) {
  auto sealed = seal_tokens(secret, app, 3, tokens);
  auto other_secret = secret;
  other_secret[0] = '9';
  for (auto opened : {open_tokens(other_secret, app, 3, sealed),
                      open_tokens(secret, "application_1795407339797_0014", 3, sealed),
                      open_tokens(secret, app, 2, sealed)}) {
    ASSERT_FALSE(opened);
    EXPECT_EQ(opened.error().code(), errc::bad_secret);
    EXPECT_NE(describe(opened.error()).find("do not open"), std::string::npos);
  }
}

TEST(token_seal, a_changed_or_cut_blob_does_not_open) {
  auto sealed = seal_tokens(secret, app, 1, tokens);
  for (size_t i = 0; i < sealed.size(); ++i) {
    auto flipped = sealed;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x01);
    EXPECT_FALSE(open_tokens(secret, app, 1, flipped)) << "bit flipped at " << i;
  }
  EXPECT_FALSE(open_tokens(secret, app, 1, sealed.substr(0, sealed.size() - 1)));
  EXPECT_FALSE(open_tokens(secret, app, 1, sealed.substr(0, 27)));
  EXPECT_FALSE(open_tokens(secret, app, 1, ""));
}

TEST(token_seal, empty_credentials_seal_too) {
  auto sealed = seal_tokens(secret, app, 1, "");
  auto opened = open_tokens(secret, app, 1, sealed);
  ASSERT_TRUE(opened);
  EXPECT_EQ(*opened, "");
}

} // namespace
} // namespace tony::gate
