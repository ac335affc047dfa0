// The bundled broker's security through the SDK (librdkafka): TLS, SASL PLAIN
// and SCRAM listeners each carry an exactly-once transaction end to end, a
// client is told the endpoints of the listener it came through, bad
// credentials fail clearly, and broken or hostile connections (plaintext on a
// TLS port, requests before authentication, cut-off exchanges) are closed
// without harm to anyone else.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exactly/broker/broker.h"
#include "exactly/broker/cluster.h"
#include "exactly/exactly.h"
#include "protocol/error_code.h"
#include "protocol/messages/all.h"
#include "protocol/request_header.h"
#include "sdk_test_util.h"
#include "support/raw_call.h"
#include "support/raw_connection.h"
#include "support/temp_dir.h"
#include "support/test_certificates.h"

namespace exactly::testing {
namespace {

using broker::Broker;
using broker::BrokerOptions;
using broker::SecurityProtocol;
using ::testing::HasSubstr;

constexpr int kRecords = 20;

// How a client reaches one listener: its librdkafka security properties.
struct Listener {
  std::string name;
  SecurityProtocol protocol;
  std::map<std::string, std::string> properties;
};

class SecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::getenv("EXACTLY_KAFKA_CLUSTER") != nullptr) {
      GTEST_SKIP() << "tests the bundled broker's own listeners (the main "
                      "label runs it); the Kafka harness has no SASL or TLS";
    }
    pki_ = MakeTestPki(dir_.path());
    ASSERT_FALSE(pki_.ca_certificate.empty()) << "could not make test PKI";
  }

  BrokerOptions Options(bool client_auth = false) const {
    BrokerOptions o;
    o.security.listeners = {{SecurityProtocol::kSsl, 0},
                            {SecurityProtocol::kSaslPlaintext, 0},
                            {SecurityProtocol::kSaslSsl, 0}};
    o.security.ssl_certificate_file = pki_.broker_certificate;
    o.security.ssl_private_key_file = pki_.broker_key;
    if (client_auth) o.security.ssl_ca_file = pki_.ca_certificate;
    o.security.sasl_users = {{"alice", "alice-secret"}, {"bob", "bob-pw"}};
    return o;
  }

  std::map<std::string, std::string> Tls() const {
    return {{"ssl.ca.location", pki_.ca_certificate}};
  }

  std::map<std::string, std::string> Sasl(const std::string& mechanism,
                                          const std::string& user,
                                          const std::string& password) const {
    return {{"sasl.mechanism", mechanism},
            {"sasl.username", user},
            {"sasl.password", password}};
  }

  std::vector<Listener> Listeners() const {
    auto merge = [](std::map<std::string, std::string> a,
                    const std::map<std::string, std::string>& b) {
      a.insert(b.begin(), b.end());
      return a;
    };
    return {
        {"SSL", SecurityProtocol::kSsl, merge(Tls(), {})},
        {"SASL_PLAINTEXT PLAIN", SecurityProtocol::kSaslPlaintext,
         Sasl("PLAIN", "alice", "alice-secret")},
        {"SASL_PLAINTEXT SCRAM-SHA-256", SecurityProtocol::kSaslPlaintext,
         Sasl("SCRAM-SHA-256", "bob", "bob-pw")},
        {"SASL_SSL SCRAM-SHA-512", SecurityProtocol::kSaslSsl,
         merge(Tls(), Sasl("SCRAM-SHA-512", "alice", "alice-secret"))},
    };
  }

  static void Apply(const std::string& servers, SecurityProtocol protocol,
                    const std::map<std::string, std::string>& properties,
                    std::map<std::string, std::string>* out,
                    std::string* bootstrap) {
    *bootstrap = servers;
    (*out)["security.protocol"] =
        std::string(broker::SecurityProtocolName(protocol));
    for (const auto& [k, v] : properties) (*out)[k] = v;
  }

  // Commits kRecords in one transaction through `listener` and reads them
  // back read_committed through the same listener: the count read.
  int TransactThenRead(const std::string& servers, const Listener& listener,
                       const std::string& topic) {
    ProducerOptions p;
    p.transactional_id = "txn-" + topic;
    p.properties["transaction.timeout.ms"] = "10000";
    Apply(servers, listener.protocol, listener.properties, &p.properties,
          &p.bootstrap_servers);
    auto producer = TransactionalProducer::Create(p);
    EXPECT_TRUE(producer.ok()) << listener.name << ": " << producer.status();
    if (!producer.ok()) return -1;
    absl::Status s = (*producer)->Transact([&](Transaction& txn) {
      for (int i = 0; i < kRecords; ++i) {
        absl::Status sent =
            txn.Send({.topic = topic, .key = std::to_string(i), .value = "v"});
        if (!sent.ok()) return sent;
      }
      return absl::OkStatus();
    });
    EXPECT_TRUE(s.ok()) << listener.name << ": " << s;

    ConsumerOptions c;
    c.group_id = "reader-" + topic;
    c.properties["session.timeout.ms"] = "6000";
    c.properties["auto.offset.reset"] = "earliest";
    Apply(servers, listener.protocol, listener.properties, &c.properties,
          &c.bootstrap_servers);
    auto consumer = Consumer::Create(c);
    EXPECT_TRUE(consumer.ok()) << consumer.status();
    if (!consumer.ok()) return -1;
    EXPECT_TRUE((*consumer)->Subscribe({topic}).ok());
    int read = PollRecords(**consumer, kRecords, std::chrono::seconds(60));
    // Nothing more arrives (no duplicate, no marker read as a record).
    for (int i = 0; i < 5; ++i) {
      auto m = (*consumer)->Poll(std::chrono::milliseconds(100));
      if (m.ok() && m->has_value()) ++read;
    }
    return read;
  }

  TempDir dir_;
  TestPki pki_;
};

