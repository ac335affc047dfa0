#include "cluster/appender.h"

#include "absl/strings/str_cat.h"
#include "cluster/retention.h"
#include "replication/batch_effects.h"
#include "replication/high_watermark.h"
#include "util/logging.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;
using protocol::RecordBatchView;

}  // namespace

AppendOutcome AppendRecords(BrokerState& b, Partition& partition,
                            const Topic& topic, const SharedBuffer& frame,
                            std::string_view records) {
  AppendOutcome out;
  protocol::BatchCheck check = protocol::CheckProduceBatches(
      records, {.max_decompressed_bytes = static_cast<size_t>(
                    b.options().max_decompressed_batch_bytes)});
  if (!check.ok()) {
    out.error = Error(check.error, check.message);
    return out;
  }
  int32_t max_bytes = topic.config.max_message_bytes();
  for (const RecordBatchView& batch : check.batches) {
    if (batch.bytes.size() > static_cast<size_t>(max_bytes)) {
      out.error = Error(ErrorCode::kMessageTooLarge,
                        absl::StrCat("batch of ", batch.bytes.size(),
                                     " bytes exceeds max.message.bytes ",
                                     max_bytes, " of ", topic.name));
      return out;
    }
  }
  if (topic.config.cleanup_compact()) {
    // Kafka's LogValidator: compaction keeps the latest record per key, so a
    // compacted topic refuses records without one.
    for (const RecordBatchView& batch : check.batches) {
      absl::StatusOr<std::vector<protocol::Record>> records =
          protocol::DecodeRecords(
              batch,
              static_cast<size_t>(b.options().max_decompressed_batch_bytes));
      if (!records.ok()) {
        out.error = Error(ErrorCode::kCorruptMessage,
                          std::string(records.status().message()));
        return out;
      }
      // Kafka's LogValidator names every keyless record of the batch.
      for (size_t i = 0; i < records->size(); ++i) {
        if ((*records)[i].key) continue;
        out.record_errors.emplace_back(
            static_cast<int32_t>(i),
            absl::StrCat("Compacted topic cannot accept message without key "
                         "in topic partition ",
                         topic.name, "-", partition.index(), "."));
      }
      if (!out.record_errors.empty()) {
        out.error = Error(
            ErrorCode::kInvalidRecord,
            absl::StrCat("One or more records have been rejected due to ",
                         out.record_errors.size(), " record errors in total: ",
                         out.record_errors.front().second));
        return out;
      }
    }
  }
  // Each batch is checked against the producer state that the previous one
  // left; clients send one batch per partition per request, so a partial append
  // of several is moot.
  for (const RecordBatchView& batch : check.batches) {
    const protocol::RecordBatchHeader& h = batch.header;
    if (h.has_producer_id() && !h.is_transactional() &&
        partition.transactions().IsOpen(h.producer_id)) {
      out.error = Error(
          ErrorCode::kInvalidTxnState,
          absl::StrCat("producer ", h.producer_id,
                       " sent a non-transactional batch while its transaction "
                       "is open"));
      return out;
    }
    SequenceCheck seq = partition.producers().Check(h);
    if (seq.verdict == SequenceCheck::Verdict::kReject) {
      out.error = Error(seq.error, seq.message);
      return out;
    }
    if (seq.verdict == SequenceCheck::Verdict::kDuplicate) {
      if (seq.transaction_ended) {
        std::string what = absl::StrCat(
            "sequence reuse: producer ", h.producer_id, " epoch ",
            h.producer_epoch, " sent sequences ", h.base_sequence, "..",
            h.last_sequence(), " to ", topic.name, "[", partition.index(),
            "] again after the transaction that appended them at offset ",
            seq.duplicate_of->first_offset,
            " ended: these are new records the client numbered like old ones");
        LogWarning(what);
        b.faults().Record(what);
        if (b.options().strict_sequence_reuse) {
          // Kafka acknowledges it as a duplicate (and the records are lost);
          // strict mode makes the client's bug visible instead.
          out.error = Error(ErrorCode::kOutOfOrderSequenceNumber, what);
          return out;
        }
      }
      if (out.base_offset < 0) out.base_offset = seq.duplicate_of->first_offset;
      out.duplicate = true;
      continue;
    }
    // The frame is this broker's own buffer: the batch is usually kept where
    // it arrived and written in place (FrameArena::Keep says where).
    KeptBytes kept = b.frames().Keep(
        frame, const_cast<char*>(batch.bytes.data()), batch.bytes.size());
    StoredBatch& stored =
        partition.log().Append(std::move(kept.owner), kept.data,
                               batch.bytes.size(), h, partition.leader_epoch());
    if (topic.config.log_append_time()) {
      // The broker's clock replaces the producers' timestamps
      // (message.timestamp.type).
      StoredBatch& mutable_batch = stored;
      int64_t now = b.NowMs();
      mutable_batch.header.attributes |= protocol::kAttrLogAppendTime;
      mutable_batch.header.max_timestamp = now;
      char* p = mutable_batch.data;
      p[protocol::kBatchAttributesOffset] =
          static_cast<char>(mutable_batch.header.attributes >> 8);
      p[protocol::kBatchAttributesOffset + 1] =
          static_cast<char>(mutable_batch.header.attributes);
      for (int i = 0; i < 8; ++i)
        p[35 + i] = static_cast<char>(now >> (56 - 8 * i));
      protocol::UpdateBatchCrc(p, mutable_batch.size);
      out.log_append_time = now;
    }
    partition.producers().OnAppend(stored.header);
    if (h.is_transactional()) {
      partition.transactions().OnTransactionalBatch(h.producer_id,
                                                    stored.base_offset());
    }
    b.PersistAppend(partition, stored);
    if (out.base_offset < 0) out.base_offset = stored.base_offset();
    out.records_appended += h.record_count;
  }
  b.commits().NoteAppended(out.records_appended);
  return out;
}

