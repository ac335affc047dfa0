// DescribeTransactions (key 65), v0. Flexible from v0. KIP-664: what the
// coordinator holds for each transactional id: state, timeout, start time,
// producer id and epoch, and the partitions of the current transaction.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_TRANSACTIONS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_TRANSACTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct DescribeTransactionsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeTransactions;
  std::vector<std::string> transactional_ids;
  TaggedFields tagged_fields;

  bool operator==(const DescribeTransactionsRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Array(transactional_ids, [&](std::string& s) { io.String(s); });
    io.TaggedFields(tagged_fields);
  }
};

struct DescribeTransactionsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kDescribeTransactions;
  struct Topic {
    std::string topic;
    std::vector<int32_t> partitions;
    TaggedFields tagged_fields;
    bool operator==(const Topic&) const = default;
  };
  struct Transaction {
    int16_t error_code = 0;
    std::string transactional_id;
    std::string state;
    int32_t timeout_ms = 0;
    int64_t start_time_ms = 0;
    int64_t producer_id = 0;
    int16_t producer_epoch = 0;
    std::vector<Topic> topics;
    TaggedFields tagged_fields;
    bool operator==(const Transaction&) const = default;
  };
  int32_t throttle_time_ms = 0;
  std::vector<Transaction> transactions;
  TaggedFields tagged_fields;

  bool operator==(const DescribeTransactionsResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Int32(throttle_time_ms);
    io.Array(transactions, [&](Transaction& t) {
      io.Int16(t.error_code);
      io.String(t.transactional_id);
      io.String(t.state);
      io.Int32(t.timeout_ms);
      io.Int64(t.start_time_ms);
      io.Int64(t.producer_id);
      io.Int16(t.producer_epoch);
      io.Array(t.topics, [&](Topic& topic) {
        io.String(topic.topic);
        io.Array(topic.partitions, [&](int32_t& p) { io.Int32(p); });
        io.TaggedFields(topic.tagged_fields);
      });
      io.TaggedFields(t.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_DESCRIBE_TRANSACTIONS_H_
