// The bundled broker's ACL authorizer through the SDK and librdkafka, over
// SASL_PLAINTEXT: a user with the ACLs a transaction needs commits one, a
// user without them is told why (a fatal TRANSACTIONAL_ID_AUTHORIZATION_FAILED
// from TransactionalProducer::Create, TOPIC_ and GROUP_AUTHORIZATION_FAILED),
// a super user needs no ACL, CreateAcls/DescribeAcls/DeleteAcls round-trip
// through librdkafka's Admin API, a cluster's brokers share their ACLs, and
// without the authorizer the ACL APIs answer SECURITY_DISABLED.
//
// librdkafka 2.0.2's Admin API has no TRANSACTIONAL_ID resource type, so the
// tests grant those ACLs with raw CreateAcls requests on the PLAINTEXT port,
// whose anonymous clients the tests make super users (as Kafka's docs do for
// a PLAINTEXT inter-broker listener).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
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
#include "support/raw_connection.h"

namespace exactly::testing {
namespace {

using broker::Broker;
using broker::BrokerOptions;
using broker::SecurityProtocol;
using ::testing::HasSubstr;

// Kafka's codes (the broker's security/acl.h).
constexpr int8_t kTopic = 2;
constexpr int8_t kGroup = 3;
constexpr int8_t kTransactionalId = 5;
constexpr int8_t kLiteral = 3;
constexpr int8_t kRead = 3;
constexpr int8_t kWrite = 4;
constexpr int8_t kAllow = 3;

BrokerOptions Options(bool authorizer = true) {
  BrokerOptions o;
  o.security.listeners = {{SecurityProtocol::kSaslPlaintext, 0}};
  o.security.sasl_users = {{"alice", "alice-pw"},
                           {"bob", "bob-pw"},
                           {"carol", "carol-pw"},
                           {"admin", "admin-pw"}};
  o.security.authorizer = authorizer;
  o.security.super_users = {"User:admin", "User:ANONYMOUS"};
  return o;
}

std::map<std::string, std::string> Sasl(const std::string& user) {
  return {{"security.protocol", "SASL_PLAINTEXT"},
          {"sasl.mechanism", "PLAIN"},
          {"sasl.username", user},
          {"sasl.password", user + "-pw"}};
}

// One raw CreateAcls on the PLAINTEXT port: the error of each creation.
std::vector<int16_t> Grant(
    uint16_t port,
    std::vector<protocol::CreateAclsRequest::Creation> creations) {
  RawConnection c(port);
  protocol::CreateAclsRequest request;
  request.creations = std::move(creations);
  protocol::RequestHeader h;
  h.api_key = static_cast<int16_t>(protocol::ApiKey::kCreateAcls);
  h.api_version = 2;
  h.correlation_id = 7;
  h.client_id = "acl-test";
  std::vector<int16_t> errors;
  if (!c.Send(protocol::EncodeRequestFrame(h, request))) return errors;
  std::optional<std::string> frame = c.ReadFrame();
  if (!frame) return errors;
  std::string_view body = *frame;
  if (!protocol::ParseResponseHeader(protocol::ApiKey::kCreateAcls, 2, &body)
           .ok())
    return errors;
  auto response =
      protocol::DecodeMessage<protocol::CreateAclsResponse>(body, 2);
  if (!response.ok()) return errors;
  for (const auto& r : response->results) errors.push_back(r.error_code);
  return errors;
}

protocol::CreateAclsRequest::Creation Allow(int8_t type, std::string name,
                                            std::string user, int8_t op) {
  protocol::CreateAclsRequest::Creation c;
  c.resource_type = type;
  c.resource_name = std::move(name);
  c.resource_pattern_type = kLiteral;
  c.principal = "User:" + user;
  c.host = "*";
  c.operation = op;
  c.permission_type = kAllow;
  return c;
}

ProducerOptions TxnProducer(const std::string& servers, const std::string& user,
                            const std::string& transactional_id) {
  ProducerOptions p;
  p.bootstrap_servers = servers;
  p.transactional_id = transactional_id;
  p.properties = Sasl(user);
  p.properties["transaction.timeout.ms"] = "10000";
  p.transaction_call_timeout = std::chrono::seconds(5);
  p.retry.max_attempts = 1;
  p.retry.max_retries = 2;
  return p;
}

absl::Status SendSome(TransactionalProducer& producer,
                      const std::string& topic) {
  return producer.Transact([&](Transaction& txn) {
    for (int i = 0; i < 5; ++i) {
      absl::Status s =
          txn.Send({.topic = topic, .key = std::to_string(i), .value = "v"});
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  });
}

int StoredRecords(Broker& b, const std::string& topic, int partitions) {
  int stored = 0;
  for (int p = 0; p < partitions; ++p) {
    auto log = b.ReadLog(topic, p);
    if (!log.ok()) return -1;
    for (const auto& batch : *log)
      if (!batch.control) stored += static_cast<int>(batch.records.size());
  }
  return stored;
}

// librdkafka's Admin API as one user.
class Admin {
 public:
  Admin(const std::string& servers, const std::string& user) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    char err[256];
    std::map<std::string, std::string> props = Sasl(user);
    props["bootstrap.servers"] = servers;
    for (const auto& [k, v] : props)
      rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err);
    rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    queue_ = rd_kafka_queue_new(rk_);
  }
  ~Admin() {
    rd_kafka_queue_destroy(queue_);
    rd_kafka_destroy(rk_);
  }