TEST_F(SecurityTest, EveryListenerCarriesATransactionEndToEnd) {
  auto started = Broker::Start(Options());
  ASSERT_TRUE(started.ok()) << started.status();
  Broker& b = **started;
  int n = 0;
  for (const Listener& listener : Listeners()) {
    SCOPED_TRACE(listener.name);
    const std::string topic = "secure-" + std::to_string(n++);
    ASSERT_TRUE(b.CreateTopic(topic, 2).ok());
    // The SASL clients would fail against any other listener's port, so a
    // record read back proves Metadata and FindCoordinator named this one.
    EXPECT_EQ(TransactThenRead(b.bootstrap_servers(listener.protocol), listener,
                               topic),
              kRecords);
    int stored = 0;
    for (int p = 0; p < 2; ++p) {
      auto log = b.ReadLog(topic, p);
      ASSERT_TRUE(log.ok());
      for (const auto& batch : *log)
        if (!batch.control) stored += static_cast<int>(batch.records.size());
    }
    EXPECT_EQ(stored, kRecords);
  }
}

TEST_F(SecurityTest, AClusterAdvertisesEachBrokersSecurePort) {
  broker::ClusterOptions options;
  options.brokers = 3;
  options.broker = Options();
  auto started = broker::Cluster::Start(options);
  ASSERT_TRUE(started.ok()) << started.status();
  broker::Cluster& cluster = **started;
  ASSERT_TRUE(cluster.broker(1).CreateTopic("replicated", 3, 3, {}).ok());
  const Listener sasl_ssl = Listeners()[3];
  // Only one broker in bootstrap.servers: the others are found through
  // Metadata, on their SASL_SSL ports.
  EXPECT_EQ(TransactThenRead(
                cluster.broker(2).bootstrap_servers(SecurityProtocol::kSaslSsl),
                sasl_ssl, "replicated"),
            kRecords);
}

TEST_F(SecurityTest, AWrongPasswordIsAClearError) {
  auto started = Broker::Start(Options());
  ASSERT_TRUE(started.ok()) << started.status();
  for (const std::string mechanism : {"PLAIN", "SCRAM-SHA-256"}) {
    ProducerOptions p;
    p.transactional_id = "txn-bad-" + mechanism;
    p.properties["transaction.timeout.ms"] = "10000";
    p.properties["socket.timeout.ms"] = "5000";
    p.transaction_call_timeout = std::chrono::seconds(3);
    Apply((*started)->bootstrap_servers(SecurityProtocol::kSaslPlaintext),
          SecurityProtocol::kSaslPlaintext,
          Sasl(mechanism, "alice", "not-her-password"), &p.properties,
          &p.bootstrap_servers);
    auto producer = TransactionalProducer::Create(p);
    ASSERT_FALSE(producer.ok()) << mechanism;
    EXPECT_THAT(std::string(producer.status().message()),
                HasSubstr("Authentication failed"))
        << mechanism << ": " << producer.status();
  }
}

