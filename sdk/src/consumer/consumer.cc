// The consumer: librdkafka's high-level KafkaConsumer with safe defaults, a
// rebalance listener that can never leave an assignment half-done, and
// errors as statuses.
#include "exactly/consumer.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/callback_guard.h"
#include "client/rdkafka_util.h"
#include "exactly/error.h"

namespace exactly {

using internal::StatusFromCode;

class Consumer::Impl {
 public:
  explicit Impl(const ConsumerOptions& options) : options_(options) {}

  absl::Status Init();
  absl::StatusOr<std::optional<Message>> Poll(
      std::chrono::milliseconds timeout);
  absl::Status Close();

  rd_kafka_t* rk() const { return rk_.get(); }
  bool closed() const { return closed_; }
  void set_listener(std::shared_ptr<RebalanceListener> listener) {
    listener_ = std::move(listener);
  }
  rd_kafka_queue_t* queue() const { return queue_.get(); }

  // librdkafka callbacks; `opaque` is the Impl.
  static void OnRebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                          rd_kafka_topic_partition_list_t* partitions,
                          void* opaque);
  static void OnError(rd_kafka_t* rk, int err, const char* reason,
                      void* opaque);
  static void OnCommitted(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                          rd_kafka_topic_partition_list_t* offsets,
                          void* opaque);
  static void OnAsyncCommitDone(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                                rd_kafka_topic_partition_list_t* offsets,
                                void* commit_opaque);
  static int OnStatistics(rd_kafka_t* rk, char* json, size_t json_len,
                          void* opaque);

 private:
  void Rebalance(rd_kafka_resp_err_t err,
                 rd_kafka_topic_partition_list_t* partitions);
  void CallListener(
      const char* what,
      void (RebalanceListener::*method)(const std::vector<TopicPartition>&),
      const std::vector<TopicPartition>& partitions);
  // Background errors go to on_error only when the application set one:
  // librdkafka logs them itself and recovers.
  void Notify(const absl::Status& status) {
    if (options_.on_error) internal::ReportError(options_.on_error, status);
  }

  const ConsumerOptions options_;
  internal::HandlePtr rk_;
  internal::QueuePtr queue_;  // the consumer queue, for async commit results
  std::shared_ptr<RebalanceListener> listener_;
  bool closed_ = false;
};

absl::Status Consumer::Impl::Init() {
  absl::StatusOr<std::map<std::string, std::string>> properties =
      LibrdkafkaProperties(options_);
  if (!properties.ok()) return properties.status();
  absl::StatusOr<internal::ConfPtr> conf = internal::MakeConf(*properties);
  if (!conf.ok()) return conf.status();
  rd_kafka_conf_set_opaque(conf->get(), this);
  rd_kafka_conf_set_rebalance_cb(conf->get(), &Impl::OnRebalance);
  rd_kafka_conf_set_error_cb(conf->get(), &Impl::OnError);
  rd_kafka_conf_set_offset_commit_cb(conf->get(), &Impl::OnCommitted);
  if (options_.on_statistics) {
    rd_kafka_conf_set_stats_cb(conf->get(), &Impl::OnStatistics);
  }
  absl::StatusOr<internal::HandlePtr> rk =
      internal::MakeHandle(RD_KAFKA_CONSUMER, std::move(*conf));
  if (!rk.ok()) return rk.status();
  rk_ = std::move(*rk);
  // One queue for records, rebalances and errors, served by Poll.
  if (absl::Status s = StatusFromCode(rd_kafka_poll_set_consumer(rk_.get()),
                                      "poll_set_consumer");
      !s.ok()) {
    return s;
  }
  queue_.reset(rd_kafka_queue_get_consumer(rk_.get()));
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Message>> Consumer::Impl::Poll(
    std::chrono::milliseconds timeout) {
  if (closed_) return absl::FailedPreconditionError("the consumer is closed");
  rd_kafka_message_t* m =
      rd_kafka_consumer_poll(rk_.get(), internal::ToTimeoutMs(timeout));
  if (m == nullptr) {
    if (absl::Status fatal = internal::FatalStatus(rk_.get()); !fatal.ok()) {
      return fatal;
    }
    return std::nullopt;
  }
  if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) return Message(m);
  // An error in place of a record: fatal ones end consumption, the others
  // are informational (librdkafka keeps fetching).
  const rd_kafka_resp_err_t err = m->err;
  const std::string context =
      m->rkt != nullptr
          ? absl::StrCat("consume ", rd_kafka_topic_name(m->rkt), "[",
                         m->partition, "]: ", rd_kafka_message_errstr(m))
          : absl::StrCat("consume: ", rd_kafka_message_errstr(m));
  rd_kafka_message_destroy(m);
  if (err == RD_KAFKA_RESP_ERR__PARTITION_EOF) return std::nullopt;
  absl::Status status = StatusFromCode(err, context, rk_.get());
  if (IsFatal(status)) return status;
  Notify(status);
  return std::nullopt;
}

