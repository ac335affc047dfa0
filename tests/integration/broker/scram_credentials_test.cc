// SCRAM credentials over the wire (KIP-554): AlterUserScramCredentials and
// DescribeUserScramCredentials answer every error Kafka's controller and
// ScramImage answer, a credential set through the API (salted by the client)
// is the one librdkafka's next SCRAM-SHA-256/512 authentication checks, on
// every broker of a cluster and across a restart, a deleted one no longer
// authenticates, the authorizer guards both APIs, and the admin port's
// scram-set / scram-delete / scram-list do the same as the API.
#include <librdkafka/rdkafka.h>
#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "admin/admin_commands.h"
#include "admin/cluster_admin_commands.h"
#include "exactly/broker/broker.h"
#include "exactly/broker/cluster.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "protocol/error_code.h"
#include "protocol/messages/all.h"
#include "support/raw_call.h"

namespace exactly::broker {
namespace {

using protocol::AlterUserScramCredentialsRequest;
using protocol::AlterUserScramCredentialsResponse;
using protocol::DescribeUserScramCredentialsRequest;
using protocol::DescribeUserScramCredentialsResponse;
using protocol::ErrorCode;
using ::testing::HasSubstr;

constexpr int8_t kSha256 = 1;
constexpr int8_t kSha512 = 2;

int16_t Code(ErrorCode c) { return static_cast<int16_t>(c); }

std::string Mechanism(int8_t m) {
  return m == kSha256 ? "SCRAM-SHA-256" : "SCRAM-SHA-512";
}

// Hi(password, salt, iterations) of RFC 5802, as a client computes it: PBKDF2
// with the mechanism's HMAC (computed here with OpenSSL, not the broker's
// code, so that a broker deriving its keys wrongly fails the test).
std::string Salted(int8_t mechanism, const std::string& password,
                   const std::string& salt, int iterations) {
  const EVP_MD* md = mechanism == kSha256 ? EVP_sha256() : EVP_sha512();
  std::string out(static_cast<size_t>(EVP_MD_size(md)), '\0');
  PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                    reinterpret_cast<const unsigned char*>(salt.data()),
                    static_cast<int>(salt.size()), iterations, md,
                    static_cast<int>(out.size()),
                    reinterpret_cast<unsigned char*>(out.data()));
  return out;
}

AlterUserScramCredentialsRequest::Upsertion Upsert(const std::string& user,
                                                   int8_t mechanism,
                                                   const std::string& password,
                                                   int32_t iterations = 4096) {
  AlterUserScramCredentialsRequest::Upsertion u;
  u.name = user;
  u.mechanism = mechanism;
  u.iterations = iterations;
  u.salt = "salt-of-" + user;
  u.salted_password = Salted(mechanism == kSha512 ? kSha512 : kSha256, password,
                             u.salt, std::max<int32_t>(iterations, 1));
  return u;
}

AlterUserScramCredentialsRequest::Deletion Delete(const std::string& user,
                                                  int8_t mechanism) {
  return {user, mechanism, {}};
}

// (user, error code, error message) of each result, sorted by user.
using Result = std::tuple<std::string, int16_t, std::string>;

std::vector<Result> Alter(
    uint16_t port,
    std::vector<AlterUserScramCredentialsRequest::Deletion> deletions,
    std::vector<AlterUserScramCredentialsRequest::Upsertion> upsertions) {
  AlterUserScramCredentialsRequest request;
  request.deletions = std::move(deletions);
  request.upsertions = std::move(upsertions);
  auto response =
      testing::Call<AlterUserScramCredentialsResponse>(port, 0, request);
  std::vector<Result> out;
  for (const auto& r : response.results)
    out.emplace_back(r.user, r.error_code, r.error_message.value_or("<null>"));
  std::sort(out.begin(), out.end());
  return out;
}

DescribeUserScramCredentialsResponse Describe(
    uint16_t port, std::optional<std::vector<std::string>> users) {
  DescribeUserScramCredentialsRequest request;
  if (users) {
    request.users.emplace();
    for (auto& u : *users) request.users->push_back({u, {}});
  }
  return testing::Call<DescribeUserScramCredentialsResponse>(port, 0, request);
}

// (mechanism, iterations) of a user, or its error code as a single pair
// (-error, 0).
std::vector<std::pair<int8_t, int32_t>> Infos(uint16_t port,
                                              const std::string& user) {
  auto response = Describe(port, std::vector<std::string>{user});
  EXPECT_EQ(response.results.size(), 1u);
  if (response.results.empty()) return {};
  const auto& r = response.results[0];
  if (r.error_code != 0) return {{static_cast<int8_t>(-r.error_code), 0}};
  std::vector<std::pair<int8_t, int32_t>> out;
  for (const auto& i : r.credential_infos)
    out.emplace_back(i.mechanism, i.iterations);
  return out;
}

// Whether librdkafka authenticates to `servers` (a SASL_PLAINTEXT listener)
// as `user` with `password`: a metadata request answered.
// Whether a librdkafka client logs in as `user` with `password`: true once a
// Metadata request is answered, false once librdkafka reports the login
// refused (RD_KAFKA_RESP_ERR__AUTHENTICATION); neither within 30 s fails the
// test. Waiting for the refusal, not for a timeout, keeps a refused login
// from costing seconds and from being mistaken for a slow broker.
bool Authenticates(const std::string& servers, int8_t mechanism,
                   const std::string& user, const std::string& password) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"bootstrap.servers", servers},
           {"security.protocol", "SASL_PLAINTEXT"},
           {"sasl.mechanism", Mechanism(mechanism)},
           {"sasl.username", user},
           {"sasl.password", password},
           {"log_level", "0"}}) {
    EXPECT_EQ(rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err),
              RD_KAFKA_CONF_OK)
        << err;
  }
  std::atomic<bool> refused{false};
  rd_kafka_conf_set_opaque(conf, &refused);
  rd_kafka_conf_set_error_cb(
      conf, [](rd_kafka_t*, int error, const char*, void* opaque) {
        if (error == RD_KAFKA_RESP_ERR__AUTHENTICATION)
          static_cast<std::atomic<bool>*>(opaque)->store(true);
      });
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  EXPECT_NE(rk, nullptr) << err;
  if (rk == nullptr) return false;
  std::optional<bool> logged_in;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!logged_in && std::chrono::steady_clock::now() < deadline) {
    const rd_kafka_metadata_t* md = nullptr;
    if (rd_kafka_metadata(rk, 0, nullptr, &md, 200) ==
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      logged_in = true;
    }
    if (md != nullptr) rd_kafka_metadata_destroy(md);
    rd_kafka_poll(rk, 0);  // serves the error callback
    if (!logged_in && refused.load()) logged_in = false;
  }
  rd_kafka_destroy(rk);
  EXPECT_TRUE(logged_in.has_value())
      << user << ": neither logged in nor refused within 30 s";
  return logged_in.value_or(false);
}