  // The error of each creation.
  std::vector<rd_kafka_resp_err_t> Create(
      const std::vector<rd_kafka_AclBinding_t*>& acls) {
    rd_kafka_CreateAcls(rk_, const_cast<rd_kafka_AclBinding_t**>(acls.data()),
                        acls.size(), nullptr, queue_);
    rd_kafka_event_t* e = Wait(RD_KAFKA_EVENT_CREATEACLS_RESULT);
    std::vector<rd_kafka_resp_err_t> errors;
    size_t n = 0;
    const rd_kafka_acl_result_t** results = rd_kafka_CreateAcls_result_acls(
        rd_kafka_event_CreateAcls_result(e), &n);
    for (size_t i = 0; i < n; ++i) {
      const rd_kafka_error_t* error = rd_kafka_acl_result_error(results[i]);
      errors.push_back(error ? rd_kafka_error_code(error)
                             : RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    rd_kafka_event_destroy(e);
    for (rd_kafka_AclBinding_t* acl : acls) rd_kafka_AclBinding_destroy(acl);
    return errors;
  }

  // The request's error, and "TYPE:name:PATTERN principal OP" per ACL.
  std::pair<rd_kafka_resp_err_t, std::vector<std::string>> Describe(
      rd_kafka_AclBindingFilter_t* filter) {
    rd_kafka_DescribeAcls(rk_, filter, nullptr, queue_);
    rd_kafka_event_t* e = Wait(RD_KAFKA_EVENT_DESCRIBEACLS_RESULT);
    std::pair<rd_kafka_resp_err_t, std::vector<std::string>> out{
        rd_kafka_event_error(e), {}};
    size_t n = 0;
    const rd_kafka_AclBinding_t** acls = rd_kafka_DescribeAcls_result_acls(
        rd_kafka_event_DescribeAcls_result(e), &n);
    for (size_t i = 0; i < n; ++i) out.second.push_back(Text(acls[i]));
    rd_kafka_event_destroy(e);
    rd_kafka_AclBinding_destroy(filter);
    return out;
  }

  // The error of the last Delete's filter.
  rd_kafka_resp_err_t delete_error() const { return delete_error_; }

  // The ACLs deleted, as Describe names them.
  std::vector<std::string> Delete(rd_kafka_AclBindingFilter_t* filter) {
    rd_kafka_DeleteAcls(rk_, &filter, 1, nullptr, queue_);
    rd_kafka_event_t* e = Wait(RD_KAFKA_EVENT_DELETEACLS_RESULT);
    std::vector<std::string> deleted;
    size_t n = 0;
    const rd_kafka_DeleteAcls_result_response_t** responses =
        rd_kafka_DeleteAcls_result_responses(
            rd_kafka_event_DeleteAcls_result(e), &n);
    delete_error_ = RD_KAFKA_RESP_ERR_NO_ERROR;
    for (size_t i = 0; i < n; ++i) {
      if (const rd_kafka_error_t* error =
              rd_kafka_DeleteAcls_result_response_error(responses[i]))
        delete_error_ = rd_kafka_error_code(error);
      size_t m = 0;
      const rd_kafka_AclBinding_t** acls =
          rd_kafka_DeleteAcls_result_response_matching_acls(responses[i], &m);
      for (size_t j = 0; j < m; ++j) deleted.push_back(Text(acls[j]));
    }
    rd_kafka_event_destroy(e);
    rd_kafka_AclBinding_destroy(filter);
    return deleted;
  }

 private:
  rd_kafka_event_t* Wait(rd_kafka_event_type_t type) {
    for (;;) {
      rd_kafka_event_t* e = rd_kafka_queue_poll(queue_, 30000);
      if (e == nullptr || rd_kafka_event_type(e) == type) return e;
      rd_kafka_event_destroy(e);
    }
  }
  static std::string Text(const rd_kafka_AclBinding_t* acl) {
    return std::string(
               rd_kafka_ResourceType_name(rd_kafka_AclBinding_restype(acl))) +
           ":" + rd_kafka_AclBinding_name(acl) + ":" +
           rd_kafka_ResourcePatternType_name(
               rd_kafka_AclBinding_resource_pattern_type(acl)) +
           " " + rd_kafka_AclBinding_principal(acl) + " " +
           rd_kafka_AclOperation_name(rd_kafka_AclBinding_operation(acl));
  }

  rd_kafka_t* rk_ = nullptr;
  rd_kafka_queue_t* queue_ = nullptr;
  rd_kafka_resp_err_t delete_error_ = RD_KAFKA_RESP_ERR_NO_ERROR;
};

rd_kafka_AclBinding_t* Binding(rd_kafka_ResourceType_t type, const char* name,
                               rd_kafka_ResourcePatternType_t pattern,
                               const char* principal,
                               rd_kafka_AclOperation_t op,
                               rd_kafka_AclPermissionType_t permission =
                                   RD_KAFKA_ACL_PERMISSION_TYPE_ALLOW) {
  char err[256];
  return rd_kafka_AclBinding_new(type, name, pattern, principal, "*", op,
                                 permission, err, sizeof err);
}

rd_kafka_AclBindingFilter_t* Filter(rd_kafka_ResourceType_t type,
                                    const char* name,
                                    rd_kafka_ResourcePatternType_t pattern,
                                    const char* principal = nullptr) {
  char err[256];
  return rd_kafka_AclBindingFilter_new(
      type, name, pattern, principal, nullptr, RD_KAFKA_ACL_OPERATION_ANY,
      RD_KAFKA_ACL_PERMISSION_TYPE_ANY, err, sizeof err);
}

class AclTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::getenv("EXACTLY_KAFKA_CLUSTER") != nullptr) {
      GTEST_SKIP() << "tests the bundled broker's authorizer; the Kafka "
                      "harness has no SASL";
    }
  }
};

