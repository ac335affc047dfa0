// ListTransactions (key 66), v0-1. Flexible from v0. KIP-664: the
// transactional ids a coordinator knows, filtered by state and producer id;
// v1 (KIP-994) adds a filter on how long the transaction has run.
#ifndef EXACTLY_BROKER_PROTOCOL_MESSAGES_LIST_TRANSACTIONS_H_
#define EXACTLY_BROKER_PROTOCOL_MESSAGES_LIST_TRANSACTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/serde.h"

namespace exactly::protocol {

struct ListTransactionsRequest {
  static constexpr ApiKey kApiKey = ApiKey::kListTransactions;
  std::vector<std::string> state_filters;    // empty: every state
  std::vector<int64_t> producer_id_filters;  // empty: every producer
  int64_t duration_filter = -1;  // v1+: only those running longer (ms)
  TaggedFields tagged_fields;

  bool operator==(const ListTransactionsRequest&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Array(state_filters, [&](std::string& s) { io.String(s); });
    io.Array(producer_id_filters, [&](int64_t& p) { io.Int64(p); });
    if (io.version() >= 1) io.Int64(duration_filter);
    io.TaggedFields(tagged_fields);
  }
};

struct ListTransactionsResponse {
  static constexpr ApiKey kApiKey = ApiKey::kListTransactions;
  struct Transaction {
    std::string transactional_id;
    int64_t producer_id = -1;
    std::string state;  // Kafka's name: "Ongoing", "CompleteCommit", ...
    TaggedFields tagged_fields;
    bool operator==(const Transaction&) const = default;
  };
  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  std::vector<std::string> unknown_state_filters;
  std::vector<Transaction> transactions;
  TaggedFields tagged_fields;

  bool operator==(const ListTransactionsResponse&) const = default;

  template <class Io>
  void Serde(Io& io) {
    io.Int32(throttle_time_ms);
    io.Int16(error_code);
    io.Array(unknown_state_filters, [&](std::string& s) { io.String(s); });
    io.Array(transactions, [&](Transaction& t) {
      io.String(t.transactional_id);
      io.Int64(t.producer_id);
      io.String(t.state);
      io.TaggedFields(t.tagged_fields);
    });
    io.TaggedFields(tagged_fields);
  }
};

}  // namespace exactly::protocol

#endif  // EXACTLY_BROKER_PROTOCOL_MESSAGES_LIST_TRANSACTIONS_H_