absl::Status Consumer::Impl::Close() {
  if (closed_) return absl::OkStatus();
  closed_ = true;
  // Leaves the group: the listener sees the revocation from in here.
  absl::Status status =
      StatusFromCode(rd_kafka_consumer_close(rk_.get()), "close", rk_.get());
  queue_.reset();
  rk_.reset();
  return status;
}

void Consumer::Impl::OnRebalance(rd_kafka_t*, rd_kafka_resp_err_t err,
                                 rd_kafka_topic_partition_list_t* partitions,
                                 void* opaque) {
  static_cast<Impl*>(opaque)->Rebalance(err, partitions);
}

void Consumer::Impl::Rebalance(rd_kafka_resp_err_t err,
                               rd_kafka_topic_partition_list_t* partitions) {
  rd_kafka_t* rk = rk_.get();
  // NULL while the consumer is closing (its group handler no longer answers):
  // a rebalance can still arrive then, e.g. an assignment in flight.
  const char* protocol = rd_kafka_rebalance_protocol(rk);
  const bool cooperative =
      protocol != nullptr && std::strcmp(protocol, "COOPERATIVE") == 0;
  const std::vector<TopicPartition> list = internal::ToPartitions(partitions);
  absl::Status status;
  switch (err) {
    case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
      status = cooperative
                   ? internal::TakeError(
                         rd_kafka_incremental_assign(rk, partitions), "assign")
                   : StatusFromCode(rd_kafka_assign(rk, partitions), "assign");
      CallListener("OnAssigned", &RebalanceListener::OnAssigned, list);
      break;
    case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
      // The listener runs while the partitions are still assigned.
      CallListener(rd_kafka_assignment_lost(rk) ? "OnLost" : "OnRevoked",
                   rd_kafka_assignment_lost(rk) ? &RebalanceListener::OnLost
                                                : &RebalanceListener::OnRevoked,
                   list);
      status =
          cooperative
              ? internal::TakeError(
                    rd_kafka_incremental_unassign(rk, partitions), "unassign")
              : StatusFromCode(rd_kafka_assign(rk, nullptr), "unassign");
      break;
    default:
      Notify(StatusFromCode(err, "rebalance"));
      status = StatusFromCode(rd_kafka_assign(rk, nullptr), "unassign");
      break;
  }
  if (!status.ok()) internal::ReportError(options_.on_error, status);
}

void Consumer::Impl::CallListener(
    const char* what,
    void (RebalanceListener::*method)(const std::vector<TopicPartition>&),
    const std::vector<TopicPartition>& partitions) {
  if (listener_ == nullptr) return;
  absl::Status thrown =
      internal::CallUser(what, [&] { ((*listener_).*method)(partitions); });
  if (!thrown.ok()) internal::ReportError(options_.on_error, thrown);
}

void Consumer::Impl::OnError(rd_kafka_t* rk, int err, const char* reason,
                             void* opaque) {
  auto* self = static_cast<Impl*>(opaque);
  if (err == RD_KAFKA_RESP_ERR__FATAL) {
    internal::ReportError(self->options_.on_error, internal::FatalStatus(rk));
    return;
  }
  self->Notify(StatusFromCode(static_cast<rd_kafka_resp_err_t>(err), reason));
}

int Consumer::Impl::OnStatistics(rd_kafka_t*, char* json, size_t json_len,
                                 void* opaque) {
  auto* self = static_cast<Impl*>(opaque);
  absl::Status thrown = internal::CallUser("statistics callback", [&] {
    self->options_.on_statistics(std::string_view(json, json_len));
  });
  if (!thrown.ok()) internal::ReportError(self->options_.on_error, thrown);
  return 0;  // librdkafka frees `json`
}

