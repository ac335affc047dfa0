// Writes the seed corpora of the fuzz targets, valid inputs made with the
// code's own encoders:
//
//   fuzz_corpus_gen OUT_DIR [WIRE_SAMPLES_DIR]
//
// OUT_DIR/<target>/ gets one file per seed. With WIRE_SAMPLES_DIR (the
// captured client frames of ../shared/wire-samples), their frames go into the
// request corpus too (size prefix removed), and the record sets of their
// Produce requests into the record batch corpus. scripts/fuzz.sh --seeds runs
// it, then minimizes each corpus with libFuzzer's -merge=1.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "crc32c/crc32c.h"
#include "protocol/compression.h"
#include "protocol/messages/all.h"
#include "protocol/record_batch.h"
#include "protocol/request_header.h"
#include "spool/block.h"
#include "spool/format.h"

namespace fs = std::filesystem;
namespace p = exactly::protocol;
namespace s = exactly::internal::spool;

namespace {

fs::path out_root;

void Write(const std::string& target, const std::string& name,
           const std::string& bytes) {
  fs::create_directories(out_root / target);
  std::ofstream(out_root / target / name, std::ios::binary) << bytes;
}

std::string Frame(int16_t key, int16_t version, const std::string& body) {
  p::RequestHeader h;
  h.api_key = key;
  h.api_version = version;
  h.correlation_id = 7;
  h.client_id = "fuzz-seed";
  std::string frame;
  p::EncodeRequestHeader(h, &frame);
  return frame + body;
}

std::vector<std::string> Batches() {
  std::vector<std::string> out;
  std::vector<p::RecordSpec> records = {
      {.key = "k1", .value = "value one", .headers = {{"h", "v"}, {"n", {}}}},
      {.key = {}, .value = "value two", .timestamp_delta = 5},
      {.key = "k3", .value = {}}};
  for (int codec = 0; codec <= 4; ++codec) {
    p::RecordBatchSpec spec{.attributes = static_cast<int16_t>(codec),
                            .base_timestamp = 1700000000000};
    out.push_back(*p::BuildRecordBatch(spec, records));
  }
  p::RecordBatchSpec idempotent{.base_timestamp = 1700000000000,
                                .producer_id = 42,
                                .producer_epoch = 1,
                                .base_sequence = 3};
  out.push_back(*p::BuildRecordBatch(idempotent, records));
  idempotent.attributes =
      p::kAttrTransactional | static_cast<int16_t>(p::Compression::kLz4);
  out.push_back(*p::BuildRecordBatch(idempotent, records));
  out.push_back(
      p::BuildControlBatch(42, 1, p::ControlType::kCommit, 3, 1700000000000));
  return out;
}

void RequestSeeds(const std::vector<std::string>& batches) {
  p::ForEachMessagePair([&]<class Request, class Response>() {
    for (int16_t v = 0; v <= 12; ++v) {
      const int16_t key = static_cast<int16_t>(Request::kApiKey);
      Write("request_fuzz",
            "default-" + std::to_string(key) + "-v" + std::to_string(v),
            Frame(key, v, p::EncodeMessage(Request{}, v)));
    }
  });
  for (int16_t v : {3, 7, 9}) {
    p::ProduceRequest produce;
    produce.transactional_id = "txn";
    produce.timeout_ms = 30000;
    for (size_t i = 0; i < batches.size(); ++i) {
      p::ProduceRequest::Partition partition{.index = static_cast<int32_t>(i)};
      partition.records.slices.push_back(batches[i]);
      produce.topics.push_back({.name = "topic", .partitions = {partition}});
    }
    Write("request_fuzz", "produce-v" + std::to_string(v),
          Frame(0, v, p::EncodeMessage(produce, v)));
  }
}

void RecordBatchSeeds(const std::vector<std::string>& batches) {
  std::string all;
  for (size_t i = 0; i < batches.size(); ++i) {
    Write("record_batch_fuzz", "batch-" + std::to_string(i),
          std::string(1, '\x09') + batches[i]);
    all += batches[i];
  }
  Write("record_batch_fuzz", "all-v2", std::string(1, '\x02') + all);
}

std::string Be64(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i, v >>= 8) out[i] = static_cast<char>(v);
  return out;
}