BrokerOptions SaslOptions() {
  BrokerOptions o;
  o.security.listeners = {{SecurityProtocol::kSaslPlaintext, 0}};
  o.security.sasl_users = {{"admin", "admin-pw"}};
  return o;
}

std::unique_ptr<Broker> Start(BrokerOptions options) {
  auto b = Broker::Start(std::move(options));
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? std::move(*b) : nullptr;
}

TEST(ScramCredentialsTest, ApiVersionsAdvertisesBothApis) {
  auto b = Start({});
  ASSERT_NE(b, nullptr);
  protocol::ApiVersionsRequest request;
  auto response =
      testing::Call<protocol::ApiVersionsResponse>(b->port(), 3, request);
  int found = 0;
  for (const auto& k : response.api_keys) {
    if (k.api_key == 50 || k.api_key == 51) {
      ++found;
      EXPECT_EQ(k.min_version, 0);
      EXPECT_EQ(k.max_version, 0);
    }
  }
  EXPECT_EQ(found, 2);
}

TEST(ScramCredentialsTest, DescribeListsEveryUserAndAnswersEachNamedOne) {
  auto b = Start(SaslOptions());
  ASSERT_NE(b, nullptr);
  const uint16_t port = b->port();
  ASSERT_THAT(Alter(port, {}, {Upsert("bob", kSha512, "bob-pw", 8192)}),
              ::testing::ElementsAre(Result{"bob", 0, "<null>"}));
  // Null and empty: every user with a credential ("admin" from the options
  // has both mechanisms at 4096).
  for (auto users : {std::optional<std::vector<std::string>>(),
                     std::optional<std::vector<std::string>>({})}) {
    auto all = Describe(port, users);
    EXPECT_EQ(all.error_code, 0);
    EXPECT_EQ(all.error_message, "");
    ASSERT_EQ(all.results.size(), 2u);
    EXPECT_EQ(all.results[0].user, "admin");
    ASSERT_EQ(all.results[0].credential_infos.size(), 2u);
    EXPECT_EQ(all.results[0].credential_infos[0].mechanism, kSha256);
    EXPECT_EQ(all.results[0].credential_infos[1].mechanism, kSha512);
    EXPECT_EQ(all.results[0].credential_infos[1].iterations, 4096);
    EXPECT_EQ(all.results[1].user, "bob");
    ASSERT_EQ(all.results[1].credential_infos.size(), 1u);
    EXPECT_EQ(all.results[1].credential_infos[0].mechanism, kSha512);
    EXPECT_EQ(all.results[1].credential_infos[0].iterations, 8192);
  }
  // Named: unknown -> RESOURCE_NOT_FOUND, twice -> one DUPLICATE_RESOURCE.
  auto named = Describe(port, std::vector<std::string>{"nobody", "bob", "admin",
                                                       "admin", "admin"});
  EXPECT_EQ(named.error_code, 0);
  ASSERT_EQ(named.results.size(), 3u);
  EXPECT_EQ(named.results[0].user, "nobody");
  EXPECT_EQ(named.results[0].error_code, Code(ErrorCode::kResourceNotFound));
  EXPECT_EQ(named.results[0].error_message,
            "Attempt to describe a user credential that does not exist: "
            "nobody");
  EXPECT_EQ(named.results[1].user, "bob");
  EXPECT_EQ(named.results[1].error_code, 0);
  EXPECT_EQ(named.results[1].error_message, "");  // as Kafka: not null
  EXPECT_EQ(named.results[1].credential_infos.size(), 1u);
  EXPECT_EQ(named.results[2].user, "admin");
  EXPECT_EQ(named.results[2].error_code, Code(ErrorCode::kDuplicateResource));
  EXPECT_EQ(named.results[2].error_message,
            "Cannot describe SCRAM credentials for the same user twice in a "
            "single request: admin");
  EXPECT_TRUE(named.results[2].credential_infos.empty());
}

