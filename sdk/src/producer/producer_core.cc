#include "producer/producer_core.h"

#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace exactly::internal {
namespace {

// Kafka's limit; lets Send() NUL-terminate the topic on the stack.
constexpr size_t kMaxTopicLength = 249;

}  // namespace

absl::StatusOr<std::unique_ptr<ProducerCore>> ProducerCore::Create(
    const ProducerOptions& options) {
  absl::StatusOr<std::map<std::string, std::string>> properties =
      LibrdkafkaProperties(options);
  if (!properties.ok()) return properties.status();
  absl::StatusOr<ConfPtr> conf = MakeConf(*properties);
  if (!conf.ok()) return conf.status();
  // Reports as events on the main queue, served by our own thread; flush()
  // then waits for that thread instead of polling itself.
  rd_kafka_conf_set_events(
      conf->get(), RD_KAFKA_EVENT_DR | RD_KAFKA_EVENT_ERROR |
                       (options.on_statistics ? RD_KAFKA_EVENT_STATS : 0));
  absl::StatusOr<HandlePtr> rk =
      MakeHandle(RD_KAFKA_PRODUCER, std::move(*conf));
  if (!rk.ok()) return rk.status();
  return std::unique_ptr<ProducerCore>(
      new ProducerCore(options, std::move(*rk)));
}

ProducerCore::ProducerCore(const ProducerOptions& options, HandlePtr rk)
    : options_(options),
      rk_(std::move(rk)),
      dispatcher_(std::make_unique<DeliveryDispatcher>(
          rk_.get(), options.on_delivery, options.on_error,
          options.on_statistics,
          /*keep_unreported_failures=*/options.transactional_id.empty() &&
              options.properties.count("transactional.id") == 0)) {}

ProducerCore::~ProducerCore() { Close(kDefaultCloseTimeout).IgnoreError(); }

absl::Status ProducerCore::Send(const Record& record,
                                PendingDelivery* pending) {
  if (closed_) return absl::FailedPreconditionError("the producer is closed");
  if (record.topic.empty() || record.topic.size() > kMaxTopicLength) {
    return absl::InvalidArgumentError(
        absl::StrCat("topic name must have 1 to ", kMaxTopicLength,
                     " characters, got ", record.topic.size()));
  }
  char topic[kMaxTopicLength + 1];
  std::memcpy(topic, record.topic.data(), record.topic.size());
  topic[record.topic.size()] = '\0';

  rd_kafka_vu_t vu[8];
  size_t n = 0;
  vu[n].vtype = RD_KAFKA_VTYPE_TOPIC;
  vu[n++].u.cstr = topic;
  vu[n].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
  vu[n++].u.i = RD_KAFKA_MSG_F_COPY;
  if (record.value.data() != nullptr) {
    vu[n].vtype = RD_KAFKA_VTYPE_VALUE;
    vu[n].u.mem.ptr = const_cast<char*>(record.value.data());
    vu[n++].u.mem.size = record.value.size();
  }
  if (record.key.data() != nullptr) {
    vu[n].vtype = RD_KAFKA_VTYPE_KEY;
    vu[n].u.mem.ptr = const_cast<char*>(record.key.data());
    vu[n++].u.mem.size = record.key.size();
  }
  if (record.partition != kAnyPartition) {
    vu[n].vtype = RD_KAFKA_VTYPE_PARTITION;
    vu[n++].u.i32 = record.partition;
  }
  if (record.timestamp_ms != 0) {
    vu[n].vtype = RD_KAFKA_VTYPE_TIMESTAMP;
    vu[n++].u.i64 = record.timestamp_ms;
  }
  if (pending != nullptr) {
    vu[n].vtype = RD_KAFKA_VTYPE_OPAQUE;
    vu[n++].u.ptr = pending;
  }
  rd_kafka_headers_t* headers = nullptr;
  if (!record.headers.empty()) {
    headers = rd_kafka_headers_new(record.headers.size());
    for (const Header& h : record.headers) {
      rd_kafka_header_add(headers, h.key.data() != nullptr ? h.key.data() : "",
                          static_cast<ssize_t>(h.key.size()), h.value.data(),
                          static_cast<ssize_t>(h.value.size()));
    }
    vu[n].vtype = RD_KAFKA_VTYPE_HEADERS;
    vu[n++].u.headers = headers;
  }

  std::chrono::steady_clock::time_point deadline{};
  for (;;) {
    rd_kafka_error_t* error = rd_kafka_produceva(rk_.get(), vu, n);
    if (error == nullptr) {
      sent_.fetch_add(1, std::memory_order_relaxed);
      // Frees earlier records on this thread, which allocated them.
      dispatcher_->ReleaseFinished();
      return absl::OkStatus();
    }
    const rd_kafka_resp_err_t code = rd_kafka_error_code(error);
    rd_kafka_error_destroy(error);
    if (code == RD_KAFKA_RESP_ERR__QUEUE_FULL &&
        options_.queue_full == QueueFullPolicy::kBlock) {
      const auto now = std::chrono::steady_clock::now();
      if (deadline == std::chrono::steady_clock::time_point{}) {
        deadline = now + options_.queue_full_timeout;
      }
      if (now < deadline) {
        dispatcher_->WaitForRoom(deadline);
        continue;
      }
    }
    // On failure the headers stay ours (librdkafka's produceva contract).
    if (headers != nullptr) rd_kafka_headers_destroy(headers);
    return StatusFromCode(code, absl::StrCat("send to ", topic), rk_.get());
  }
}

