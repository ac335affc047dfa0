// Fault injection: the faults that cause lost and duplicated records in real
// clusters, on demand, so that a test can watch its client survive them. Every
// injected fault is logged (stderr and History()) so that a failing test shows
// what happened.
//
// The same model is reachable from C++ (Broker::faults()), from the
// exactly-broker binary's admin port (see docs/faults.md) and from Python
// (exactly.testing.Broker).
#ifndef EXACTLY_BROKER_FAULTS_H_
#define EXACTLY_BROKER_FAULTS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace exactly::broker {

// Which requests a fault applies to. Unset fields match everything.
struct FaultMatch {
  std::optional<int16_t>
      api_key;  // e.g. 0 for Produce (exactly::protocol::ApiKey)
  std::optional<std::string> topic;
  std::optional<int32_t> partition;
};

class Faults {
 public:
  // Answers the next `count` matching requests (or partitions of them) with
  // `error_code` instead of handling them. A negative count means every one
  // until Clear().
  void FailRequests(FaultMatch match, int16_t error_code, int count = 1);

  // Appends the next matching Produce request, then drops its response by
  // closing the connection, so the client must retry a batch the broker already
  // has. Applies to `count` requests (negative: until Clear()), each
  // `one_in`-th matching request (1: every one).
  void DropProduceResponses(int count, int one_in = 1, FaultMatch match = {});
  // Like DropProduceResponses, but the connection stays open and the response
  // is never sent: the client hears nothing until its own request timeout
  // (librdkafka: socket.timeout.ms) expires, then retries a batch the broker
  // already has. Later requests on the connection are answered as usual.
  void DropProduceResponsesKeepOpen(int count, int one_in = 1,
                                    FaultMatch match = {});

  // Delays every matching response by `latency_ms` (0 removes the delay).
  void AddLatency(int32_t latency_ms, FaultMatch match = {});

  // Closes every client connection now; clients reconnect.
  void CloseAllConnections();

  // "Broker down": closes every connection and refuses new ones for
  // `duration_ms`.
  void BrokerDown(int32_t duration_ms);

  // Stops the transaction coordinator after it has persisted
  // PrepareCommit/PrepareAbort and answered EndTxn, before it writes the
  // markers, for the next `count` transactions: the broker then looks as if it
  // crashed at that point until it is restarted, when it finishes the markers.
  void HoldTransactionMarkers(int count = 1);

  // Cluster mode, on a follower: stops this broker fetching from its leaders
  // (it falls behind, and out of the ISR after replica.lag.time.max.ms) until
  // ResumeReplication().
  void PauseReplication();
  void ResumeReplication();
  // Cluster mode, on a follower: waits `latency_ms` before each replica fetch
  // (0 removes the delay), as a slow link to its leaders would.
  void SetReplicationLatency(int32_t latency_ms);

  // Cluster mode, on a partition leader: this broker keeps every
  // WriteTxnMarkers request it receives, neither applied nor answered (the
  // coordinator waits for the answer, and the partition's last stable offset
  // stays before the transaction), until ReleaseMarkers(), which handles the
  // held requests in the order they came. A stop or kill of the broker drops
  // them unapplied, as a crash would, and the coordinator sends the markers
  // again to the partition's new leader. The hold itself stays across a
  // restart, as other faults do; Clear() releases.
  void HoldMarkers();
  void ReleaseMarkers();
  // The WriteTxnMarkers requests held now.
  int held_marker_requests() const;

  // Removes every fault still pending (held markers are released).
  void Clear();

  // Every fault injected so far, oldest first, as logged.
  std::vector<std::string> History() const;
  // How many faults took effect so far, by kind ("request_error",
  // "dropped_produce_response", "dropped_produce_response_kept_open",
  // "broker_down", "kill", ...): what the metrics
  // endpoint reports as exactly_broker_faults_injected_total.
  std::map<std::string, int64_t> InjectedCounts() const;

  // ---- Used by the broker's event loop. ----
  struct Hooks {
    std::function<void()> close_all_connections;
    std::function<void(int32_t)> refuse_connections_for_ms;
    // Runs a task on the broker's event loop (nothing when it is stopped).
    std::function<void(std::function<void()>)> run_on_loop;
  };
  void SetHooks(Hooks hooks);
  // The injected error for one matching request/partition, consuming it.
  std::optional<int16_t> TakeError(
      int16_t api_key, const std::string* topic = nullptr,
      std::optional<int32_t> partition = std::nullopt);
  // Whether this Produce request's response is to be dropped, and how.
  enum class ResponseDrop { kNone, kCloseConnection, kKeepConnectionOpen };
  ResponseDrop TakeDropProduceResponse(const std::vector<std::string>& topics);
  int32_t LatencyFor(int16_t api_key) const;
  bool TakeHoldTransactionMarkers();
  // Keeps `handle` (the handling of one WriteTxnMarkers request) while markers
  // are held (HoldMarkers), to run on the loop at ReleaseMarkers(); false,
  // and `handle` untouched, when they are not.
  bool HoldMarkerRequest(std::function<void()>& handle);
  bool holding_markers() const;
  // The broker stopped: the held requests are dropped unanswered.
  void DropHeldMarkers();
  bool replication_paused() const;
  int32_t replication_latency_ms() const;
  // Cluster mode: the broker is cut off from clients and the other brokers
  // (Cluster::Isolate), so it must not follow any leader.
  bool isolated() const;
  void SetIsolated(bool isolated);
  void Record(std::string what);
  // Records a fault that takes effect now, counted under `kind`.
  void RecordInjected(const std::string& kind, std::string what);

 private:
  struct ErrorRule {
    FaultMatch match;
    int16_t error_code;
    int remaining;
  };
  struct DropRule {
    FaultMatch match;
    int remaining;
    int one_in;
    bool keep_open = false;
    int64_t seen = 0;
  };
  struct LatencyRule {
    FaultMatch match;
    int32_t latency_ms;
  };

  mutable std::mutex mu_;
  std::vector<ErrorRule> errors_;
  std::vector<DropRule> drops_;
  std::vector<LatencyRule> latencies_;
  int hold_markers_ = 0;
  bool holding_marker_requests_ = false;
  std::vector<std::function<void()>> held_marker_requests_;
  bool replication_paused_ = false;
  int32_t replication_latency_ms_ = 0;
  bool isolated_ = false;
  std::vector<std::string> history_;
  std::map<std::string, int64_t> injected_;
  Hooks hooks_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_FAULTS_H_