void Consumer::Impl::OnCommitted(rd_kafka_t*, rd_kafka_resp_err_t err,
                                 rd_kafka_topic_partition_list_t* offsets,
                                 void* opaque) {
  // Results of CommitAsync() calls made without a callback: only failures
  // matter.
  if (err == RD_KAFKA_RESP_ERR__NO_OFFSET) return;
  absl::Status status =
      err != RD_KAFKA_RESP_ERR_NO_ERROR
          ? StatusFromCode(err, "async commit")
          : internal::FirstPartitionError(offsets, "async commit");
  if (!status.ok()) {
    internal::ReportError(static_cast<Impl*>(opaque)->options_.on_error,
                          status);
  }
}

void Consumer::Impl::OnAsyncCommitDone(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                                       rd_kafka_topic_partition_list_t* offsets,
                                       void* commit_opaque) {
  std::unique_ptr<CommitCallback> done(
      static_cast<CommitCallback*>(commit_opaque));
  absl::Status status;
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR &&
      err != RD_KAFKA_RESP_ERR__NO_OFFSET) {
    status = StatusFromCode(err, "async commit");
  } else {
    status = internal::FirstPartitionError(offsets, "async commit");
  }
  absl::Status thrown =
      internal::CallUser("commit callback", [&] { (*done)(status); });
  if (!thrown.ok()) {
    auto* self = static_cast<Impl*>(rd_kafka_opaque(rk));
    internal::ReportError(self->options_.on_error, thrown);
  }
}

// ---------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Consumer>> Consumer::Create(
    const ConsumerOptions& options) {
  auto impl = std::make_unique<Impl>(options);
  if (absl::Status s = impl->Init(); !s.ok()) return s;
  return std::unique_ptr<Consumer>(new Consumer(std::move(impl)));
}

Consumer::Consumer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Consumer::~Consumer() { impl_->Close().IgnoreError(); }

absl::Status Consumer::Subscribe(const std::vector<std::string>& topics,
                                 std::shared_ptr<RebalanceListener> listener) {
  if (impl_->closed()) {
    return absl::FailedPreconditionError("the consumer is closed");
  }
  if (topics.empty()) return absl::InvalidArgumentError("no topics");
  impl_->set_listener(std::move(listener));
  internal::PartitionListPtr list(
      rd_kafka_topic_partition_list_new(static_cast<int>(topics.size())));
  for (const std::string& topic : topics) {
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(),
                                      RD_KAFKA_PARTITION_UA);
  }
  return StatusFromCode(rd_kafka_subscribe(impl_->rk(), list.get()),
                        "subscribe");
}

absl::Status Consumer::Unsubscribe() {
  if (impl_->closed()) {
    return absl::FailedPreconditionError("the consumer is closed");
  }
  return StatusFromCode(rd_kafka_unsubscribe(impl_->rk()), "unsubscribe");
}

absl::StatusOr<std::optional<Message>> Consumer::Poll(
    std::chrono::milliseconds timeout) {
  return impl_->Poll(timeout);
}

absl::StatusOr<std::vector<Message>> Consumer::PollBatch(
    size_t max_records, std::chrono::milliseconds timeout) {
  std::vector<Message> out;
  if (max_records == 0) return out;
  absl::StatusOr<std::optional<Message>> first = impl_->Poll(timeout);
  if (!first.ok()) return first.status();
  if (!first->has_value()) return out;
  out.reserve(max_records);
  out.push_back(std::move(**first));
  while (out.size() < max_records) {
    absl::StatusOr<std::optional<Message>> next =
        impl_->Poll(std::chrono::milliseconds(0));
    // An error after some records: return those; the next poll reports it.
    if (!next.ok() || !next->has_value()) break;
    out.push_back(std::move(**next));
  }
  return out;
}

absl::Status Consumer::Commit() {
  if (impl_->closed()) {
    return absl::FailedPreconditionError("the consumer is closed");
  }
  const rd_kafka_resp_err_t err = rd_kafka_commit(impl_->rk(), nullptr, 0);
  if (err == RD_KAFKA_RESP_ERR__NO_OFFSET) return absl::OkStatus();
  return StatusFromCode(err, "commit", impl_->rk());
}

absl::Status Consumer::Commit(
    const std::vector<TopicPartitionOffset>& offsets) {
  if (impl_->closed()) {
    return absl::FailedPreconditionError("the consumer is closed");
  }
  if (offsets.empty()) return absl::OkStatus();
  internal::PartitionListPtr list = internal::ToPartitionList(offsets);
  const rd_kafka_resp_err_t err = rd_kafka_commit(impl_->rk(), list.get(), 0);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return StatusFromCode(err, "commit", impl_->rk());
  }
  return internal::FirstPartitionError(list.get(), "commit");
}

