// Options: safe defaults, property-name aliases, and the checks that refuse a
// configuration which would lose or duplicate records.
#include "exactly/options.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/options_internal.h"

namespace exactly {
namespace {

using Properties = std::map<std::string, std::string>;

// librdkafka accepts several names for some settings; checks and defaults use
// the first name of each pair's target.
std::string_view CanonicalName(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
      {"metadata.broker.list", "bootstrap.servers"},
      {"request.required.acks", "acks"},
      {"max.in.flight", "max.in.flight.requests.per.connection"},
      {"message.send.max.retries", "retries"},
      {"queue.buffering.max.ms", "linger.ms"},
  };
  for (const auto& [alias, canonical] : kAliases) {
    if (name == alias) return canonical;
  }
  return name;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return out;
}

// librdkafka's boolean spellings; nullopt leaves a bad value to librdkafka.
std::optional<bool> ParseBool(std::string_view value) {
  const std::string v = Lower(value);
  if (v == "true" || v == "t" || v == "1" || v == "yes" || v == "on") {
    return true;
  }
  if (v == "false" || v == "f" || v == "0" || v == "no" || v == "off") {
    return false;
  }
  return std::nullopt;
}

std::optional<long> ParseInt(std::string_view value) {
  long out = 0;
  auto [ptr, ec] =
      std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || ptr != value.data() + value.size()) {
    return std::nullopt;
  }
  return out;
}

// `properties` under canonical names. Two names for one setting with
// different values is refused: which one librdkafka keeps is an accident.
absl::StatusOr<Properties> Canonicalize(const Properties& properties) {
  Properties out;
  for (const auto& [name, value] : properties) {
    const std::string canonical(CanonicalName(name));
    auto [it, inserted] = out.emplace(canonical, value);
    if (!inserted && it->second != value) {
      return absl::InvalidArgumentError(
          absl::StrCat("property ", canonical,
                       " is set twice with different "
                       "values (",
                       it->second, " and ", value, " via ", name, ")"));
    }
  }
  return out;
}

// Puts an options field into `properties`, refusing a different value set
// there under the same name.
absl::Status MergeField(Properties& properties, const std::string& name,
                        const char* field, const std::string& value) {
  if (value.empty()) return absl::OkStatus();
  auto [it, inserted] = properties.emplace(name, value);
  if (!inserted && it->second != value) {
    return absl::InvalidArgumentError(absl::StrCat(
        "property ", name, " is set twice: options.", field, "=\"", value,
        "\" and properties[\"", name, "\"]=\"", it->second, "\""));
  }
  return absl::OkStatus();
}

absl::Status Unsafe(const std::string& property, const std::string& value,
                    const std::string& context, const char* why) {
  return absl::InvalidArgumentError(
      absl::StrCat(property, "=", value, " is unsafe ", context, ": ", why));
}

const std::string* Find(const Properties& properties, const std::string& name) {
  auto it = properties.find(name);
  return it == properties.end() ? nullptr : &it->second;
}

