// What a scenario sent and what survived: every record carries a unique value;
// a librdkafka producer notes which ones the cluster acknowledged, and a reader
// counts which of those a consumer finds afterwards, and how often.
#ifndef EXACTLY_EXAMPLES_REPLICATION_RECORD_LEDGER_H_
#define EXACTLY_EXAMPLES_REPLICATION_RECORD_LEDGER_H_

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace exactly::examples {

struct Counts {
  int64_t acknowledged = 0;
  int64_t refused = 0;     // answered with an error (e.g. NOT_ENOUGH_REPLICAS)
  int64_t lost = 0;        // acknowledged, and not there to read
  int64_t duplicated = 0;  // read more than once
};

// A producer that remembers what was acknowledged. `acks` is "1" or "all";
// "all" makes it idempotent, as the SDK's producers are.
class LedgerProducer {
 public:
  LedgerProducer(const std::string& bootstrap_servers, const std::string& acks,
                 int32_t message_timeout_ms = 30000);
  ~LedgerProducer();
  LedgerProducer(const LedgerProducer&) = delete;
  LedgerProducer& operator=(const LedgerProducer&) = delete;

  bool ok() const { return rk_ != nullptr; }
  // Sends `value` to `topic`[0]; the delivery report decides its fate.
  void Send(const std::string& topic, const std::string& value);
  // Waits for every delivery report (bounded).
  void Flush(int timeout_ms = 60000);

  std::set<std::string> acknowledged() const;
  int64_t refused() const;

 private:
  static void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void*);

  rd_kafka_t* rk_ = nullptr;
  mutable std::mutex mu_;
  std::set<std::string> acknowledged_;
  int64_t refused_ = 0;
};

// Reads `topic`[0] from its start up to its high watermark, as a consumer
// would, and returns how many times each value was read.
std::map<std::string, int> ReadPartition(const std::string& bootstrap_servers,
                                         const std::string& topic);

// Compares what was acknowledged with what was read.
Counts Tally(const std::set<std::string>& acknowledged, int64_t refused,
             const std::map<std::string, int>& read);

}  // namespace exactly::examples

#endif  // EXACTLY_EXAMPLES_REPLICATION_RECORD_LEDGER_H_
