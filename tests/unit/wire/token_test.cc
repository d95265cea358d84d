// The rendezvous secret: its form, the HMAC under it, and the derived token.
#include "wire/token.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace dlaunch::rendezvous {
namespace {

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string text;
  for (unsigned char byte : bytes) {
    text += digits[byte >> 4];
    text += digits[byte & 15];
  }
  return text;
}

bool is_lower_hex(const std::string& text) {
  return text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

TEST(Token, AGeneratedTokenIs256RandomBitsInHex) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    std::string token = generate_token();
    EXPECT_EQ(token.size(), 64u) << token;
    EXPECT_TRUE(is_lower_hex(token)) << token;
    seen.insert(token);
  }
  EXPECT_EQ(seen.size(), 100u);
}

TEST(Token, RandomBytesHaveTheSizeAskedForAndDiffer) {
  EXPECT_EQ(random_bytes(kChallengeSize).size(), 32u);
  EXPECT_EQ(random_bytes(0).size(), 0u);
  EXPECT_NE(random_bytes(32), random_bytes(32));
}

// RFC 4231, test cases 1 and 2.
TEST(Token, HmacSha256MatchesTheRfcVectors) {
  EXPECT_EQ(hex(hmac_sha256(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(Token, TheJoinProofIsAnHmacOfTheLabelledNoncesAndJoin) {
  std::string challenge(32, 'c'), nonce(32, 'n');
  EXPECT_EQ(join_proof("token", challenge, nonce, "join"),
            hmac_sha256("token", "dlaunch rendezvous v3 join\n" + challenge + nonce + "join"));
  EXPECT_NE(join_proof("token", challenge, nonce, "join"), join_proof("other", challenge, nonce, "join"));
}

TEST(Token, ProofsMatchOnlyWhenEqualInSizeAndBytes) {
  std::string proof = hmac_sha256("k", "d");
  EXPECT_TRUE(proofs_match(proof, proof));
  std::string altered = proof;
  altered[31] = static_cast<char>(altered[31] ^ 1);
  EXPECT_FALSE(proofs_match(proof, altered));
  EXPECT_FALSE(proofs_match(proof, proof.substr(0, 31)));
  EXPECT_FALSE(proofs_match(proof, ""));
  EXPECT_TRUE(proofs_match("", ""));
}

TEST(Token, ADerivedTokenIsTheSameForOneJobAndDiffersForAnother) {
  std::string token = derive_token("1234.0", "1234", 1000);
  EXPECT_EQ(token, derive_token("1234.0", "1234", 1000));
  EXPECT_EQ(token, hex(hmac_sha256("dlaunch derived rendezvous token v1", "1234.0\n1234\n1000")));
  EXPECT_EQ(token.size(), 64u);
  EXPECT_TRUE(is_lower_hex(token));
  EXPECT_NE(token, derive_token("1234.1", "1234", 1000));
  EXPECT_NE(token, derive_token("1234.0", "1235", 1000));
  EXPECT_NE(token, derive_token("1234.0", "1234", 1001));
}

}  // namespace
}  // namespace dlaunch::rendezvous