TEST_F(AclTest, TransactionsNeedWriteOnTheTransactionalIdAndTheTopic) {
  auto started = Broker::Start(Options());
  ASSERT_TRUE(started.ok()) << started.status();
  Broker& b = **started;
  ASSERT_TRUE(b.CreateTopic("orders", 2).ok());
  ASSERT_TRUE(b.CreateTopic("secret", 1).ok());
  EXPECT_EQ(
      Grant(b.port(), {Allow(kTransactionalId, "alice-txn", "alice", kWrite),
                       Allow(kTopic, "orders", "alice", kWrite)}),
      (std::vector<int16_t>{0, 0}));
  const std::string servers =
      b.bootstrap_servers(SecurityProtocol::kSaslPlaintext);

  // Alice: WRITE on her transactional id and on the topic is all it takes
  // (DESCRIBE, for FindCoordinator and Metadata, is implied).
  auto alice =
      TransactionalProducer::Create(TxnProducer(servers, "alice", "alice-txn"));
  ASSERT_TRUE(alice.ok()) << alice.status();
  EXPECT_TRUE(SendSome(**alice, "orders").ok());
  EXPECT_EQ(StoredRecords(b, "orders", 2), 5);

  // Not on a topic she may not write: refused, the transaction aborted, the
  // producer still usable. (She may READ it, so librdkafka gets as far as
  // AddPartitionsToTxn; the records fail with the topic's error, and the
  // commit, as librdkafka reports it, with _INCONSISTENT.)
  std::mutex mu;
  std::vector<std::string> reports;
  absl::Status refused = (*alice)->Transact([&](Transaction& txn) {
    return txn.Send({.topic = "secret", .key = "k", .value = "v"},
                    [&](const DeliveryReport& r) {
                      std::lock_guard lock(mu);
                      reports.push_back(KafkaErrorName(r.status));
                    });
  });
  EXPECT_FALSE(refused.ok());
  EXPECT_FALSE(IsFatal(refused)) << refused;
  {
    std::lock_guard lock(mu);
    EXPECT_THAT(reports, ::testing::ElementsAre("TOPIC_AUTHORIZATION_FAILED"));
  }
  EXPECT_EQ(StoredRecords(b, "secret", 1), 0);
  EXPECT_TRUE(SendSome(**alice, "orders").ok());

  // Bob: no ACL on his transactional id. A fatal error that says so.
  auto bob =
      TransactionalProducer::Create(TxnProducer(servers, "bob", "bob-txn"));
  ASSERT_FALSE(bob.ok());
  EXPECT_TRUE(IsFatal(bob.status())) << bob.status();
  EXPECT_EQ(KafkaErrorName(bob.status()),
            "TRANSACTIONAL_ID_AUTHORIZATION_FAILED")
      << bob.status();
  EXPECT_EQ(bob.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(NextTxnAction(bob.status()), TxnAction::kGiveUp);
}

TEST_F(AclTest, AConsumerWithoutReadOnTheGroupIsTold) {
  auto started = Broker::Start(Options());
  ASSERT_TRUE(started.ok()) << started.status();
  Broker& b = **started;
  ASSERT_TRUE(b.CreateTopic("events", 1).ok());
  ASSERT_EQ(Grant(b.port(), {Allow(kTopic, "events", "carol", kRead)}),
            (std::vector<int16_t>{0}));
  std::vector<std::string> errors;
  ConsumerOptions c;
  c.bootstrap_servers = b.bootstrap_servers(SecurityProtocol::kSaslPlaintext);
  c.group_id = "carols-group";
  c.properties = Sasl("carol");
  c.on_error = [&errors](const absl::Status& s) {
    errors.push_back(KafkaErrorName(s));
  };
  auto consumer = Consumer::Create(c);
  ASSERT_TRUE(consumer.ok()) << consumer.status();
  ASSERT_TRUE((*consumer)->Subscribe({"events"}).ok());
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  bool told = false;
  while (!told && std::chrono::steady_clock::now() < deadline) {
    auto m = (*consumer)->Poll(std::chrono::milliseconds(200));
    if (!m.ok()) errors.push_back(KafkaErrorName(m.status()));
    for (const std::string& e : errors)
      told |= e == "GROUP_AUTHORIZATION_FAILED";
  }
  EXPECT_TRUE(told) << ::testing::PrintToString(errors);
}

TEST_F(AclTest, ASuperUserNeedsNoAcl) {
  auto started = Broker::Start(Options());
  ASSERT_TRUE(started.ok()) << started.status();
  Broker& b = **started;
  ASSERT_TRUE(b.CreateTopic("anything", 1).ok());
  const std::string servers =
      b.bootstrap_servers(SecurityProtocol::kSaslPlaintext);
  auto admin =
      TransactionalProducer::Create(TxnProducer(servers, "admin", "admin-txn"));
  ASSERT_TRUE(admin.ok()) << admin.status();
  EXPECT_TRUE(SendSome(**admin, "anything").ok());

  ConsumerOptions c;
  c.bootstrap_servers = servers;
  c.group_id = "admins";
  c.properties = Sasl("admin");
  c.properties["auto.offset.reset"] = "earliest";
  auto consumer = Consumer::Create(c);
  ASSERT_TRUE(consumer.ok()) << consumer.status();
  ASSERT_TRUE((*consumer)->Subscribe({"anything"}).ok());
  EXPECT_EQ(PollRecords(**consumer, 5, std::chrono::seconds(30)), 5);
}

TEST_F(AclTest, AclsRoundTripThroughLibrdkafkasAdminApi) {
  auto started = Broker::Start(Options());
  ASSERT_TRUE(started.ok()) << started.status();
  const std::string servers =
      (*started)->bootstrap_servers(SecurityProtocol::kSaslPlaintext);
  Admin admin(servers, "admin");
  EXPECT_EQ(
      admin.Create({Binding(RD_KAFKA_RESOURCE_TOPIC, "orders",
                            RD_KAFKA_RESOURCE_PATTERN_LITERAL, "User:alice",
                            RD_KAFKA_ACL_OPERATION_READ),
                    Binding(RD_KAFKA_RESOURCE_TOPIC, "ord",
                            RD_KAFKA_RESOURCE_PATTERN_PREFIXED, "User:bob",
                            RD_KAFKA_ACL_OPERATION_WRITE),
                    Binding(RD_KAFKA_RESOURCE_GROUP, "g",
                            RD_KAFKA_RESOURCE_PATTERN_LITERAL, "User:alice",
                            RD_KAFKA_ACL_OPERATION_READ,
                            RD_KAFKA_ACL_PERMISSION_TYPE_DENY),
                    // No principal type: Kafka refuses it.
                    Binding(RD_KAFKA_RESOURCE_TOPIC, "t",
                            RD_KAFKA_RESOURCE_PATTERN_LITERAL, "carol",
                            RD_KAFKA_ACL_OPERATION_READ)}),
      (std::vector<rd_kafka_resp_err_t>{
          RD_KAFKA_RESP_ERR_NO_ERROR, RD_KAFKA_RESP_ERR_NO_ERROR,
          RD_KAFKA_RESP_ERR_NO_ERROR, RD_KAFKA_RESP_ERR_INVALID_REQUEST}));

  auto all = admin.Describe(
      Filter(RD_KAFKA_RESOURCE_ANY, nullptr, RD_KAFKA_RESOURCE_PATTERN_ANY));
  EXPECT_EQ(all.first, RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_THAT(all.second, ::testing::UnorderedElementsAre(
                              "TOPIC:orders:LITERAL User:alice READ",
                              "TOPIC:ord:PREFIXED User:bob WRITE",
                              "GROUP:g:LITERAL User:alice READ"));
  EXPECT_THAT(admin
                  .Describe(Filter(RD_KAFKA_RESOURCE_TOPIC, nullptr,
                                   RD_KAFKA_RESOURCE_PATTERN_PREFIXED))
                  .second,
              ::testing::ElementsAre("TOPIC:ord:PREFIXED User:bob WRITE"));
  // MATCH: every ACL that applies to the topic "orders".
  EXPECT_THAT(
      admin
          .Describe(Filter(RD_KAFKA_RESOURCE_TOPIC, "orders",
                           RD_KAFKA_RESOURCE_PATTERN_MATCH))
          .second,
      ::testing::UnorderedElementsAre("TOPIC:orders:LITERAL User:alice READ",
                                      "TOPIC:ord:PREFIXED User:bob WRITE"));

  // Bob may not change ACLs (ALTER on the cluster) nor see them (DESCRIBE:
  // librdkafka 2.0.2 drops DescribeAcls' error code, so bob sees none).
  Admin bob(servers, "bob");
  EXPECT_EQ(bob.Create({Binding(RD_KAFKA_RESOURCE_TOPIC, "t",
                                RD_KAFKA_RESOURCE_PATTERN_LITERAL, "User:bob",
                                RD_KAFKA_ACL_OPERATION_ALL)}),
            (std::vector<rd_kafka_resp_err_t>{
                RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED}));
  EXPECT_THAT(bob.Describe(Filter(RD_KAFKA_RESOURCE_ANY, nullptr,
                                  RD_KAFKA_RESOURCE_PATTERN_ANY))
                  .second,
              ::testing::IsEmpty());

  EXPECT_THAT(
      admin.Delete(Filter(RD_KAFKA_RESOURCE_ANY, nullptr,
                          RD_KAFKA_RESOURCE_PATTERN_ANY, "User:alice")),
      ::testing::UnorderedElementsAre("TOPIC:orders:LITERAL User:alice READ",
                                      "GROUP:g:LITERAL User:alice READ"));
  EXPECT_THAT(admin
                  .Describe(Filter(RD_KAFKA_RESOURCE_ANY, nullptr,
                                   RD_KAFKA_RESOURCE_PATTERN_ANY))
                  .second,
              ::testing::ElementsAre("TOPIC:ord:PREFIXED User:bob WRITE"));
}

TEST_F(AclTest, WithoutTheAuthorizerTheAclApisAreDisabled) {
  auto started = Broker::Start(Options(/*authorizer=*/false));
  ASSERT_TRUE(started.ok()) << started.status();
  Broker& b = **started;
  const std::string servers =
      b.bootstrap_servers(SecurityProtocol::kSaslPlaintext);
  Admin admin(servers, "bob");
  EXPECT_EQ(
      admin.Create({Binding(RD_KAFKA_RESOURCE_TOPIC, "t",
                            RD_KAFKA_RESOURCE_PATTERN_LITERAL, "User:bob",
                            RD_KAFKA_ACL_OPERATION_READ)}),
      (std::vector<rd_kafka_resp_err_t>{RD_KAFKA_RESP_ERR_SECURITY_DISABLED}));
  EXPECT_THAT(admin.Delete(Filter(RD_KAFKA_RESOURCE_ANY, nullptr,
                                  RD_KAFKA_RESOURCE_PATTERN_ANY)),
              ::testing::IsEmpty());
  EXPECT_EQ(admin.delete_error(), RD_KAFKA_RESP_ERR_SECURITY_DISABLED);
  // librdkafka 2.0.2 drops DescribeAcls' error code: asked directly.
  RawConnection c(b.port());
  protocol::RequestHeader h;
  h.api_key = static_cast<int16_t>(protocol::ApiKey::kDescribeAcls);
  h.api_version = 1;
  h.correlation_id = 3;
  protocol::DescribeAclsRequest describe;
  describe.resource_type_filter = 1;  // ANY
  describe.pattern_type_filter = 1;
  describe.operation = 1;
  describe.permission_type = 1;
  ASSERT_TRUE(c.Send(protocol::EncodeRequestFrame(h, describe)));
  std::optional<std::string> frame = c.ReadFrame();
  ASSERT_TRUE(frame.has_value());
  std::string_view body = *frame;
  ASSERT_TRUE(
      protocol::ParseResponseHeader(protocol::ApiKey::kDescribeAcls, 1, &body)
          .ok());
  auto described =
      protocol::DecodeMessage<protocol::DescribeAclsResponse>(body, 1);
  ASSERT_TRUE(described.ok()) << described.status();
  EXPECT_EQ(described->error_code,
            static_cast<int16_t>(protocol::ErrorCode::kSecurityDisabled));
  // And nothing is checked: bob transacts without any ACL.
  ASSERT_TRUE(b.CreateTopic("open", 1).ok());
  auto producer =
      TransactionalProducer::Create(TxnProducer(servers, "bob", "bob-txn"));
  ASSERT_TRUE(producer.ok()) << producer.status();
  EXPECT_TRUE(SendSome(**producer, "open").ok());
}

TEST_F(AclTest, AClustersBrokersShareTheirAcls) {
  broker::ClusterOptions options;
  options.brokers = 3;
  options.broker = Options();
  auto started = broker::Cluster::Start(options);
  ASSERT_TRUE(started.ok()) << started.status();
  broker::Cluster& cluster = **started;
  ASSERT_TRUE(cluster.CreateTopic("replicated", 3, 3).ok());
  // Granted through broker 3, used through broker 2 against whichever
  // brokers lead the partitions and coordinate the transaction; replication
  // and markers pass between the brokers as before.
  ASSERT_EQ(Grant(cluster.broker(3).port(),
                  {Allow(kTransactionalId, "alice-txn", "alice", kWrite),
                   Allow(kTopic, "replicated", "alice", kWrite),
                   Allow(kTopic, "replicated", "alice", kRead),
                   Allow(kGroup, "alices", "alice", kRead)}),
            (std::vector<int16_t>{0, 0, 0, 0}));
  const std::string servers =
      cluster.broker(2).bootstrap_servers(SecurityProtocol::kSaslPlaintext);
  auto alice =
      TransactionalProducer::Create(TxnProducer(servers, "alice", "alice-txn"));
  ASSERT_TRUE(alice.ok()) << alice.status();
  EXPECT_TRUE(SendSome(**alice, "replicated").ok());

  ConsumerOptions c;
  c.bootstrap_servers = servers;
  c.group_id = "alices";
  c.properties = Sasl("alice");
  c.properties["auto.offset.reset"] = "earliest";
  auto consumer = Consumer::Create(c);
  ASSERT_TRUE(consumer.ok()) << consumer.status();
  ASSERT_TRUE((*consumer)->Subscribe({"replicated"}).ok());
  EXPECT_EQ(PollRecords(**consumer, 5, std::chrono::seconds(30)), 5);

  auto bob =
      TransactionalProducer::Create(TxnProducer(servers, "bob", "bob-txn"));
  ASSERT_FALSE(bob.ok());
  EXPECT_EQ(KafkaErrorName(bob.status()),
            "TRANSACTIONAL_ID_AUTHORIZATION_FAILED")
      << bob.status();
}

}  // namespace
}  // namespace exactly::testing