TEST_F(SecurityTest, TlsClientAuthenticationNeedsACertificate) {
  auto started = Broker::Start(Options(/*client_auth=*/true));
  ASSERT_TRUE(started.ok()) << started.status();
  Listener with_certificate{"SSL with a client certificate",
                            SecurityProtocol::kSsl, Tls()};
  with_certificate.properties["ssl.certificate.location"] =
      pki_.client_certificate;
  with_certificate.properties["ssl.key.location"] = pki_.client_key;
  ASSERT_TRUE((*started)->CreateTopic("mtls", 1).ok());
  EXPECT_EQ(
      TransactThenRead((*started)->bootstrap_servers(SecurityProtocol::kSsl),
                       with_certificate, "mtls"),
      kRecords);

  ProducerOptions p;
  p.transactional_id = "txn-no-certificate";
  // A TLS alert after the handshake reads as a broken connection to
  // librdkafka, which it retries: one attempt is enough to see it fail.
  p.transaction_call_timeout = std::chrono::seconds(3);
  p.retry.max_retries = 0;
  p.properties["socket.timeout.ms"] = "5000";
  Apply((*started)->bootstrap_servers(SecurityProtocol::kSsl),
        SecurityProtocol::kSsl, Tls(), &p.properties, &p.bootstrap_servers);
  EXPECT_FALSE(TransactionalProducer::Create(p).ok());
}