void SpoolSeeds(std::vector<std::pair<uint64_t, std::string>>& blocks) {
  const exactly::Header headers[] = {{"trace", "abc"}, {"none", {}}};
  exactly::Record records[] = {
      {.topic = "orders", .key = "k", .value = "v", .partition = 3},
      {.topic = "orders", .key = {}, .value = "no key", .timestamp_ms = 17},
      {.topic = "t", .key = "k", .value = {}, .headers = headers}};
  for (size_t i = 0; i < std::size(records); ++i) {
    s::EncodedRecord r = s::EncodeRecord(records[i], 1700000000000, "cur");
    s::Seal(r, 100 + i);
    Write("spool_record_fuzz", "record-" + std::to_string(i),
          Be64(100 + i) + r.stored);
  }
  s::BlockBuilder builder;
  for (const exactly::Record& r : records) builder.Add(r, 1700000000000, "");
  std::string block(builder.Seal(200));
  const uint64_t last = 200 + std::size(records) - 1;
  Write("spool_record_fuzz", "block", Be64(last) + block);
  blocks.push_back({last, block});
  s::QuarantineEntry q{.reason = "crc", .seq = 5, .bytes = "xyz"};
  Write("spool_record_fuzz", "quarantine", Be64(5) + s::EncodeQuarantine(q));
}

// A WAL physical record: masked CRC-32C, length, type, payload.
std::string WalRecord(uint8_t type, const std::string& payload, bool bad_crc) {
  uint32_t crc = exactly::crc32c::Extend(0, &type, 1);
  crc = exactly::crc32c::Extend(crc, payload);
  uint32_t masked = ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
  if (bad_crc) masked ^= 1;
  std::string out;
  for (int i = 0; i < 4; ++i) out += static_cast<char>(masked >> (8 * i));
  out += static_cast<char>(payload.size() & 0xff);
  out += static_cast<char>(payload.size() >> 8);
  out += static_cast<char>(type);
  return out + payload;
}

std::string Varint(uint32_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>(v | 0x80);
    v >>= 7;
  }
  return out + static_cast<char>(v);
}

// A RocksDB write batch of puts: sequence, count (LE), then entries.
std::string WriteBatch(
    uint64_t sequence,
    const std::vector<std::pair<std::string, std::string>>& puts) {
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>(sequence >> (8 * i));
  for (int i = 0; i < 4; ++i) out += static_cast<char>(puts.size() >> (8 * i));
  for (const auto& [key, value] : puts) {
    out += '\x01';
    out += Varint(key.size()) + key + Varint(value.size()) + value;
  }
  out += '\x07' + Varint(3) + "del";  // a single deletion
  return out;
}

void WalSeeds(const std::vector<std::pair<uint64_t, std::string>>& blocks) {
  const std::string batch = WriteBatch(
      1, {{s::SeqKey(s::kBlockPrefix, blocks[0].first), blocks[0].second},
          {"m:next_seq", Be64(blocks[0].first + 1)}});
  // An intact entry, then a damaged one (salvaged), then one after it in
  // the same block (dropped by RocksDB, salvaged too).
  Write("wal_salvage_fuzz", "full",
        WalRecord(1, batch, false) + WalRecord(1, batch, true) +
            WalRecord(1, batch, false));
  // A damaged entry in fragments: FIRST, MIDDLE, LAST.
  const size_t third = batch.size() / 3;
  Write("wal_salvage_fuzz", "fragments",
        WalRecord(2, batch.substr(0, third), false) +
            WalRecord(3, batch.substr(third, third), true) +
            WalRecord(4, batch.substr(2 * third), false));
}

// broker_fuzz steps (broker_fuzz.cc): [op][length, 2 bytes][payload].
std::string Step(uint8_t op, const std::string& payload) {
  const size_t n = payload.size();
  std::string out = {static_cast<char>(op), static_cast<char>(n >> 8),
                     static_cast<char>(n & 0xff)};
  return out + payload;
}
template <class M>
std::string Send(int16_t version, const M& body) {
  return Step(0, Frame(static_cast<int16_t>(M::kApiKey), version,
                       p::EncodeMessage(body, version)));
}
std::string Wait(int ms) { return {5, 0, static_cast<char>(ms)}; }

p::JoinGroupRequest StaticJoin(const std::string& instance) {
  p::JoinGroupRequest join;
  join.group_id = "g";
  join.session_timeout_ms = 10;
  join.rebalance_timeout_ms = 10;
  join.group_instance_id = instance;
  join.protocol_type = "consumer";
  join.protocols = {{.name = "range", .metadata = "m"}};
  return join;
}

