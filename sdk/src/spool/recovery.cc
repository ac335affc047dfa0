// Recovery, run by the drainer before its first batch and after every error:
// a producer (a new epoch for the transactional id, which fences an older
// instance), then, exactly-once, the watermark Kafka holds: a probe
// transaction, and the last checkpoint committed before it.
#include <algorithm>
#include <optional>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "spool/impl.h"

namespace exactly {

namespace spool = internal::spool;
using spool::WallMs;

namespace {

// A drainer call to the transactional API gives up after this long (the
// next call resumes it), so that Close() is not held up by a dead broker
// for a whole transaction timeout.
constexpr std::chrono::milliseconds kDrainerCallTimeout{5000};

std::string RandomNonce() {
  std::random_device random;
  return absl::StrCat(random(), "-", random(), "-", WallMs());
}

}  // namespace

absl::Status SpooledProducer::Impl::Recover() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++recoveries_;
  }
  if (!exactly_once_) {
    if (producer_ == nullptr) {
      ProducerOptions o = options_.producer;
      if (!o.on_error) o.on_error = options_.on_error;
      absl::StatusOr<std::unique_ptr<Producer>> p = Producer::Create(o);
      if (!p.ok()) return p.status();
      producer_ = std::move(*p);
      warm_topics_.clear();
      last_warm_topic_ = {};
    }
    return absl::OkStatus();
  }
  return RecoverExactlyOnce();
}

absl::Status SpooledProducer::Impl::RecoverExactlyOnce() {
  // (1) Fence the previous instance: init_transactions completes or aborts
  // its last transaction before it returns.
  if (txn_producer_ == nullptr) {
    ProducerOptions o = options_.producer;
    if (o.transaction_call_timeout == kRemainingTransactionTime) {
      o.transaction_call_timeout = kDrainerCallTimeout;
    }
    // The drainer retries whole rounds itself (with a recovery in between):
    // keep single calls short so that Close() is never held up for long.
    o.retry.max_retries = std::min(o.retry.max_retries, 3);
    if (!o.on_error) o.on_error = options_.on_error;
    absl::StatusOr<std::unique_ptr<TransactionalProducer>> p =
        TransactionalProducer::Create(o);
    if (!p.ok()) return p.status();
    txn_producer_ = std::move(*p);
  } else if (absl::Status s = txn_producer_->Rebuild(); !s.ok()) {
    return s;
  }
  warm_topics_.clear();
  last_warm_topic_ = {};
  if (reader_ == nullptr) {
    absl::StatusOr<std::unique_ptr<spool::CheckpointReader>> r =
        spool::CheckpointReader::Create(options_.producer,
                                        options_.checkpoint_topic);
    if (!r.ok()) return r.status();
    reader_ = std::move(*r);
  }
  const auto timeout = options_.recovery_timeout;
  if (options_.create_checkpoint_topic && !topic_created_) {
    if (absl::Status s = reader_->CreateTopic(timeout); !s.ok()) return s;
    topic_created_ = true;
  }
  absl::StatusOr<int32_t> partitions = reader_->PartitionCount(timeout);
  if (!partitions.ok()) return partitions.status();
  checkpoint_partition_ =
      spool::CheckpointPartition(transactional_id_, *partitions);
  WarmUp(options_.checkpoint_topic);

  // (2) A probe, committed after every transaction of the old instance.
  const std::string nonce = RandomNonce();
  const std::string probe_key = spool::ProbeKey(transactional_id_);
  absl::Status probed = txn_producer_->Transact([&](Transaction& txn) {
    return txn.Send({.topic = options_.checkpoint_topic,
                     .key = probe_key,
                     .value = nonce,
                     .partition = checkpoint_partition_});
  });
  if (!probed.ok()) return probed;

  // (3) The last checkpoint before the probe is the committed watermark.
  absl::StatusOr<std::optional<std::string>> value = reader_->ReadUntilProbe(
      checkpoint_partition_, spool::CheckpointKey(transactional_id_), probe_key,
      nonce, Clock::now() + timeout, &stopping_);
  if (!value.ok()) return value.status();
  // The first sequence Kafka cannot have seen from this spool: at the first
  // recovery, the next one when opened (a checkpoint at or past it means
  // this directory is an older copy); later, the next one to hand out.
  uint64_t unseen_from = next_seq_at_open_;
  if (checkpoint_read_) {
    std::lock_guard<std::mutex> lock(mu_);
    unseen_from = next_seq_;
  }
  uint64_t watermark = 0;
  if (value->has_value()) {
    auto parsed = spool::ParseCheckpoint(**value);
    if (!parsed.has_value()) {
      Report(absl::DataLossError(
          absl::StrCat("spool ", options_.dir, ": the checkpoint in ",
                       options_.checkpoint_topic, " is unreadable (\"", **value,
                       "\"); relying on the local watermark")));
    } else if (parsed->first != spool_id_) {
      Report(absl::FailedPreconditionError(absl::StrCat(
          "spool ", options_.dir, ": the checkpoint of transactional.id \"",
          transactional_id_, "\" belongs to spool ", parsed->first,
          ", not to this one (", spool_id_,
          "): was the directory replaced? It does not apply here")));
    } else if (parsed->second >= unseen_from) {
      // Kafka has seen sequences this copy of the spool never handed out:
      // the directory is an older copy. Only the records it holds can be
      // covered; new ones get sequences after Kafka's.
      Report(absl::FailedPreconditionError(absl::StrCat(
          "spool ", options_.dir, ": Kafka's checkpoint (sequence ",
          parsed->second, ") is ahead of this spool (next sequence ",
          unseen_from, checkpoint_read_ ? "" : " when opened",
          "): is this an older copy of the directory?")));
      watermark = unseen_from - 1;
      std::lock_guard<std::mutex> lock(mu_);
      // New records must not be taken for committed ones.
      if (next_seq_ <= parsed->second) next_seq_ = parsed->second + 1;
    } else {
      watermark = parsed->second;
    }
  }
  ApplyWatermark(watermark);
  checkpoint_read_ = true;
  return absl::OkStatus();
}

}  // namespace exactly