absl::Status ProducerCore::ExplainAuthenticationFailure(
    absl::Status status) const {
  if (status.ok() || dispatcher_ == nullptr) return status;
  const std::string refused = dispatcher_->authentication_failure();
  if (refused.empty()) return status;
  return absl::PermissionDeniedError(
      absl::StrCat(status.message(),
                   "; the broker refused this client's credentials or TLS "
                   "handshake: ",
                   refused));
}

absl::Status ProducerCore::Flush(std::chrono::milliseconds timeout) {
  if (closed_) return absl::FailedPreconditionError("the producer is closed");
  const rd_kafka_resp_err_t err =
      Draining([&] { return rd_kafka_flush(rk_.get(), ToTimeoutMs(timeout)); });
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return ExplainAuthenticationFailure(StatusFromCode(
        err, absl::StrCat("flush: ", rd_kafka_outq_len(rk_.get()),
                          " record(s) not yet reported")));
  }
  return dispatcher_->TakeUnreportedFailures();
}

absl::Status ProducerCore::Close(std::chrono::milliseconds timeout) {
  if (closed_) return absl::OkStatus();
  absl::Status status = Flush(timeout);
  closed_ = true;
  if (rd_kafka_outq_len(rk_.get()) > 0) {
    // Fail what is left now, so that every record's handler still runs.
    rd_kafka_purge(rk_.get(),
                   RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    Draining([&] { return rd_kafka_flush(rk_.get(), 5000); });
  }
  dispatcher_->Stop();
  dispatcher_.reset();
  rk_.reset();
  return status;
}

ProducerStats ProducerCore::stats() const {
  ProducerStats s;
  s.sent = sent_.load(std::memory_order_relaxed);
  if (dispatcher_ != nullptr) {
    s.delivered = dispatcher_->delivered();
    s.failed = dispatcher_->failed();
    s.callback_errors = dispatcher_->callback_errors();
  }
  if (rk_ != nullptr) s.in_flight = rd_kafka_outq_len(rk_.get());
  return s;
}

void PromiseDelivery::Complete(const DeliveryReport& report) {
  if (!report.status.ok()) {
    promise_.set_value(report.status);
    return;
  }
  promise_.set_value(RecordMetadata{std::string(report.topic), report.partition,
                                    report.offset, report.timestamp_ms});
}

}  // namespace exactly::internal
