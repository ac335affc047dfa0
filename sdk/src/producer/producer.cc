#include "exactly/producer.h"

#include <utility>

#include "producer/producer_core.h"

namespace exactly {

absl::StatusOr<std::unique_ptr<Producer>> Producer::Create(
    const ProducerOptions& options) {
  if (!options.transactional_id.empty() ||
      options.properties.count("transactional.id") != 0) {
    return absl::InvalidArgumentError(
        "transactional.id is set: use TransactionalProducer, whose Send() "
        "runs inside a transaction");
  }
  absl::StatusOr<std::unique_ptr<internal::ProducerCore>> core =
      internal::ProducerCore::Create(options);
  if (!core.ok()) return core.status();
  return std::unique_ptr<Producer>(new Producer(std::move(*core)));
}

Producer::Producer(std::unique_ptr<internal::ProducerCore> core)
    : core_(std::move(core)) {}

Producer::~Producer() = default;  // the core closes itself

absl::Status Producer::Send(const Record& record) {
  return core_->Send(record, nullptr);
}

absl::Status Producer::Send(const Record& record,
                            DeliveryCallback on_delivery) {
  if (!on_delivery) return core_->Send(record, nullptr);
  auto pending =
      std::make_unique<internal::CallbackDelivery>(std::move(on_delivery));
  absl::Status status = core_->Send(record, pending.get());
  if (status.ok()) pending.release();  // the core completes and deletes it
  return status;
}

std::future<absl::StatusOr<RecordMetadata>> Producer::SendWithFuture(
    const Record& record) {
  auto pending = std::make_unique<internal::PromiseDelivery>();
  std::future<absl::StatusOr<RecordMetadata>> future = pending->future();
  absl::Status status = core_->Send(record, pending.get());
  if (status.ok()) {
    pending.release();
  } else {
    pending->Fail(status);
  }
  return future;
}

absl::Status Producer::Flush(std::chrono::milliseconds timeout) {
  return core_->Flush(timeout);
}

absl::Status Producer::Close(std::chrono::milliseconds timeout) {
  return core_->Close(timeout);
}

ProducerStats Producer::stats() const { return core_->stats(); }

}  // namespace exactly