TEST_F(SecurityTest, BrokenAndHostileConnectionsAreClosedHarmlessly) {
  using protocol::ErrorCode;
  auto started = Broker::Start(Options());
  ASSERT_TRUE(started.ok()) << started.status();
  Broker& b = **started;
  const uint16_t sasl = b.port(SecurityProtocol::kSaslPlaintext);

  {  // Plaintext Kafka on the TLS port: the handshake fails, the broker hangs
     // up.
    RawConnection c(b.port(SecurityProtocol::kSsl));
    ASSERT_TRUE(c.connected());
    protocol::RequestHeader h;
    h.api_key = static_cast<int16_t>(protocol::ApiKey::kApiVersions);
    h.correlation_id = 1;
    ASSERT_TRUE(c.Send(
        protocol::EncodeRequestFrame(h, protocol::ApiVersionsRequest{})));
    EXPECT_TRUE(c.ClosedByPeer());
  }
  {  // ApiVersions is served before authentication, Metadata is not.
    RawConnection c(sasl);
    auto versions = Exchange<protocol::ApiVersionsResponse>(
        c, 2, protocol::ApiVersionsRequest{});
    ASSERT_TRUE(versions.has_value());
    EXPECT_EQ(versions->error_code, 0);
    EXPECT_FALSE((Exchange<protocol::MetadataResponse>(
                      c, 4, protocol::MetadataRequest{}))
                     .has_value());
    EXPECT_TRUE(c.ClosedByPeer());
  }
  {  // A mechanism the broker does not enable: named, with the ones it does.
    RawConnection c(sasl);
    protocol::SaslHandshakeRequest handshake;
    handshake.mechanism = "GSSAPI";
    auto answer = Exchange<protocol::SaslHandshakeResponse>(c, 1, handshake);
    ASSERT_TRUE(answer.has_value());
    EXPECT_EQ(answer->error_code,
              static_cast<int16_t>(ErrorCode::kUnsupportedSaslMechanism));
    EXPECT_THAT(
        answer->mechanisms,
        ::testing::ElementsAre("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"));
    EXPECT_TRUE(c.ClosedByPeer());
  }
  {  // SaslAuthenticate without a handshake.
    RawConnection c(sasl);
    protocol::SaslAuthenticateRequest token;
    token.auth_bytes = "n,,n=alice,r=abc";
    auto answer = Exchange<protocol::SaslAuthenticateResponse>(c, 1, token);
    ASSERT_TRUE(answer.has_value());
    EXPECT_EQ(answer->error_code,
              static_cast<int16_t>(ErrorCode::kIllegalSaslState));
    EXPECT_TRUE(c.ClosedByPeer());
  }
  {  // A SASL handshake on the plaintext listener.
    RawConnection c(b.port());
    protocol::SaslHandshakeRequest handshake;
    handshake.mechanism = "PLAIN";
    auto answer = Exchange<protocol::SaslHandshakeResponse>(c, 1, handshake);
    ASSERT_TRUE(answer.has_value());
    EXPECT_EQ(answer->error_code,
              static_cast<int16_t>(ErrorCode::kIllegalSaslState));
  }
  {  // A wrong PLAIN password gets the reason, then the connection goes.
    RawConnection c(sasl);
    protocol::SaslHandshakeRequest handshake;
    handshake.mechanism = "PLAIN";
    ASSERT_TRUE(
        Exchange<protocol::SaslHandshakeResponse>(c, 1, handshake).has_value());
    protocol::SaslAuthenticateRequest token;
    token.auth_bytes = std::string("\0alice\0wrong", 12);
    auto answer = Exchange<protocol::SaslAuthenticateResponse>(c, 1, token);
    ASSERT_TRUE(answer.has_value());
    EXPECT_EQ(answer->error_code,
              static_cast<int16_t>(ErrorCode::kSaslAuthenticationFailed));
    EXPECT_EQ(answer->error_message,
              "Authentication failed: Invalid username or password");
    EXPECT_TRUE(c.ClosedByPeer());
  }
  {  // Cut off mid-exchange: after the SCRAM first message, and mid-frame.
    RawConnection c(sasl);
    protocol::SaslHandshakeRequest handshake;
    handshake.mechanism = "SCRAM-SHA-256";
    ASSERT_TRUE(
        Exchange<protocol::SaslHandshakeResponse>(c, 1, handshake).has_value());
    protocol::SaslAuthenticateRequest first;
    first.auth_bytes = "n,,n=alice,r=abcdefgh";
    auto answer = Exchange<protocol::SaslAuthenticateResponse>(c, 1, first);
    ASSERT_TRUE(answer.has_value());
    EXPECT_EQ(answer->error_code, 0);
    EXPECT_THAT(answer->auth_bytes, HasSubstr("r=abcdefgh"));
    ASSERT_TRUE(c.Send(std::string("\0\0\0\x40half", 8)));
  }
  {  // SaslHandshake v0: the tokens follow as raw frames, PLAIN answered with
     // an empty one, and the session then serves Metadata.
    RawConnection c(sasl);
    protocol::SaslHandshakeRequest handshake;
    handshake.mechanism = "PLAIN";
    ASSERT_TRUE(
        Exchange<protocol::SaslHandshakeResponse>(c, 0, handshake).has_value());
    const std::string token("\0bob\0bob-pw", 11);
    std::string frame = {0, 0, 0, static_cast<char>(token.size())};
    ASSERT_TRUE(c.Send(frame + token));
    std::optional<std::string> reply = c.ReadFrame();
    ASSERT_TRUE(reply.has_value());
    EXPECT_EQ(*reply, "");
    auto metadata =
        Exchange<protocol::MetadataResponse>(c, 4, protocol::MetadataRequest{});
    ASSERT_TRUE(metadata.has_value());
    ASSERT_EQ(metadata->brokers.size(), 1u);
    EXPECT_EQ(metadata->brokers[0].port, sasl);
  }
  // Everyone else is still served.
  ASSERT_TRUE(b.CreateTopic("after", 1).ok());
  EXPECT_EQ(TransactThenRead(b.bootstrap_servers(SecurityProtocol::kSaslSsl),
                             Listeners()[3], "after"),
            kRecords);
}

TEST_F(SecurityTest, BadSettingsFailToStartWithAReason) {
  BrokerOptions no_key = Options();
  no_key.security.ssl_private_key_file = dir_.path() + "/missing.key";
  auto started = Broker::Start(no_key);
  ASSERT_FALSE(started.ok());
  EXPECT_THAT(std::string(started.status().message()),
              HasSubstr("missing.key"));

  BrokerOptions no_certificate = Options();
  no_certificate.security.ssl_certificate_file.clear();
  EXPECT_FALSE(Broker::Start(no_certificate).ok());

  BrokerOptions unknown = Options();
  unknown.security.sasl_mechanisms = {"PLAIN", "GSSAPI"};
  started = Broker::Start(unknown);
  ASSERT_FALSE(started.ok());
  EXPECT_THAT(std::string(started.status().message()), HasSubstr("GSSAPI"));

  BrokerOptions twice = Options();
  twice.security.listeners.push_back({SecurityProtocol::kSsl, 0});
  EXPECT_FALSE(Broker::Start(twice).ok());
}

}  // namespace
}  // namespace exactly::testing