TEST(ScramCredentialsTest, AlterRefusesWhatKafkasControllerRefuses) {
  auto b = Start(SaslOptions());
  ASSERT_NE(b, nullptr);
  const uint16_t port = b->port();
  const int16_t unacceptable = Code(ErrorCode::kUnacceptableCredential);
  const int16_t mechanism = Code(ErrorCode::kUnsupportedSaslMechanism);
  const int16_t duplicate = Code(ErrorCode::kDuplicateResource);
  const int16_t not_found = Code(ErrorCode::kResourceNotFound);
  const std::string twice =
      "A user credential cannot be altered twice in the same request";
  EXPECT_THAT(Alter(port, {Delete("d0", 0), Delete("d3", 3)},
                    {Upsert("u3", 3, "pw"), Upsert("u-1", -1, "pw")}),
              ::testing::ElementsAre(
                  Result{"d0", mechanism, "Unknown SCRAM mechanism"},
                  Result{"d3", mechanism, "Unknown SCRAM mechanism"},
                  Result{"u-1", mechanism, "Unknown SCRAM mechanism"},
                  Result{"u3", mechanism, "Unknown SCRAM mechanism"}));
  EXPECT_THAT(Alter(port, {Delete("", kSha256)},
                    {Upsert("few", kSha256, "pw", 4095),
                     Upsert("many", kSha512, "pw", 16385)}),
              ::testing::ElementsAre(
                  Result{"", unacceptable, "Username must not be empty"},
                  Result{"few", unacceptable, "Too few iterations"},
                  Result{"many", unacceptable, "Too many iterations"}));
  EXPECT_THAT(Alter(port, {}, {Upsert("", kSha256, "pw")}),
              ::testing::ElementsAre(
                  Result{"", unacceptable, "Username must not be empty"}));
  // Deleting what does not exist: no such user, or not that mechanism.
  ASSERT_THAT(Alter(port, {}, {Upsert("carol", kSha256, "pw", 16384)}),
              ::testing::ElementsAre(Result{"carol", 0, "<null>"}));
  EXPECT_THAT(
      Alter(port, {Delete("nobody", kSha256), Delete("carol", kSha512)}, {}),
      ::testing::ElementsAre(
          Result{"carol", not_found,
                 "Attempt to delete a user credential that does not exist"},
          Result{"nobody", not_found,
                 "Attempt to delete a user credential that does not exist"}));
  // The same user twice, across deletions and upsertions: refused whole,
  // the others of the request applied.
  EXPECT_THAT(
      Alter(port,
            {Delete("carol", kSha256), Delete("admin", kSha256),
             Delete("admin", kSha512)},
            {Upsert("carol", kSha512, "pw"), Upsert("dave", kSha256, "pw"),
             Upsert("erin", kSha256, "pw"), Upsert("erin", kSha512, "pw")}),
      ::testing::ElementsAre(
          Result{"admin", duplicate, twice}, Result{"carol", duplicate, twice},
          Result{"dave", 0, "<null>"}, Result{"erin", duplicate, twice}));
  using Pairs = std::vector<std::pair<int8_t, int32_t>>;
  EXPECT_EQ(Infos(port, "carol"), (Pairs{{kSha256, 16384}}));
  EXPECT_EQ(Infos(port, "admin"), (Pairs{{kSha256, 4096}, {kSha512, 4096}}));
  EXPECT_EQ(Infos(port, "dave"), (Pairs{{kSha256, 4096}}));
  EXPECT_EQ(Infos(port, "erin"), (Pairs{{static_cast<int8_t>(-not_found), 0}}));
  // A user refused once stays refused with the first reason (Kafka skips
  // its later alterations).
  EXPECT_THAT(
      Alter(port, {Delete("frank", kSha256)}, {Upsert("frank", kSha256, "pw")}),
      ::testing::ElementsAre(
          Result{"frank", not_found,
                 "Attempt to delete a user credential that does not exist"}));
}