int64_t AppendCoordinatorBatch(BrokerState& b, Partition& partition,
                               std::string_view batch) {
  // The coordinators build their batches with BuildRecordBatch: they parse.
  protocol::RecordBatchHeader h = *protocol::ParseBatchHeader(batch);
  SharedBuffer buffer = CopyToSharedBuffer(batch);
  const StoredBatch& stored = partition.log().Append(
      buffer, buffer.get(), batch.size(), h, partition.leader_epoch());
  ApplyBatchEffects(stored, partition.producers(), partition.transactions());
  b.PersistAppend(partition, stored);
  b.commits().NoteAppended(h.record_count);
  return stored.base_offset();
}

int64_t AppendMarker(BrokerState& b, Partition& partition, int64_t producer_id,
                     int16_t producer_epoch, protocol::ControlType type,
                     int32_t coordinator_epoch) {
  std::string marker = protocol::BuildControlBatch(
      producer_id, producer_epoch, type, coordinator_epoch, b.NowMs());
  // A batch we built ourselves always parses.
  protocol::RecordBatchHeader h = *protocol::ParseBatchHeader(marker);
  SharedBuffer buffer = CopyToSharedBuffer(marker);
  const StoredBatch& stored = partition.log().Append(
      buffer, buffer.get(), marker.size(), h, partition.leader_epoch());
  partition.transactions().OnMarker(producer_id,
                                    type == protocol::ControlType::kCommit,
                                    stored.base_offset());
  partition.producers().OnMarker(producer_id, producer_epoch, coordinator_epoch,
                                 stored.base_offset());
  b.PersistAppend(partition, stored);
  b.commits().NoteAppended(1);
  return stored.base_offset();
}

MarkerOutcome WriteTxnMarker(BrokerState& b, Partition& partition,
                             int64_t producer_id, int16_t producer_epoch,
                             protocol::ControlType type,
                             int32_t coordinator_epoch) {
  MarkerOutcome out;
  if (const ProducerEntry* e = partition.producers().Find(producer_id)) {
    if (producer_epoch < e->epoch) {
      out.error = Error(
          ErrorCode::kInvalidProducerEpoch,
          absl::StrCat("marker epoch ", producer_epoch, " of producer ",
                       producer_id, " is older than its epoch ", e->epoch));
      return out;
    }
    if (coordinator_epoch < e->coordinator_epoch) {
      out.error = Error(
          ErrorCode::kTransactionCoordinatorFenced,
          absl::StrCat("coordinator epoch ", coordinator_epoch,
                       " is older than the last marker's ",
                       e->coordinator_epoch, " for producer ", producer_id));
      return out;
    }
  }
  out.offset = AppendMarker(b, partition, producer_id, producer_epoch, type,
                            coordinator_epoch);
  PublishAppendsAfterCommit(b, {{partition.topic(), partition.index()}});
  return out;
}

void PublishAppends(BrokerState& b, Partition& partition) {
  partition.log().MarkDurable(partition.log().log_end_offset());
  UpdateHighWatermark(partition);
  EnforceRetention(b, partition);
  partition.WakeWaiters();
}

void PublishAppendsAfterCommit(
    BrokerState& b, std::vector<std::pair<std::string, int32_t>> partitions) {
  b.commits().AfterCommit(
      [&b, partitions = std::move(partitions)](const absl::Status& s) {
        if (!s.ok()) return;
        for (const auto& [topic, index] : partitions) {
          if (Partition* p = b.FindPartition(topic, index))
            PublishAppends(b, *p);
        }
      });
}

}  // namespace exactly::broker
