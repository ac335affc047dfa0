// The key layout of the broker's store. One byte of kind, then fixed-width
// big-endian fields, so that a prefix scan returns a partition's batches in
// offset order.
//
// - 'M' name: broker metadata (next producer id, ...)
// - 'T' topic name: a topic (id, partition count, configs)
// - 'B' topic id(4) partition(4) offset(8): one record batch, as stored
// - 'P' topic id(4) partition(4) pid(8): a producer's state on a partition
// - 'S' topic id(4) partition(4): a partition's log start offset
// - 'X' transactional id: a transaction's coordinator state
// - 'G' group id 0x00 topic 0x00 partition(4): a committed offset
// - 'Q' group id 0x00 pid(8) topic 0x00 partition(4): a transactional offset
//   (TxnOffsetCommit) pending until its transaction ends
// - 'g' group id: a group's membership record (protocol, generation, members
//   and their assignments)
#ifndef EXACTLY_BROKER_STORAGE_KEYS_H_
#define EXACTLY_BROKER_STORAGE_KEYS_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace exactly::broker::keys {

inline void AppendBigEndian(std::string* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i)
    out->push_back(static_cast<char>(v >> (8 * i)));
}

inline uint64_t ReadBigEndian(std::string_view in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v = (v << 8) | static_cast<uint8_t>(in[at + i]);
  return v;
}

// `kind` followed by `name`. (Not `"M" + std::string(name)`: GCC 12 at -O3
// reports a false -Wrestrict on that.)
inline std::string Prefixed(char kind, std::string_view name) {
  std::string k;
  k.reserve(1 + name.size());
  k.push_back(kind);
  k.append(name);
  return k;
}

inline std::string Meta(std::string_view name) { return Prefixed('M', name); }
inline std::string TopicPrefix() { return "T"; }
inline std::string Topic(std::string_view name) { return Prefixed('T', name); }

inline std::string PartitionPrefix(char kind, uint32_t topic_id,
                                   int32_t partition) {
  std::string k(1, kind);
  AppendBigEndian(&k, topic_id, 4);
  AppendBigEndian(&k, static_cast<uint32_t>(partition), 4);
  return k;
}
inline std::string TopicDataPrefix(char kind, uint32_t topic_id) {
  std::string k(1, kind);
  AppendBigEndian(&k, topic_id, 4);
  return k;
}

inline std::string Batch(uint32_t topic_id, int32_t partition,
                         int64_t base_offset) {
  std::string k = PartitionPrefix('B', topic_id, partition);
  AppendBigEndian(&k, static_cast<uint64_t>(base_offset), 8);
  return k;
}
inline std::string Producer(uint32_t topic_id, int32_t partition,
                            int64_t producer_id) {
  std::string k = PartitionPrefix('P', topic_id, partition);
  AppendBigEndian(&k, static_cast<uint64_t>(producer_id), 8);
  return k;
}
inline std::string LogStart(uint32_t topic_id, int32_t partition) {
  return PartitionPrefix('S', topic_id, partition);
}
inline std::string Transaction(std::string_view transactional_id) {
  return Prefixed('X', transactional_id);
}
inline std::string TransactionPrefix() { return "X"; }

inline std::string GroupOffsetPrefix(std::string_view group) {
  std::string k = Prefixed('G', group);
  k.push_back('\0');
  return k;
}
inline std::string GroupOffset(std::string_view group, std::string_view topic,
                               int32_t partition) {
  std::string k = GroupOffsetPrefix(group) + std::string(topic);
  k.push_back('\0');
  AppendBigEndian(&k, static_cast<uint32_t>(partition), 4);
  return k;
}
inline std::string GroupOffsetScanPrefix() { return "G"; }
inline std::string TxnOffsetPrefix(std::string_view group) {
  std::string k = Prefixed('Q', group);
  k.push_back('\0');
  return k;
}
inline std::string TxnOffsetProducerPrefix(std::string_view group,
                                           int64_t producer_id) {
  std::string k = TxnOffsetPrefix(group);
  AppendBigEndian(&k, static_cast<uint64_t>(producer_id), 8);
  return k;
}
inline std::string TxnOffset(std::string_view group, int64_t producer_id,
                             std::string_view topic, int32_t partition) {
  std::string k =
      TxnOffsetProducerPrefix(group, producer_id) + std::string(topic);
  k.push_back('\0');
  AppendBigEndian(&k, static_cast<uint32_t>(partition), 4);
  return k;
}
inline std::string TxnOffsetScanPrefix() { return "Q"; }
inline std::string Group(std::string_view group) {
  return Prefixed('g', group);
}
inline std::string GroupScanPrefix() { return "g"; }

}  // namespace exactly::broker::keys

#endif  // EXACTLY_BROKER_STORAGE_KEYS_H_