TEST(ScramCredentialsTest, AnUpsertedCredentialAuthenticatesAtOnce) {
  auto b = Start(SaslOptions());
  ASSERT_NE(b, nullptr);
  const uint16_t port = b->port();
  const std::string sasl =
      b->bootstrap_servers(SecurityProtocol::kSaslPlaintext);
  for (int8_t m : {kSha256, kSha512}) {
    SCOPED_TRACE(Mechanism(m));
    const std::string user = "user-" + std::to_string(m);
    EXPECT_FALSE(Authenticates(sasl, m, user, "first"));
    ASSERT_THAT(Alter(port, {}, {Upsert(user, m, "first", 8192)}),
                ::testing::ElementsAre(Result{user, 0, "<null>"}));
    EXPECT_TRUE(Authenticates(sasl, m, user, "first"));
    EXPECT_FALSE(Authenticates(sasl, m, user, "wrong"));
    // Only that mechanism.
    EXPECT_FALSE(
        Authenticates(sasl, m == kSha256 ? kSha512 : kSha256, user, "first"));
    ASSERT_THAT(Alter(port, {}, {Upsert(user, m, "second", 4096)}),
                ::testing::ElementsAre(Result{user, 0, "<null>"}));
    EXPECT_TRUE(Authenticates(sasl, m, user, "second"));
    EXPECT_FALSE(Authenticates(sasl, m, user, "first"));
    ASSERT_THAT(Alter(port, {Delete(user, m)}, {}),
                ::testing::ElementsAre(Result{user, 0, "<null>"}));
    EXPECT_FALSE(Authenticates(sasl, m, user, "second"));
  }
  // The options' users can be changed too, and the change outlives a
  // restart.
  ASSERT_THAT(Alter(port, {}, {Upsert("admin", kSha512, "rotated")}),
              ::testing::ElementsAre(Result{"admin", 0, "<null>"}));
  ASSERT_TRUE(b->Restart(Broker::RestartMode::kClean).ok());
  EXPECT_TRUE(
      Authenticates(b->bootstrap_servers(SecurityProtocol::kSaslPlaintext),
                    kSha512, "admin", "rotated"));
  EXPECT_FALSE(
      Authenticates(b->bootstrap_servers(SecurityProtocol::kSaslPlaintext),
                    kSha512, "admin", "admin-pw"));
}

