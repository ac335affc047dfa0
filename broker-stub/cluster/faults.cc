#include "exactly/broker/faults.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "protocol/api_key.h"
#include "protocol/error_code.h"
#include "util/logging.h"

namespace exactly::broker {

namespace {

bool Matches(const FaultMatch& m, int16_t api_key, const std::string* topic,
             std::optional<int32_t> partition) {
  if (m.api_key && *m.api_key != api_key) return false;
  if (m.topic && (topic == nullptr || *m.topic != *topic)) return false;
  if (m.partition && (!partition || *m.partition != *partition)) return false;
  return true;
}

std::string Describe(const FaultMatch& m) {
  std::string s;
  if (m.api_key)
    absl::StrAppend(&s, " api=", std::string(protocol::ApiKeyName(*m.api_key)));
  if (m.topic) absl::StrAppend(&s, " topic=", *m.topic);
  if (m.partition) absl::StrAppend(&s, " partition=", *m.partition);
  return s.empty() ? " (all requests)" : s;
}

}  // namespace

void Faults::Record(std::string what) {
  LogWarning("fault: ", what);
  std::lock_guard<std::mutex> lock(mu_);
  history_.push_back(std::move(what));
}

void Faults::RecordInjected(const std::string& kind, std::string what) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++injected_[kind];
  }
  Record(std::move(what));
}

std::map<std::string, int64_t> Faults::InjectedCounts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return injected_;
}

void Faults::FailRequests(FaultMatch match, int16_t error_code, int count) {
  Record(absl::StrCat("armed: answer ",
                      count < 0 ? "every" : absl::StrCat("the next ", count),
                      Describe(match), " with ",
                      std::string(protocol::ErrorCodeName(error_code))));
  std::lock_guard<std::mutex> lock(mu_);
  errors_.push_back({std::move(match), error_code, count});
}

void Faults::DropProduceResponses(int count, int one_in, FaultMatch match) {
  if (one_in < 1) one_in = 1;
  Record(absl::StrCat("armed: drop the response of ",
                      count < 0 ? "every" : absl::StrCat(count),
                      " Produce request(s), 1 in ", one_in, Describe(match),
                      ", after appending"));
  std::lock_guard<std::mutex> lock(mu_);
  drops_.push_back({std::move(match), count, one_in});
}

void Faults::DropProduceResponsesKeepOpen(int count, int one_in,
                                          FaultMatch match) {
  if (one_in < 1) one_in = 1;
  Record(absl::StrCat("armed: drop the response of ",
                      count < 0 ? "every" : absl::StrCat(count),
                      " Produce request(s), 1 in ", one_in, Describe(match),
                      ", after appending, keeping the connection open"));
  std::lock_guard<std::mutex> lock(mu_);
  drops_.push_back({std::move(match), count, one_in, /*keep_open=*/true});
}

void Faults::AddLatency(int32_t latency_ms, FaultMatch match) {
  std::string what = absl::StrCat("armed: ", latency_ms,
                                  " ms latency on responses", Describe(match));
  // Removing the latency (0) is no fault.
  if (latency_ms > 0) {
    RecordInjected("response_latency", std::move(what));
  } else {
    Record(std::move(what));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (latency_ms <= 0) {
    latencies_.clear();
    return;
  }
  latencies_.push_back({std::move(match), latency_ms});
}

void Faults::CloseAllConnections() {
  RecordInjected("close_connections", "closing every client connection");
  std::function<void()> hook;
  {
    std::lock_guard<std::mutex> lock(mu_);
    hook = hooks_.close_all_connections;
  }
  if (hook) hook();
}

void Faults::BrokerDown(int32_t duration_ms) {
  RecordInjected("broker_down",
                 absl::StrCat("broker down for ", duration_ms,
                              " ms: connections closed and refused"));
  std::function<void(int32_t)> hook;
  {
    std::lock_guard<std::mutex> lock(mu_);
    hook = hooks_.refuse_connections_for_ms;
  }
  if (hook) hook(duration_ms);
}

void Faults::HoldTransactionMarkers(int count) {
  Record(absl::StrCat("armed: hold the markers of the next ", count,
                      " transaction(s) after PrepareCommit/PrepareAbort"));
  std::lock_guard<std::mutex> lock(mu_);
  hold_markers_ = count;
}

bool Faults::TakeHoldTransactionMarkers() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (hold_markers_ == 0) return false;
    if (hold_markers_ > 0) --hold_markers_;
  }
  RecordInjected(
      "held_transaction_markers",
      "holding a transaction's markers after its Prepare state was persisted");
  return true;
}

void Faults::HoldMarkers() {
  Record(
      "armed: hold every WriteTxnMarkers request, neither applied nor "
      "answered, until released");
  std::lock_guard<std::mutex> lock(mu_);
  holding_marker_requests_ = true;
}

void Faults::ReleaseMarkers() {
  std::vector<std::function<void()>> held;
  std::function<void(std::function<void()>)> run_on_loop;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!holding_marker_requests_ && held_marker_requests_.empty()) return;
    holding_marker_requests_ = false;
    held.swap(held_marker_requests_);
    run_on_loop = hooks_.run_on_loop;
  }
  Record(absl::StrCat("markers released: ", held.size(),
                      " held WriteTxnMarkers request(s) handled now"));
  if (held.empty() || !run_on_loop) return;
  // One task, so that the requests are handled in the order they came.
  run_on_loop([held = std::move(held)] {
    for (const std::function<void()>& handle : held) handle();
  });
}