p::ProduceRequest ProduceTo(const std::string& topic, int32_t partition,
                            const std::string& batch,
                            std::optional<std::string> transactional_id = {}) {
  p::ProduceRequest produce;
  produce.transactional_id = std::move(transactional_id);
  produce.timeout_ms = 30000;
  p::ProduceRequest::Partition part{.index = partition};
  part.records.slices.push_back(batch);
  produce.topics.push_back({.name = topic, .partitions = {part}});
  return produce;
}

std::string ProducerBatch(int64_t producer_id, int32_t sequence,
                          bool transactional) {
  p::RecordBatchSpec spec{.base_timestamp = 1700000000000,
                          .producer_id = producer_id,
                          .producer_epoch = 0,
                          .base_sequence = sequence};
  if (transactional) spec.attributes = p::kAttrTransactional;
  return *p::BuildRecordBatch(
      spec, {{.key = "k", .value = "v"}, {.key = {}, .value = "w"}});
}

// Sequences a client would send: static members leaving by instance id (and
// the rebalance timer after), a transaction that commits and one that times
// out, an idempotent producer's duplicate and gap.
void BrokerSeeds() {
  std::string statics =
      Send(5, StaticJoin("i1")) + Send(5, StaticJoin("i2")) + Wait(5);
  p::LeaveGroupRequest leave;
  leave.group_id = "g";
  leave.members = {{.member_id = "", .group_instance_id = "i1"}};
  statics += Send(3, leave) + Wait(11) + Send(5, StaticJoin("i1")) + Wait(11);
  Write("broker_fuzz", "static-members-leave", statics);

  p::InitProducerIdRequest init;
  init.transactional_id = "t";
  init.transaction_timeout_ms = 8;
  p::CreateTopicsRequest create;
  create.topics = {
      {.name = "tp", .num_partitions = 2, .replication_factor = 1}};
  p::AddPartitionsToTxnRequest add;
  add.transactional_id = "t";
  add.producer_id = 1;
  add.producer_epoch = 0;
  add.topics = {{.name = "tp", .partitions = {0, 1}}};
  p::AddOffsetsToTxnRequest add_offsets;
  add_offsets.transactional_id = "t";
  add_offsets.producer_id = 1;
  add_offsets.producer_epoch = 0;
  add_offsets.group_id = "g";
  p::TxnOffsetCommitRequest offsets;
  offsets.transactional_id = "t";
  offsets.group_id = "g";
  offsets.producer_id = 1;
  offsets.producer_epoch = 0;
  offsets.topics = {{.name = "tp", .partitions = {{.committed_offset = 2}}}};
  p::EndTxnRequest end;
  end.transactional_id = "t";
  end.producer_id = 1;
  end.producer_epoch = 0;
  end.committed = true;
  p::FetchRequest fetch;
  fetch.isolation_level = 1;
  fetch.topics = {{.name = "tp", .partitions = {{.max_bytes = 1 << 20}}}};
  p::FindCoordinatorRequest find;
  find.key = "t";
  find.key_type = 1;
  const std::string produce =
      Send(7, ProduceTo("tp", 0, ProducerBatch(1, 0, true), "t"));
  const std::string begin =
      Send(1, find) + Send(1, init) + Send(2, create) + Send(1, add) + produce;
  Write("broker_fuzz", "transaction-commit",
        begin + Send(1, add_offsets) + Send(2, offsets) + Send(1, end) +
            Send(11, fetch));
  Write("broker_fuzz", "transaction-times-out",
        begin + Wait(11) + Wait(11) + Send(1, end) + Send(11, fetch));

  p::InitProducerIdRequest idempotent;
  Write("broker_fuzz", "idempotent-duplicate-and-gap",
        Send(1, idempotent) +
            Send(7, ProduceTo("ip", 0, ProducerBatch(1, 0, false))) +
            Send(7, ProduceTo("ip", 0, ProducerBatch(1, 0, false))) +
            Send(7, ProduceTo("ip", 0, ProducerBatch(1, 7, false))) +
            Step(6, "") + Send(11, fetch));
}