TEST(ScramCredentialsTest, AClustersBrokersShareTheCredentials) {
  ClusterOptions options;
  options.brokers = 3;
  options.broker = SaslOptions();
  auto cluster = Cluster::Start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Cluster& c = **cluster;
  // Set through broker 1, checked by broker 3 (bootstrapped alone).
  ASSERT_THAT(Alter(c.broker(1).port(), {}, {Upsert("zed", kSha256, "z-pw")}),
              ::testing::ElementsAre(Result{"zed", 0, "<null>"}));
  const std::string third =
      c.broker(3).bootstrap_servers(SecurityProtocol::kSaslPlaintext);
  EXPECT_TRUE(Authenticates(third, kSha256, "zed", "z-pw"));
  EXPECT_EQ(Infos(c.broker(2).port(), "zed"),
            (std::vector<std::pair<int8_t, int32_t>>{{kSha256, 4096}}));
  // Deleted through broker 2: broker 3 refuses at once.
  ASSERT_THAT(Alter(c.broker(2).port(), {Delete("zed", kSha256)}, {}),
              ::testing::ElementsAre(Result{"zed", 0, "<null>"}));
  EXPECT_FALSE(Authenticates(third, kSha256, "zed", "z-pw"));
  // The cluster's admin port: once for all.
  EXPECT_EQ(RunClusterAdminCommand(
                c, "scram-set user=yan mechanism=SCRAM-SHA-512 password=y-pw"),
            "ok");
  EXPECT_TRUE(Authenticates(third, kSha512, "yan", "y-pw"));
  EXPECT_EQ(RunClusterAdminCommand(c, "scram-list"),
            "ok user=admin mechanism=SCRAM-SHA-256 iterations=4096, "
            "user=admin mechanism=SCRAM-SHA-512 iterations=4096, "
            "user=yan mechanism=SCRAM-SHA-512 iterations=4096");
}

