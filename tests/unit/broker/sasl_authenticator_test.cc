// The broker's SASL mechanisms, token by token: SCRAM-SHA-256 replays RFC
// 7677's example exchange byte for byte, SCRAM-SHA-512 and PLAIN run whole
// exchanges, and every malformed or wrong token fails with a reason (never a
// crash, never a success).
#include "security/sasl_authenticator.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "security/credentials.h"
#include "security/scram_crypto.h"

namespace exactly::broker {
namespace {

using Outcome = SaslAuthenticator::Outcome;

std::string Unbase64(const std::string& s) {
  std::string out;
  EXPECT_TRUE(absl::Base64Unescape(s, &out));
  return out;
}

// RFC 7677, section 3: user "user", password "pencil".
constexpr char kRfcClientFirst[] = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
constexpr char kRfcServerNonce[] = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
constexpr char kRfcServerFirst[] =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
    "s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
constexpr char kRfcClientFinal[] =
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
    "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
constexpr char kRfcServerFinal[] =
    "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

class SaslAuthenticatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_.SetScram("user", ScramAlgorithm::kSha256,
                    ScramCredentialFromPassword(
                        ScramAlgorithm::kSha256, "pencil",
                        Unbase64("W22ZaJ0SNY7soEsUEjb6gQ=="), 4096));
    store_.AddUser("alice", "alice-secret");
  }

  std::unique_ptr<SaslAuthenticator> RfcExchange() {
    return NewScramAuthenticator(ScramAlgorithm::kSha256, store_,
                                 kRfcServerNonce);
  }

  CredentialStore store_;
};

TEST_F(SaslAuthenticatorTest, ScramSha256ReplaysRfc7677) {
  auto auth = RfcExchange();
  SaslAuthenticator::Step first = auth->Evaluate(kRfcClientFirst);
  ASSERT_EQ(first.outcome, Outcome::kContinue) << first.error;
  EXPECT_EQ(first.token, kRfcServerFirst);
  SaslAuthenticator::Step final_step = auth->Evaluate(kRfcClientFinal);
  ASSERT_EQ(final_step.outcome, Outcome::kSucceeded) << final_step.error;
  EXPECT_EQ(final_step.token, kRfcServerFinal);
  EXPECT_EQ(auth->user(), "user");
}

TEST_F(SaslAuthenticatorTest, ScramRefusesAWrongProof) {
  auto auth = RfcExchange();
  ASSERT_EQ(auth->Evaluate(kRfcClientFirst).outcome, Outcome::kContinue);
  std::string wrong = kRfcClientFinal;
  wrong[wrong.size() - 3] = wrong[wrong.size() - 3] == 'A' ? 'B' : 'A';
  SaslAuthenticator::Step step = auth->Evaluate(wrong);
  EXPECT_EQ(step.outcome, Outcome::kFailed);
  EXPECT_EQ(step.error,
            "Authentication failed during authentication due to invalid "
            "credentials with SASL mechanism SCRAM-SHA-256");
  EXPECT_EQ(auth->user(), "");
}

TEST_F(SaslAuthenticatorTest, ScramRefusesAnUnknownUserAtOnce) {
  auto auth = NewSaslAuthenticator("SCRAM-SHA-256", store_);
  SaslAuthenticator::Step step = auth->Evaluate("n,,n=mallory,r=abcdef");
  EXPECT_EQ(step.outcome, Outcome::kFailed);
  EXPECT_NE(step.error.find("invalid credentials"), std::string::npos);
}

TEST_F(SaslAuthenticatorTest, ScramRefusesAForeignNonce) {
  auto auth = RfcExchange();
  ASSERT_EQ(auth->Evaluate(kRfcClientFirst).outcome, Outcome::kContinue);
  SaslAuthenticator::Step step =
      auth->Evaluate("c=biws,r=somebodyelse,p=dHzbZapWIk4jUhN+Ute9ytag9zjf");
  EXPECT_EQ(step.outcome, Outcome::kFailed);
}

// librdkafka sends its nonce again in front of the combined one; Kafka's
// server accepts a nonce that ends with its own, so this broker does too (the
// proof is computed over what was sent).
TEST_F(SaslAuthenticatorTest, ScramAcceptsLibrdkafkasDoubledNonce) {
  const ScramAlgorithm a = ScramAlgorithm::kSha512;
  auto auth = NewSaslAuthenticator("SCRAM-SHA-512", store_);
  const std::string client_nonce = "c1i2e3n4t5n6o7n8c9e0";
  const std::string first_bare = absl::StrCat("n=alice,r=", client_nonce);
  SaslAuthenticator::Step first = auth->Evaluate("n,," + first_bare);
  ASSERT_EQ(first.outcome, Outcome::kContinue) << first.error;
  // r=<nonce>,s=<salt>,i=<iterations>
  const std::string& sf = first.token;
  const std::string nonce = sf.substr(2, sf.find(',') - 2);
  ASSERT_EQ(nonce.rfind(client_nonce, 0), 0u);
  const size_t salt_at = sf.find(",s=") + 3;
  const std::string salt =
      Unbase64(sf.substr(salt_at, sf.find(",i=") - salt_at));
  const int iterations = std::stoi(sf.substr(sf.find(",i=") + 3));
  EXPECT_EQ(iterations, kMinScramIterations);

  const std::string without_proof =
      absl::StrCat("c=biws,r=", client_nonce, nonce);
  const std::string auth_message =
      absl::StrCat(first_bare, ",", sf, ",", without_proof);
  const std::string salted =
      scram::SaltPassword(a, "alice-secret", salt, iterations);
  const std::string client_key = scram::Hmac(a, salted, "Client Key");
  const std::string signature =
      scram::Hmac(a, scram::Hash(a, client_key), auth_message);
  std::string proof(client_key.size(), '\0');
  for (size_t i = 0; i < proof.size(); ++i)
    proof[i] = static_cast<char>(client_key[i] ^ signature[i]);
  SaslAuthenticator::Step last = auth->Evaluate(
      absl::StrCat(without_proof, ",p=", absl::Base64Escape(proof)));
  ASSERT_EQ(last.outcome, Outcome::kSucceeded) << last.error;
  EXPECT_EQ(last.token,
            absl::StrCat("v=", absl::Base64Escape(scram::Hmac(
                                   a, scram::Hmac(a, salted, "Server Key"),
                                   auth_message))));
  EXPECT_EQ(auth->user(), "alice");
}