absl::Status CheckProducerSafety(const Properties& p,
                                 const std::string& context) {
  if (const std::string* v = Find(p, "acks")) {
    const std::string acks = Lower(*v);
    if (acks != "all" && acks != "-1") {
      return Unsafe("acks", *v, context,
                    "a record acknowledged by fewer than all in-sync replicas "
                    "is lost if the leader fails before the followers copy "
                    "it; exactly-once needs acks=all");
    }
  }
  if (const std::string* v = Find(p, "enable.idempotence")) {
    if (ParseBool(*v) == false) {
      return Unsafe("enable.idempotence", *v, context,
                    "without idempotence a retried batch can be written twice "
                    "or out of order");
    }
  }
  if (const std::string* v = Find(p, "max.in.flight.requests.per.connection")) {
    if (std::optional<long> n = ParseInt(*v); n.has_value() && *n > 5) {
      return Unsafe("max.in.flight.requests.per.connection", *v, context,
                    "the broker deduplicates only a producer's last 5 "
                    "batches, so more requests in flight can duplicate or "
                    "reorder records; use at most 5");
    }
  }
  if (const std::string* v = Find(p, "retries")) {
    if (std::optional<long> n = ParseInt(*v); n.has_value() && *n < 1) {
      return Unsafe("retries", *v, context,
                    "a transient broker error would fail the record instead "
                    "of retrying it");
    }
  }
  if (const std::string* v = Find(p, "queuing.strategy")) {
    if (Lower(*v) == "lifo") {
      return Unsafe("queuing.strategy", *v, context,
                    "LIFO queueing reorders records");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckConsumerSafety(const Properties& p,
                                 const std::string& context) {
  for (const char* name : {"enable.auto.commit", "auto.commit.enable"}) {
    if (const std::string* v = Find(p, name)) {
      if (ParseBool(*v) == true) {
        return Unsafe(name, *v, context,
                      "offsets would be committed on a timer, apart from "
                      "processing: a crash then skips records that were "
                      "committed but never processed; commit explicitly or "
                      "in the transaction");
      }
    }
  }
  if (const std::string* v = Find(p, "isolation.level")) {
    if (Lower(*v) != "read_committed") {
      return Unsafe("isolation.level", *v, context,
                    "the consumer would read records of aborted and "
                    "still-open transactions; use read_committed");
    }
  }
  return absl::OkStatus();
}

// The user's properties with the options' fields merged in; no defaults.
absl::StatusOr<Properties> UserProducerProperties(const ProducerOptions& o) {
  absl::StatusOr<Properties> p = Canonicalize(o.properties);
  if (!p.ok()) return p.status();
  if (absl::Status s = MergeField(*p, "bootstrap.servers", "bootstrap_servers",
                                  o.bootstrap_servers);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = MergeField(*p, "client.id", "client_id", o.client_id);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = MergeField(*p, "transactional.id", "transactional_id",
                                  o.transactional_id);
      !s.ok()) {
    return s;
  }
  if (Find(*p, "bootstrap.servers") == nullptr) {
    return absl::InvalidArgumentError(
        "bootstrap.servers is required (options.bootstrap_servers)");
  }
  return p;
}

absl::StatusOr<Properties> UserConsumerProperties(const ConsumerOptions& o) {
  absl::StatusOr<Properties> p = Canonicalize(o.properties);
  if (!p.ok()) return p.status();
  if (absl::Status s = MergeField(*p, "bootstrap.servers", "bootstrap_servers",
                                  o.bootstrap_servers);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = MergeField(*p, "group.id", "group_id", o.group_id);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = MergeField(*p, "client.id", "client_id", o.client_id);
      !s.ok()) {
    return s;
  }
  if (Find(*p, "bootstrap.servers") == nullptr) {
    return absl::InvalidArgumentError(
        "bootstrap.servers is required (options.bootstrap_servers)");
  }
  if (Find(*p, "group.id") == nullptr) {
    return absl::InvalidArgumentError(
        "group.id is required (options.group_id): offsets are committed to "
        "the consumer group");
  }
  return p;
}

absl::Status ValidateProducer(const ProducerOptions& options,
                              const Properties& p) {
  if (options.queue_full_timeout.count() < 0) {
    return absl::InvalidArgumentError("queue_full_timeout must be >= 0");
  }
  if (options.retry.max_attempts < 1 || options.retry.max_retries < 0) {
    return absl::InvalidArgumentError(
        "retry.max_attempts must be >= 1 and retry.max_retries >= 0");
  }
  const std::string* txn_id = Find(p, "transactional.id");
  if (txn_id != nullptr) {
    return CheckProducerSafety(
        p, absl::StrCat("with transactional.id \"", *txn_id, "\""));
  }
  if (options.mode == Mode::kExactlyOnce) {
    return CheckProducerSafety(p, "in exactly-once mode");
  }
  return absl::OkStatus();
}

// How every client recovers from a dropped connection (issue 23). librdkafka
// doubles its reconnect back-off on each connection that dies within
// reconnect.backoff.max.ms of the attempt before, up to that maximum: 10 s by
// default, so on a flaky network every lost connection stalls a client for up
// to 10 s. bench/fault_recovery_bench, 1 produce response in 10 dropped (the
// connection closed), 1,000 spooled records (33 drops): 268 s to drain with
// librdkafka's 100 ms / 10 s, 28 s with the Java client's 50 ms / 1 s, 6.0 s
// with these. The drain time is the sum of the back-offs (about 0.8 x the
// maximum per drop); retry.backoff.ms only starts to matter below 200 ms.
// The price: a client tries a broker that is down 5 times a second, not once
// (Java) or every 10 s.
constexpr std::pair<const char*, const char*> kRecoveryDefaults[] = {
    {"reconnect.backoff.ms", "50"},
    {"reconnect.backoff.max.ms", "200"},
};

// How a producer recovers from a produce response lost on a connection that
// stays open (issue 23): librdkafka's only clock for a request in flight is
// socket.timeout.ms (its request.timeout.ms is only the broker's wait for
// acks=all, written into the request); its timeout scan (once a second) fails
// the request as "possibly persisted", closes the connection
// (socket.max.fails=1), and the idempotent producer retries the batch. 60 s by
// default (transaction.timeout.ms - 100 for a transactional producer): each
// lost response stalls a partition for a minute. bench/fault_recovery_bench,
// 2 responses lost, 300 records, Producer: 120.3 s to drain with librdkafka's
// 60 s, 60.3 s with the Java client's 30 s (its request.timeout.ms), 20.2 s
// with 10 s (10.1 s per drop). No request timed out in the SDK integration
// suite with 10 s (83 tests run, 3 minutes, on the 2-core VM while a build and
// the bench ran). The price: a request a broker takes longer than 10 s to
// answer is retried on a new connection, among them an acks=all produce a
// broker holds for a slow follower (request.timeout.ms, 30 s, and Kafka's
// replica.lag.time.max.ms, 30 s, stay as they are, so the broker's own answer
// is not shortened); the idempotent producer drops the duplicates. Producers
// only: a consumer's fetches wait fetch.wait.max.ms on top, and its group
// requests have timeouts of their own.
constexpr char kProducerSocketTimeoutMs[] = "10000";

// librdkafka refuses socket.timeout.ms > transaction.timeout.ms + 100; below
// that it picks transaction.timeout.ms - 100 itself, which is shorter.
bool WantsSocketTimeoutDefault(const Properties& user) {
  if (Find(user, "socket.timeout.ms") != nullptr) return false;
  const std::string* txn_timeout = Find(user, "transaction.timeout.ms");
  if (txn_timeout == nullptr) return true;
  std::optional<long> ms = ParseInt(*txn_timeout);
  return ms.has_value() && *ms + 100 >= 10000;
}

// `defaults` with kRecoveryDefaults, then `user`, on top.
Properties WithDefaults(Properties defaults, const Properties& user) {
  for (const auto& [name, value] : kRecoveryDefaults) defaults[name] = value;
  for (const auto& [name, value] : user) defaults[name] = value;
  return defaults;
}

}  // namespace

absl::Status Validate(const ProducerOptions& options) {
  absl::StatusOr<Properties> p = UserProducerProperties(options);
  if (!p.ok()) return p.status();
  return ValidateProducer(options, *p);
}

absl::Status Validate(const ConsumerOptions& options) {
  absl::StatusOr<Properties> p = UserConsumerProperties(options);
  if (!p.ok()) return p.status();
  if (options.mode == Mode::kExactlyOnce) {
    return CheckConsumerSafety(*p, "in exactly-once mode");
  }
  return absl::OkStatus();
}

absl::Status Validate(const ProcessorOptions& options) {
  if (options.input_topics.empty()) {
    return absl::InvalidArgumentError(
        "input_topics is empty: the processor needs a topic to consume");
  }
  if (options.transactional_id.empty() &&
      options.producer_properties.count("transactional.id") == 0) {
    return absl::InvalidArgumentError(
        "transactional.id is required (options.transactional_id): output and "
        "input offsets are committed in one transaction");
  }
  if (options.max_batch_records == 0 || options.max_batch_time.count() <= 0) {
    return absl::InvalidArgumentError(
        "max_batch_records and max_batch_time must be positive");
  }
  ConsumerOptions consumer = internal::ConsumerOptionsFor(options);
  absl::StatusOr<Properties> cp = UserConsumerProperties(consumer);
  if (!cp.ok()) return cp.status();
  if (absl::Status s = CheckConsumerSafety(*cp, "in a processor"); !s.ok()) {
    return s;
  }
  ProducerOptions producer = internal::ProducerOptionsFor(options);
  absl::StatusOr<Properties> pp = UserProducerProperties(producer);
  if (!pp.ok()) return pp.status();
  if (absl::Status s = ValidateProducer(producer, *pp); !s.ok()) return s;
  long txn_timeout_ms = 60000;  // librdkafka's default transaction.timeout.ms
  if (const std::string* v = Find(*pp, "transaction.timeout.ms")) {
    txn_timeout_ms = ParseInt(*v).value_or(txn_timeout_ms);
  }
  if (options.max_batch_time.count() >= txn_timeout_ms) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_batch_time (", options.max_batch_time.count(),
        " ms) must be shorter than transaction.timeout.ms (", txn_timeout_ms,
        " ms): a batch's transaction stays open while the batch fills"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, std::string>> LibrdkafkaProperties(
    const ProducerOptions& options) {
  absl::StatusOr<Properties> user = UserProducerProperties(options);
  if (!user.ok()) return user.status();
  if (absl::Status s = ValidateProducer(options, *user); !s.ok()) return s;
  Properties defaults = {
      {"acks", "all"},
      {"enable.idempotence", "true"},
      {"max.in.flight.requests.per.connection", "5"},
  };
  if (WantsSocketTimeoutDefault(*user)) {
    defaults["socket.timeout.ms"] = kProducerSocketTimeoutMs;
  }
  return WithDefaults(std::move(defaults), *user);
}

absl::StatusOr<std::map<std::string, std::string>> LibrdkafkaProperties(
    const ConsumerOptions& options) {
  if (absl::Status s = Validate(options); !s.ok()) return s;
  absl::StatusOr<Properties> user = UserConsumerProperties(options);
  if (!user.ok()) return user.status();
  return WithDefaults(
      {
          {"isolation.level", "read_committed"},
          {"enable.auto.commit", "false"},
          // A new group starts from the beginning, so no record is skipped.
          {"auto.offset.reset", "earliest"},
      },
      *user);
}

namespace internal {

ProducerOptions ProducerOptionsFor(const ProcessorOptions& options) {
  ProducerOptions out;
  out.bootstrap_servers = options.bootstrap_servers;
  out.transactional_id = options.transactional_id;
  out.properties = options.producer_properties;
  out.mode = Mode::kExactlyOnce;
  out.retry = options.retry;
  out.on_error = options.on_error;
  out.on_statistics = options.on_statistics;
  return out;
}

ConsumerOptions ConsumerOptionsFor(const ProcessorOptions& options) {
  ConsumerOptions out;
  out.bootstrap_servers = options.bootstrap_servers;
  out.group_id = options.group_id;
  out.properties = options.consumer_properties;
  out.mode = Mode::kExactlyOnce;
  out.on_error = options.on_error;
  out.on_statistics = options.on_statistics;
  return out;
}

}  // namespace internal
}  // namespace exactly