TEST(ScramCredentialsTest, TheAuthorizerGuardsBothApis) {
  BrokerOptions o = SaslOptions();
  o.security.authorizer = true;
  o.security.super_users = {"User:admin"};
  auto b = Start(o);
  ASSERT_NE(b, nullptr);
  // The PLAINTEXT port's ANONYMOUS has no ACL.
  auto described = Describe(b->port(), std::nullopt);
  EXPECT_EQ(described.error_code, Code(ErrorCode::kClusterAuthorizationFailed));
  EXPECT_TRUE(described.results.empty());
  const int16_t denied = Code(ErrorCode::kClusterAuthorizationFailed);
  EXPECT_THAT(
      Alter(b->port(), {Delete("admin", kSha256)},
            {Upsert("x", kSha256, "pw"), Upsert("admin", kSha256, "pw")}),
      ::testing::ElementsAre(
          Result{"admin", denied, "Cluster authorization failed."},
          Result{"x", denied, "Cluster authorization failed."}));
  EXPECT_TRUE(
      Authenticates(b->bootstrap_servers(SecurityProtocol::kSaslPlaintext),
                    kSha256, "admin", "admin-pw"));
  // A super user may.
  o.security.super_users = {"User:ANONYMOUS"};
  auto open = Start(o);
  ASSERT_NE(open, nullptr);
  EXPECT_EQ(Describe(open->port(), std::nullopt).error_code, 0);
  EXPECT_THAT(Alter(open->port(), {}, {Upsert("x", kSha256, "pw")}),
              ::testing::ElementsAre(Result{"x", 0, "<null>"}));
}

TEST(ScramCredentialsTest, TheAdminPortSetsDeletesAndListsCredentials) {
  auto b = Start(SaslOptions());
  ASSERT_NE(b, nullptr);
  const std::string sasl =
      b->bootstrap_servers(SecurityProtocol::kSaslPlaintext);
  EXPECT_EQ(RunAdminCommand(*b,
                            "scram-set user=carol mechanism=SCRAM-SHA-512 "
                            "password=carol-pw iterations=8192"),
            "ok");
  EXPECT_EQ(RunAdminCommand(*b, "scram-set user=dan password=dan-pw"), "ok");
  EXPECT_TRUE(Authenticates(sasl, kSha512, "carol", "carol-pw"));
  EXPECT_TRUE(Authenticates(sasl, kSha256, "dan", "dan-pw"));
  EXPECT_EQ(Infos(b->port(), "carol"),
            (std::vector<std::pair<int8_t, int32_t>>{{kSha512, 8192}}));
  EXPECT_EQ(RunAdminCommand(*b, "scram-list"),
            "ok user=admin mechanism=SCRAM-SHA-256 iterations=4096, "
            "user=admin mechanism=SCRAM-SHA-512 iterations=4096, "
            "user=carol mechanism=SCRAM-SHA-512 iterations=8192, "
            "user=dan mechanism=SCRAM-SHA-256 iterations=4096");
  EXPECT_EQ(
      RunAdminCommand(*b, "scram-delete user=carol mechanism=SCRAM-SHA-512"),
      "ok");
  EXPECT_FALSE(Authenticates(sasl, kSha512, "carol", "carol-pw"));
  EXPECT_THAT(RunAdminCommand(*b,
                              "scram-delete user=carol "
                              "mechanism=SCRAM-SHA-512"),
              HasSubstr("error: user 'carol' has no SCRAM-SHA-512 credential"));
  EXPECT_THAT(RunAdminCommand(*b, "scram-set user=x mechanism=MD5 password=p"),
              HasSubstr("error: unknown SCRAM mechanism 'MD5'"));
  EXPECT_THAT(RunAdminCommand(*b, "scram-set user=x password=p iterations=100"),
              HasSubstr("error: iterations must be in [4096, 16384], not 100"));
  EXPECT_THAT(RunAdminCommand(*b, "scram-set user=x"),
              HasSubstr("error: missing password="));
  EXPECT_THAT(RunAdminCommand(*b, "scram-delete user=dan"),
              HasSubstr("error: missing mechanism="));
  EXPECT_THAT(RunAdminCommand(*b, "help"), HasSubstr("scram-set user="));
}

}  // namespace
}  // namespace exactly::broker