TEST_F(SaslAuthenticatorTest, ScramSurvivesGarbage) {
  for (const std::string& garbage :
       {std::string(""), std::string("n"), std::string("n,,"),
        std::string("p=tls-unique,,n=alice,r=x"), std::string("n,,n=alice"),
        std::string("n,,n=al=ZZice,r=abc"), std::string("y,a=bob,n=alice,r=x"),
        std::string("\xff\xfe\x00\x01", 4)}) {
    auto auth = NewSaslAuthenticator("SCRAM-SHA-256", store_);
    EXPECT_EQ(auth->Evaluate(garbage).outcome, Outcome::kFailed)
        << absl::CHexEscape(garbage);
  }
  // A final message that is not one, after a good first message.
  for (const std::string& garbage :
       {std::string(""), std::string("c=biws"), std::string("c=biws,r=x,p="),
        std::string("c=!!,r=x,p=abc"), std::string(",p=%%%")}) {
    auto auth = RfcExchange();
    ASSERT_EQ(auth->Evaluate(kRfcClientFirst).outcome, Outcome::kContinue);
    EXPECT_EQ(auth->Evaluate(garbage).outcome, Outcome::kFailed) << garbage;
    // And nothing after a failure succeeds.
    EXPECT_EQ(auth->Evaluate(kRfcClientFinal).outcome, Outcome::kFailed);
  }
}

TEST_F(SaslAuthenticatorTest, PlainChecksThePassword) {
  using namespace std::string_literals;
  auto good = NewSaslAuthenticator("PLAIN", store_);
  SaslAuthenticator::Step step = good->Evaluate("\0alice\0alice-secret"s);
  EXPECT_EQ(step.outcome, Outcome::kSucceeded) << step.error;
  EXPECT_EQ(good->user(), "alice");

  auto same_authzid = NewSaslAuthenticator("PLAIN", store_);
  EXPECT_EQ(same_authzid->Evaluate("alice\0alice\0alice-secret"s).outcome,
            Outcome::kSucceeded);

  auto wrong = NewSaslAuthenticator("PLAIN", store_);
  step = wrong->Evaluate("\0alice\0alice-secreT"s);
  EXPECT_EQ(step.outcome, Outcome::kFailed);
  EXPECT_EQ(step.error, "Authentication failed: Invalid username or password");
  EXPECT_EQ(wrong->user(), "");

  auto other = NewSaslAuthenticator("PLAIN", store_);
  step = other->Evaluate("bob\0alice\0alice-secret"s);
  EXPECT_EQ(step.outcome, Outcome::kFailed);
  EXPECT_NE(step.error.find("authorization id"), std::string::npos);

  for (const std::string& garbage :
       {""s, "alice"s, "\0alice"s, "\0\0\0\0"s, "\0alice\0pw\0extra"s}) {
    auto auth = NewSaslAuthenticator("PLAIN", store_);
    EXPECT_EQ(auth->Evaluate(garbage).outcome, Outcome::kFailed)
        << absl::CHexEscape(garbage);
  }
}

TEST_F(SaslAuthenticatorTest, UnknownMechanismsHaveNoAuthenticator) {
  EXPECT_EQ(NewSaslAuthenticator("GSSAPI", store_), nullptr);
  EXPECT_EQ(NewSaslAuthenticator("OAUTHBEARER", store_), nullptr);
  EXPECT_EQ(NewSaslAuthenticator("plain", store_), nullptr);
}

TEST(CredentialStoreTest, ScramCredentialsCanBeReplacedAndDeleted) {
  CredentialStore store;
  store.AddUser("alice", "pw");
  std::optional<ScramCredential> before =
      store.FindScram("alice", ScramAlgorithm::kSha256);
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(before->iterations, kMinScramIterations);
  EXPECT_EQ(before->salt.size(), 16u);
  const std::string old_key = before->stored_key;
  store.SetScram("alice", ScramAlgorithm::kSha256,
                 ScramCredentialFromPassword(ScramAlgorithm::kSha256, "new",
                                             "salt", 8192));
  EXPECT_NE(store.FindScram("alice", ScramAlgorithm::kSha256)->stored_key,
            old_key);
  EXPECT_EQ(store.DescribeScram()["alice"].size(), 2u);
  EXPECT_TRUE(store.DeleteScram("alice", ScramAlgorithm::kSha512));
  EXPECT_FALSE(store.DeleteScram("alice", ScramAlgorithm::kSha512));
  EXPECT_FALSE(store.FindScram("alice", ScramAlgorithm::kSha512).has_value());
  EXPECT_FALSE(store.HasScram("alice", ScramAlgorithm::kSha512));
  EXPECT_TRUE(store.HasScram("alice", ScramAlgorithm::kSha256));
  // PLAIN keeps the password.
  EXPECT_TRUE(store.CheckPassword("alice", "pw"));
  EXPECT_FALSE(store.CheckPassword("alice", "new"));
  EXPECT_FALSE(store.CheckPassword("bob", "pw"));
}

}  // namespace
}  // namespace exactly::broker
