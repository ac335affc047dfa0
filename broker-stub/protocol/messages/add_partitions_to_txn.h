// AddPartitionsToTxn (key 24), v0-4. Flexible from v3. v0-3 differ only in
// encoding and in which fencing error the broker returns. v4 (KIP-890, sent by
// brokers only) carries several transactions, each optionally VerifyOnly: a
// partition leader asks the coordinator whether its partitions are in the
// transaction, without adding them.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_ADD_PARTITIONS_TO_TXN_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_ADD_PARTITIONS_TO_TXN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct AddPartitionsToTxnRequest {
  static constexpr ApiKey kApiKey = ApiKey::kAddPartitionsToTxn;
  struct Topic {
    std::string name;
    std::vector<int32_t> partitions;
    TaggedFields tagged_fields;
    bool operator==(const Topic&) const = default;
  };
  struct Transaction {  // v4+
    std::string transactional_id;
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
    bool verify_only = false;
    std::vector<Topic> topics;
    TaggedFields tagged_fields;
    bool operator==(const Transaction&) const = default;
  };
  std::vector<Transaction> transactions;  // v4+
  // Kafka's V3AndBelow* fields.
  std::string transactional_id;  // v0-3
  int64_t producer_id = -1;      // v0-3
  int16_t producer_epoch = -1;   // v0-3
  std::vector<Topic> topics;     // v0-3
  TaggedFields tagged_fields;

  bool operator==(const AddPartitionsToTxnRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    auto topic = [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partitions, [&](int32_t& p) { io.Int32(p); });
      io.TaggedFields(t.tagged_fields);
    };
    if (io.version() >= 4) {
      io.Array(transactions, [&](Transaction& x) {
        io.String(x.transactional_id);
        io.Int64(x.producer_id);
        io.Int16(x.producer_epoch);
        io.Bool(x.verify_only);
        io.Array(x.topics, topic);
        io.TaggedFields(x.tagged_fields);
      });
    } else {
      io.String(transactional_id);
      io.Int64(producer_id);
      io.Int16(producer_epoch);
      io.Array(topics, topic);
    }
    io.TaggedFields(tagged_fields);
  }
};

struct AddPartitionsToTxnResponse {
  static constexpr ApiKey kApiKey = ApiKey::kAddPartitionsToTxn;
  struct Partition {
    int32_t index = 0;
    int16_t error_code = 0;
    TaggedFields tagged_fields;
    bool operator==(const Partition&) const = default;
  };
  struct Topic {
    std::string name;
    std::vector<Partition> partitions;  // Kafka's "Results"
    TaggedFields tagged_fields;
    bool operator==(const Topic&) const = default;
  };
  struct Transaction {  // v4+: Kafka's "ResultsByTransaction"
    std::string transactional_id;
    std::vector<Topic> topics;  // Kafka's "TopicResults"
    TaggedFields tagged_fields;
    bool operator==(const Transaction&) const = default;
  };
  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;                 // v4+
  std::vector<Transaction> transactions;  // v4+
  std::vector<Topic> topics;  // v0-3: Kafka's "ResultsByTopicV3AndBelow"
  TaggedFields tagged_fields;

  bool operator==(const AddPartitionsToTxnResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    auto topic = [&](Topic& t) {
      io.String(t.name);
      io.Array(t.partitions, [&](Partition& p) {
        io.Int32(p.index);
        io.Int16(p.error_code);
        io.TaggedFields(p.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    };
    io.Int32(throttle_time_ms);
    if (io.version() >= 4) {
      io.Int16(error_code);
      io.Array(transactions, [&](Transaction& x) {
        io.String(x.transactional_id);
        io.Array(x.topics, topic);
        io.TaggedFields(x.tagged_fields);
      });
    } else {
      io.Array(topics, topic);
    }
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_ADD_PARTITIONS_TO_TXN_H_
