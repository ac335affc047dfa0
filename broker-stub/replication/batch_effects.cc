#include "replication/batch_effects.h"

#include <string>
#include <vector>

#include "protocol/record_batch.h"

namespace exactly::broker {
namespace {

// The coordinator epoch a control batch carries (the value of its one record:
// int16 version, int32 coordinator epoch).
int32_t CoordinatorEpochOf(const protocol::RecordBatchView& batch) {
  absl::StatusOr<std::vector<protocol::Record>> records =
      protocol::DecodeRecords(batch);
  if (!records.ok() || records->empty() || !records->front().value ||
      records->front().value->size() < 6)
    return -1;
  const std::string& v = *records->front().value;
  uint32_t epoch = 0;
  for (int i = 2; i < 6; ++i) epoch = (epoch << 8) | static_cast<uint8_t>(v[i]);
  return static_cast<int32_t>(epoch);
}

}  // namespace

void ApplyBatchEffects(const StoredBatch& batch, ProducerStateTable& producers,
                       TransactionIndex& transactions) {
  const protocol::RecordBatchHeader& h = batch.header;
  if (h.is_control()) {
    protocol::RecordBatchView view{h, batch.bytes()};
    absl::StatusOr<protocol::ControlType> type =
        protocol::ReadControlType(view);
    if (!type.ok()) return;
    transactions.OnMarker(h.producer_id,
                          *type == protocol::ControlType::kCommit,
                          batch.base_offset());
    producers.OnMarker(h.producer_id, h.producer_epoch,
                       CoordinatorEpochOf(view), batch.base_offset());
    return;
  }
  if (h.has_producer_id()) producers.OnAppend(h);
  if (h.is_transactional())
    transactions.OnTransactionalBatch(h.producer_id, batch.base_offset());
}

}  // namespace exactly::broker