absl::Status Consumer::CommitAsync(CommitCallback done) {
  return CommitAsync({}, std::move(done));
}

absl::Status Consumer::CommitAsync(
    const std::vector<TopicPartitionOffset>& offsets, CommitCallback done) {
  if (impl_->closed()) {
    return absl::FailedPreconditionError("the consumer is closed");
  }
  internal::PartitionListPtr list;
  if (!offsets.empty()) list = internal::ToPartitionList(offsets);
  if (!done) {
    return StatusFromCode(rd_kafka_commit(impl_->rk(), list.get(), 1), "commit",
                          impl_->rk());
  }
  auto callback = std::make_unique<CommitCallback>(std::move(done));
  const rd_kafka_resp_err_t err =
      rd_kafka_commit_queue(impl_->rk(), list.get(), impl_->queue(),
                            &Impl::OnAsyncCommitDone, callback.get());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return StatusFromCode(err, "commit", impl_->rk());
  }
  callback.release();  // OnAsyncCommitDone deletes it
  return absl::OkStatus();
}

absl::Status Consumer::Seek(const TopicPartitionOffset& position,
                            std::chrono::milliseconds timeout) {
  if (impl_->closed()) {
    return absl::FailedPreconditionError("the consumer is closed");
  }
  internal::PartitionListPtr list =
      internal::ToPartitionList(std::vector<TopicPartitionOffset>{position});
  absl::Status status = internal::TakeError(
      rd_kafka_seek_partitions(impl_->rk(), list.get(),
                               internal::ToTimeoutMs(timeout)),
      "seek");
  if (!status.ok()) return status;
  return internal::FirstPartitionError(list.get(), "seek");
}

absl::StatusOr<std::vector<TopicPartitionOffset>> Consumer::Position() const {
  if (impl_->closed()) {
    return absl::FailedPreconditionError("the consumer is closed");
  }
  rd_kafka_topic_partition_list_t* raw = nullptr;
  if (absl::Status s =
          StatusFromCode(rd_kafka_assignment(impl_->rk(), &raw), "assignment");
      !s.ok()) {
    return s;
  }
  internal::PartitionListPtr list(raw);
  if (absl::Status s = StatusFromCode(
          rd_kafka_position(impl_->rk(), list.get()), "position");
      !s.ok()) {
    return s;
  }
  return internal::ToOffsets(list.get());
}

absl::StatusOr<std::vector<TopicPartitionOffset>> Consumer::Committed(
    std::chrono::milliseconds timeout) {
  if (impl_->closed()) {
    return absl::FailedPreconditionError("the consumer is closed");
  }
  rd_kafka_topic_partition_list_t* raw = nullptr;
  if (absl::Status s =
          StatusFromCode(rd_kafka_assignment(impl_->rk(), &raw), "assignment");
      !s.ok()) {
    return s;
  }
  internal::PartitionListPtr list(raw);
  if (absl::Status s =
          StatusFromCode(rd_kafka_committed(impl_->rk(), list.get(),
                                            internal::ToTimeoutMs(timeout)),
                         "committed", impl_->rk());
      !s.ok()) {
    return s;
  }
  return internal::ToOffsets(list.get());
}

absl::StatusOr<std::vector<TopicPartition>> Consumer::Assignment() const {
  if (impl_->closed()) {
    return absl::FailedPreconditionError("the consumer is closed");
  }
  rd_kafka_topic_partition_list_t* raw = nullptr;
  if (absl::Status s =
          StatusFromCode(rd_kafka_assignment(impl_->rk(), &raw), "assignment");
      !s.ok()) {
    return s;
  }
  internal::PartitionListPtr list(raw);
  return internal::ToPartitions(list.get());
}

absl::StatusOr<ConsumerGroupMetadata> Consumer::GroupMetadata() const {
  if (impl_->closed()) {
    return absl::FailedPreconditionError("the consumer is closed");
  }
  rd_kafka_consumer_group_metadata_t* metadata =
      rd_kafka_consumer_group_metadata(impl_->rk());
  if (metadata == nullptr) {
    return absl::FailedPreconditionError("the consumer has no group metadata");
  }
  return ConsumerGroupMetadata(metadata);
}

absl::Status Consumer::Close() { return impl_->Close(); }

rd_kafka_s* Consumer::native_handle() const { return impl_->rk(); }

}  // namespace exactly