// Lines a script sends to the admin port, one command each.
void AdminSeeds() {
  const char* lines[] = {
      "help",
      "create-topic name=a partitions=3",
      "offsets topic=a partition=1",
      ("fail-requests api=Produce error=NOT_LEADER_OR_FOLLOWER count=3 "
       "topic=a partition=0"),
      "drop-produce-responses count=2 one-in=3 topic=a",
      "drop-produce-responses-keep-open count=2 one-in=3 topic=a",
      "latency ms=1 api=Fetch",
      "hold-txn-markers count=1",
      "hold-markers",
      "release-markers",
      "down ms=1",
      "close-connections",
      "history",
      "clear",
      "restart mode=crash",
      "abort-transaction topic=a partition=0 producer-id=1",
  };
  int i = 0;
  for (const char* line : lines) {
    Write("admin_command_fuzz", "line-" + std::to_string(i++), line);
  }
  Write("admin_command_fuzz", "script",
        "create-topic name=b\nfail-requests api=3 error=UNKNOWN_SERVER_ERROR "
        "count=-1\nhistory\nclear\noffsets topic=b");
  Write("admin_command_fuzz", "held-markers",
        "hold-markers\nrelease-markers\nhistory");
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WireSampleSeeds(const fs::path& dir) {
  int n = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".bin") continue;
    std::string frame = ReadFile(e.path());
    if (frame.size() < p::kFrameSizePrefix) continue;
    frame.erase(0, p::kFrameSizePrefix);
    Write("request_fuzz", "wire-" + e.path().stem().string(), frame);
    ++n;
    absl::StatusOr<p::ParsedRequest> parsed = p::ParseRequest(frame);
    if (!parsed.ok() || parsed->header.api_key != 0) continue;
    const int16_t v = parsed->header.api_version;
    absl::StatusOr<p::ProduceRequest> produce =
        p::DecodeMessage<p::ProduceRequest>(parsed->body, v, true);
    if (!produce.ok()) continue;
    int i = 0;
    for (const auto& t : produce->topics) {
      for (const auto& part : t.partitions) {
        Write("record_batch_fuzz",
              "wire-" + e.path().stem().string() + "-" + std::to_string(i++),
              std::string(1, static_cast<char>(v)) +
                  std::string(part.records.Contiguous()));
      }
    }
  }
  std::printf("fuzz_corpus_gen: %d frames from %s\n", n, dir.c_str());

  // Each client flow of index.tsv (columns: file, client, api_key, api_name,
  // api_version, flexible, bytes, flow, notes) as one broker_fuzz sequence.
  // The index is not in capture order: the frames go in the order a client
  // sends those APIs (versions and metadata, then producing, then the group).
  const std::vector<int> client_order = {18, 3,  10, 22, 24, 0, 25, 28, 26,
                                         11, 14, 12, 8,  9,  2, 1,  13};
  auto rank = [&](int key) {
    for (size_t i = 0; i < client_order.size(); ++i) {
      if (client_order[i] == key) return static_cast<int>(i);
    }
    return 100 + key;
  };
  std::ifstream index(dir / "index.tsv");
  std::map<std::string, std::multimap<int, std::string>> flows;
  std::string row;
  std::getline(index, row);  // the column names
  while (std::getline(index, row)) {
    std::vector<std::string> cols;
    for (size_t at = 0;;) {
      size_t tab = row.find('\t', at);
      cols.push_back(row.substr(at, tab - at));
      if (tab == std::string::npos) break;
      at = tab + 1;
    }
    if (cols.size() < 8) continue;
    std::string frame = ReadFile(dir / cols[0]);
    if (frame.size() < p::kFrameSizePrefix) continue;
    flows[cols[7]].emplace(rank(std::atoi(cols[2].c_str())),
                           Step(0, frame.substr(p::kFrameSizePrefix)));
  }
  for (const auto& [flow, frames] : flows) {
    std::string steps;
    for (const auto& [r, step] : frames) steps += step;
    Write("broker_fuzz", "wire-flow-" + flow, steps);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR [WIRE_SAMPLES_DIR]\n", argv[0]);
    return 2;
  }
  out_root = argv[1];
  const std::vector<std::string> batches = Batches();
  RequestSeeds(batches);
  RecordBatchSeeds(batches);
  std::vector<std::pair<uint64_t, std::string>> blocks;
  SpoolSeeds(blocks);
  WalSeeds(blocks);
  BrokerSeeds();
  AdminSeeds();
  if (argc > 2 && fs::exists(fs::path(argv[2]) / "index.tsv")) {
    WireSampleSeeds(argv[2]);
  }
  return 0;
}