int Faults::held_marker_requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(held_marker_requests_.size());
}

bool Faults::holding_markers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return holding_marker_requests_;
}

bool Faults::HoldMarkerRequest(std::function<void()>& handle) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!holding_marker_requests_) return false;
    held_marker_requests_.push_back(std::move(handle));
  }
  RecordInjected("held_marker_request",
                 "holding a WriteTxnMarkers request: neither applied nor "
                 "answered");
  return true;
}

void Faults::DropHeldMarkers() {
  std::vector<std::function<void()>> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dropped.swap(held_marker_requests_);
  }
  if (dropped.empty()) return;
  Record(absl::StrCat("the broker stopped: ", dropped.size(),
                      " held WriteTxnMarkers request(s) dropped unapplied"));
}

void Faults::Clear() {
  Record("cleared every pending fault");
  {
    std::lock_guard<std::mutex> lock(mu_);
    errors_.clear();
    drops_.clear();
    latencies_.clear();
    hold_markers_ = 0;
    replication_paused_ = false;
    replication_latency_ms_ = 0;
  }
  ReleaseMarkers();
}

void Faults::PauseReplication() {
  RecordInjected("replication_paused", "replication into this broker paused");
  std::lock_guard<std::mutex> lock(mu_);
  replication_paused_ = true;
}

void Faults::ResumeReplication() {
  Record("replication into this broker resumed");
  std::lock_guard<std::mutex> lock(mu_);
  replication_paused_ = false;
}

void Faults::SetReplicationLatency(int32_t latency_ms) {
  std::string what =
      absl::StrCat(latency_ms, " ms latency before each replica fetch");
  if (latency_ms > 0) {
    RecordInjected("replication_latency", std::move(what));
  } else {
    Record(std::move(what));
  }
  std::lock_guard<std::mutex> lock(mu_);
  replication_latency_ms_ = std::max(latency_ms, 0);
}

bool Faults::replication_paused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return replication_paused_;
}

int32_t Faults::replication_latency_ms() const {
  std::lock_guard<std::mutex> lock(mu_);
  return replication_latency_ms_;
}

bool Faults::isolated() const {
  std::lock_guard<std::mutex> lock(mu_);
  return isolated_;
}

void Faults::SetIsolated(bool isolated) {
  std::lock_guard<std::mutex> lock(mu_);
  isolated_ = isolated;
}

std::vector<std::string> Faults::History() const {
  std::lock_guard<std::mutex> lock(mu_);
  return history_;
}

void Faults::SetHooks(Hooks hooks) {
  std::lock_guard<std::mutex> lock(mu_);
  hooks_ = std::move(hooks);
}

std::optional<int16_t> Faults::TakeError(int16_t api_key,
                                         const std::string* topic,
                                         std::optional<int32_t> partition) {
  std::optional<int16_t> error;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (errors_.empty()) return std::nullopt;
    for (auto it = errors_.begin(); it != errors_.end(); ++it) {
      if (!Matches(it->match, api_key, topic, partition)) continue;
      error = it->error_code;
      if (it->remaining > 0 && --it->remaining == 0) errors_.erase(it);
      break;
    }
  }
  if (error) {
    RecordInjected(
        "request_error",
        absl::StrCat(
            "injected ", std::string(protocol::ErrorCodeName(*error)), " into ",
            std::string(protocol::ApiKeyName(api_key)),
            topic ? absl::StrCat(" ", *topic) : std::string(),
            partition ? absl::StrCat("[", *partition, "]") : std::string()));
  }
  return error;
}

Faults::ResponseDrop Faults::TakeDropProduceResponse(
    const std::vector<std::string>& topics) {
  ResponseDrop drop = ResponseDrop::kNone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (drops_.empty()) return ResponseDrop::kNone;
    for (auto it = drops_.begin(); it != drops_.end(); ++it) {
      bool matches = !it->match.topic.has_value();
      for (const std::string& t : topics)
        matches |= Matches(it->match, 0, &t, std::nullopt);
      if (!matches) continue;
      if (++it->seen % it->one_in != 0) continue;
      drop = it->keep_open ? ResponseDrop::kKeepConnectionOpen
                           : ResponseDrop::kCloseConnection;
      if (it->remaining > 0 && --it->remaining == 0) drops_.erase(it);
      break;
    }
  }
  if (drop == ResponseDrop::kCloseConnection) {
    RecordInjected(
        "dropped_produce_response",
        "appended a Produce request and dropped its response (connection "
        "closed)");
  } else if (drop == ResponseDrop::kKeepConnectionOpen) {
    RecordInjected(
        "dropped_produce_response_kept_open",
        "appended a Produce request and dropped its response (connection "
        "kept open)");
  }
  return drop;
}

int32_t Faults::LatencyFor(int16_t api_key) const {
  std::lock_guard<std::mutex> lock(mu_);
  int32_t latency = 0;
  for (const LatencyRule& r : latencies_) {
    if (Matches(r.match, api_key, nullptr, std::nullopt) ||
        (!r.match.api_key && !r.match.topic)) {
      latency = std::max(latency, r.latency_ms);
    }
  }
  return latency;
}

}  // namespace exactly::broker
