// The group coordinator's records of __consumer_offsets: Kafka's
// OffsetCommitKey / GroupMetadataKey / OffsetCommitValue / GroupMetadataValue
// byte for byte (every version read, the ones Kafka 3.x writes written), and
// the replay that rebuilds a partition's groups from its log (the later record
// wins, a null value deletes, a transaction's offsets wait for its marker, a
// damaged record is skipped).
#include "group/offsets_log.h"

#include <string>

#include "gtest/gtest.h"
#include "protocol/record_batch.h"

namespace exactly::broker {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

TEST(OffsetsLogTest, OffsetKeyIsVersionOneGroupTopicPartition) {
  const std::string key = Bytes({0, 1,            // version 1
                                 0, 1, 'g',       // group
                                 0, 2, 't', 'p',  // topic
                                 0, 0, 1, 2});    // partition 258
  EXPECT_EQ(EncodeOffsetCommitKey("g", "tp", 258), key);
  absl::StatusOr<OffsetsLogKey> back = DecodeOffsetsLogKey(key);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->kind, OffsetsLogKey::Kind::kOffset);
  EXPECT_EQ(back->group, "g");
  EXPECT_EQ(back->tp, TopicPartition("tp", 258));
  // Version 0 has the same layout.
  std::string v0 = key;
  v0[1] = 0;
  back = DecodeOffsetsLogKey(v0);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->kind, OffsetsLogKey::Kind::kOffset);
  EXPECT_EQ(back->tp, TopicPartition("tp", 258));
}

TEST(OffsetsLogTest, GroupKeyIsVersionTwoAndTheGroup) {
  const std::string key = Bytes({0, 2, 0, 3, 'g', 'r', 'p'});
  EXPECT_EQ(EncodeGroupMetadataKey("grp"), key);
  absl::StatusOr<OffsetsLogKey> back = DecodeOffsetsLogKey(key);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->kind, OffsetsLogKey::Kind::kGroup);
  EXPECT_EQ(back->group, "grp");
}

TEST(OffsetsLogTest, OtherKeysAreRefused) {
  EXPECT_FALSE(DecodeOffsetsLogKey("").ok());
  EXPECT_FALSE(DecodeOffsetsLogKey(Bytes({0})).ok());
  // Kafka 4's ConsumerGroupMetadataKey (3), and a negative version.
  EXPECT_FALSE(DecodeOffsetsLogKey(Bytes({0, 3, 0, 1, 'g'})).ok());
  EXPECT_FALSE(DecodeOffsetsLogKey(Bytes({255, 255, 0, 1, 'g'})).ok());
  // Truncated, a negative (null) group, a length past the end, trailing.
  EXPECT_FALSE(
      DecodeOffsetsLogKey(Bytes({0, 1, 0, 1, 'g', 0, 1, 't', 0})).ok());
  EXPECT_FALSE(DecodeOffsetsLogKey(Bytes({0, 2, 255, 255})).ok());
  EXPECT_FALSE(DecodeOffsetsLogKey(Bytes({0, 2, 0x7f, 0xff, 'g'})).ok());
  EXPECT_FALSE(DecodeOffsetsLogKey(Bytes({0, 2, 0, 1, 'g', 0})).ok());
}

TEST(OffsetsLogTest, OffsetValueIsVersionThree) {
  OffsetAndMetadata o;
  o.offset = 0x0102030405;
  o.leader_epoch = 7;
  o.metadata = "md";
  o.commit_timestamp_ms = 1700000000000;  // 0x18BCFE56800
  o.record_seq = 99;                      // not written
  const std::string value = Bytes({
      0, 3,                                      // version 3
      0, 0, 0,    1,    2,    3,    4,    5,     // offset
      0, 0, 0,    7,                             // leader epoch
      0, 2, 'm',  'd',                           // metadata
      0, 0, 0x01, 0x8B, 0xCF, 0xE5, 0x68, 0x00,  // commit timestamp
  });
  EXPECT_EQ(EncodeOffsetCommitValue(o), value);
  absl::StatusOr<OffsetAndMetadata> back = DecodeOffsetCommitValue(value);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->offset, o.offset);
  EXPECT_EQ(back->leader_epoch, 7);
  EXPECT_EQ(back->metadata, "md");
  EXPECT_EQ(back->commit_timestamp_ms, o.commit_timestamp_ms);
  EXPECT_EQ(back->record_seq, 0u);
}

TEST(OffsetsLogTest, OlderAndFlexibleOffsetValuesAreRead) {
  // Version 0: offset, metadata, commit timestamp.
  absl::StatusOr<OffsetAndMetadata> o = DecodeOffsetCommitValue(Bytes(
      {0, 0, 0, 0, 0, 0, 0, 0, 0, 42, 0, 1, 'x', 0, 0, 0, 0, 0, 0, 0, 9}));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->offset, 42);
  EXPECT_EQ(o->leader_epoch, -1);
  EXPECT_EQ(o->metadata, "x");
  EXPECT_EQ(o->commit_timestamp_ms, 9);

  // Version 1: + expire timestamp (read and dropped).
  o = DecodeOffsetCommitValue(Bytes({0, 1, 0, 0, 0, 0, 0, 0,  0, 43,  //
                                     0, 0,                            // ""
                                     0, 0, 0, 0, 0, 0, 0, 10,         // commit
                                     0, 0, 0, 0, 0, 0, 0, 11}));      // expire
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->offset, 43);
  EXPECT_EQ(o->leader_epoch, -1);
  EXPECT_EQ(o->metadata, "");
  EXPECT_EQ(o->commit_timestamp_ms, 10);

  // Version 2: as version 0 (no expire timestamp).
  o = DecodeOffsetCommitValue(Bytes({0, 2, 0,   0, 0, 0, 0, 0, 0, 44,  //
                                     0, 1, 'y',                        //
                                     0, 0, 0,   0, 0, 0, 0, 12}));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->offset, 44);
  EXPECT_EQ(o->metadata, "y");
  EXPECT_EQ(o->commit_timestamp_ms, 12);
  // ... so a version 2 value with an expire timestamp has 8 bytes too many.
  EXPECT_FALSE(DecodeOffsetCommitValue(
                   Bytes({0, 2, 0, 0, 0, 0,  0, 0, 0, 44, 0, 0, 0, 0,
                          0, 0, 0, 0, 0, 12, 0, 0, 0, 0,  0, 0, 0, 13}))
                   .ok());

  // Version 4: version 3, flexible (compact string, tagged fields).
  o = DecodeOffsetCommitValue(
      Bytes({0, 4,                              // version 4
             0, 0,   0,   0,    0,   0, 0, 45,  // offset
             0, 0,   0,   3,                    // epoch
             3, 'z', 'z',                       // compact
             0, 0,   0,   0,    0,   0, 0, 13,  // commit
             1, 5,   2,   0xaa, 0xbb}));        // tag 5
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->offset, 45);
  EXPECT_EQ(o->leader_epoch, 3);
  EXPECT_EQ(o->metadata, "zz");
  EXPECT_EQ(o->commit_timestamp_ms, 13);
}

TEST(OffsetsLogTest, BadOffsetValuesAreRefusedNotTrusted) {
  EXPECT_FALSE(DecodeOffsetCommitValue("").ok());
  EXPECT_FALSE(DecodeOffsetCommitValue(Bytes({0})).ok());
  EXPECT_FALSE(DecodeOffsetCommitValue(Bytes({0, 3})).ok());
  EXPECT_FALSE(DecodeOffsetCommitValue(Bytes({0, 5, 0, 0, 0, 0, 0, 0, 0, 1,
                                              0, 0, 0, 0, 0, 0, 0, 0, 0, 1}))
                   .ok());
  EXPECT_FALSE(
      DecodeOffsetCommitValue(Bytes({255, 255, 0, 0, 0, 0, 0, 0, 0, 1,
                                     0,   0,   0, 0, 0, 0, 0, 0, 0, 1}))
          .ok());
  OffsetAndMetadata o;
  o.offset = 1;
  o.metadata = "metadata";
  const std::string good = EncodeOffsetCommitValue(o);
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_FALSE(DecodeOffsetCommitValue(good.substr(0, n)).ok()) << n;
  EXPECT_FALSE(DecodeOffsetCommitValue(good + "x").ok());
  // A null metadata (length -1) and a negative length other than -1.
  std::string null_metadata = good;
  null_metadata[14] = null_metadata[15] = static_cast<char>(0xff);
  EXPECT_FALSE(DecodeOffsetCommitValue(null_metadata).ok());
  std::string negative = good;
  negative[14] = static_cast<char>(0x80);
  EXPECT_FALSE(DecodeOffsetCommitValue(negative).ok());
  // A flexible string whose length runs past the end, or whose varint never
  // ends.
  EXPECT_FALSE(DecodeOffsetCommitValue(
                   Bytes({0, 4, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 100, 'a'}))
                   .ok());
  EXPECT_FALSE(DecodeOffsetCommitValue(
                   Bytes({0, 4, 0, 0, 0,    0,    0,    0,    0,    1,
                          0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}))
                   .ok());
}

GroupRecord TwoMembers() {
  GroupRecord g;
  g.group_id = "orders";
  g.protocol_type = "consumer";
  g.generation = 12;
  g.protocol_name = "range";
  g.leader = "m1";
  g.members.push_back({.id = "m1",
                       .instance_id = std::nullopt,
                       .client_id = "c1",
                       .client_host = "/10.0.0.1",
                       .rebalance_timeout_ms = 300000,
                       .session_timeout_ms = 45000,
                       .metadata = std::string("\x00\x01sub", 5),
                       .assignment = std::string("\x00\x00\x00", 3)});
  g.members.push_back({.id = "m2",
                       .instance_id = "instance-2",
                       .client_id = "c2",
                       .client_host = "/10.0.0.2",
                       .rebalance_timeout_ms = 60000,
                       .session_timeout_ms = 10000,
                       .metadata = "",
                       .assignment = ""});
  return g;
}

void ExpectSameGroup(const GroupRecord& a, const GroupRecord& b) {
  EXPECT_EQ(a.group_id, b.group_id);
  EXPECT_EQ(a.protocol_type, b.protocol_type);
  EXPECT_EQ(a.generation, b.generation);
  EXPECT_EQ(a.protocol_name, b.protocol_name);
  EXPECT_EQ(a.leader, b.leader);
  ASSERT_EQ(a.members.size(), b.members.size());
  for (size_t i = 0; i < a.members.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(a.members[i].id, b.members[i].id);
    EXPECT_EQ(a.members[i].instance_id, b.members[i].instance_id);
    EXPECT_EQ(a.members[i].client_id, b.members[i].client_id);
    EXPECT_EQ(a.members[i].client_host, b.members[i].client_host);
    EXPECT_EQ(a.members[i].rebalance_timeout_ms,
              b.members[i].rebalance_timeout_ms);
    EXPECT_EQ(a.members[i].session_timeout_ms, b.members[i].session_timeout_ms);
    EXPECT_EQ(a.members[i].metadata, b.members[i].metadata);
    EXPECT_EQ(a.members[i].assignment, b.members[i].assignment);
  }
}

TEST(OffsetsLogTest, GroupValueIsVersionThree) {
  GroupRecord g;
  g.group_id = "ignored: the key names the group";
  g.protocol_type = "c";
  g.generation = 1;
  g.protocol_name = "r";
  g.leader = std::nullopt;
  g.members.push_back({.id = "m",
                       .instance_id = std::nullopt,
                       .client_id = "c",
                       .client_host = "h",
                       .rebalance_timeout_ms = 10,
                       .session_timeout_ms = 11,
                       .metadata = "s",
                       .assignment = "a"});
  EXPECT_EQ(EncodeGroupMetadataValue(g, 9),
            Bytes({0,   3,                           // version 3
                   0,   1,   'c',                    // protocol type
                   0,   0,   0,   1,                 // generation
                   0,   1,   'r',                    // protocol
                   255, 255,                         // leader: null
                   0,   0,   0,   0,  0,   0, 0, 9,  // current state timestamp
                   0,   0,   0,   1,                 // 1 member
                   0,   1,   'm',                    //   member id
                   255, 255,                   //   group instance id: null
                   0,   1,   'c',              //   client id
                   0,   1,   'h',              //   client host
                   0,   0,   0,   10,          //   rebalance timeout
                   0,   0,   0,   11,          //   session timeout
                   0,   0,   0,   1,  's',     //   subscription
                   0,   0,   0,   1,  'a'}));  //   assignment
}

TEST(OffsetsLogTest, GroupValuesRoundTripWithMembersAndNullFields) {
  GroupRecord g = TwoMembers();
  absl::StatusOr<GroupRecord> back =
      DecodeGroupMetadataValue("orders", EncodeGroupMetadataValue(g, 5));
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameGroup(*back, g);

  // An empty group: no protocol, no leader, no members.
  GroupRecord empty;
  empty.group_id = "idle";
  empty.protocol_type = "consumer";
  empty.generation = 3;
  back = DecodeGroupMetadataValue("idle", EncodeGroupMetadataValue(empty, 5));
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameGroup(*back, empty);
  EXPECT_FALSE(back->protocol_name.has_value());
  EXPECT_FALSE(back->leader.has_value());
}

TEST(OffsetsLogTest, OlderAndFlexibleGroupValuesAreRead) {
  // Version 0: no rebalance timeout (the session timeout stands in), no state
  // timestamp, no instance id.
  absl::StatusOr<GroupRecord> g = DecodeGroupMetadataValue(
      "g", Bytes({0,   0,             // version 0
                  0,   1,   'c',      // protocol type
                  0,   0,   0,   2,   // generation
                  255, 255,           // protocol: null
                  255, 255,           // leader: null
                  0,   0,   0,   1,   // 1 member
                  0,   1,   'm',      //
                  0,   1,   'c',      //
                  0,   1,   'h',      //
                  0,   0,   0,   11,  // session timeout
                  0,   0,   0,   0,   // subscription
                  0,   0,   0,   1,  'a'}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->group_id, "g");
  EXPECT_EQ(g->generation, 2);
  EXPECT_FALSE(g->protocol_name.has_value());
  ASSERT_EQ(g->members.size(), 1u);
  EXPECT_EQ(g->members[0].rebalance_timeout_ms, 11);
  EXPECT_EQ(g->members[0].session_timeout_ms, 11);
  EXPECT_EQ(g->members[0].assignment, "a");

  // Version 1: + rebalance timeout.
  g = DecodeGroupMetadataValue(
      "g", Bytes({0, 1, 0, 1,  'c', 0, 0,   0, 2, 0,   1, 'r', 0,   1, 'm',  //
                  0, 0, 0, 1,  0,   1, 'm', 0, 1, 'c', 0, 1,   'h',          //
                  0, 0, 0, 20,  // rebal.
                  0, 0, 0, 11, 0,   0, 0,   0, 0, 0,   0, 0}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->protocol_name, "r");
  EXPECT_EQ(g->leader, "m");
  EXPECT_EQ(g->members[0].rebalance_timeout_ms, 20);

  // Version 2: + current state timestamp, before the members.
  g = DecodeGroupMetadataValue(
      "g", Bytes({0, 2, 0, 1, 'c', 0, 0, 0, 2, 255, 255, 255, 255,  //
                  0, 0, 0, 0, 0,   0, 0, 7,                         // ts
                  0, 0, 0, 0}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->members.empty());

  // Version 4: version 3, flexible.
  g = DecodeGroupMetadataValue("g", Bytes({0, 4,            // version 4
                                           2, 'c',          // protocol type
                                           0, 0,   0,   2,  // generation
                                           0,               // protocol: null
                                           2, 'm',          // leader
                                           0, 0,   0,   0,  0, 0, 0, 7,  // ts
                                           2,                // 1 member
                                           2, 'm',           //
                                           3, 'i', '1',      // instance id
                                           2, 'c',           //
                                           2, 'h',           //
                                           0, 0,   0,   20,  // rebalance
                                           0, 0,   0,   11,  // session
                                           1,                // subscription ""
                                           2, 'a',           // assignment
                                           0,                // member's tags
                                           0}));             // tags
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_FALSE(g->protocol_name.has_value());
  EXPECT_EQ(g->leader, "m");
  ASSERT_EQ(g->members.size(), 1u);
  EXPECT_EQ(g->members[0].instance_id, "i1");
  EXPECT_EQ(g->members[0].rebalance_timeout_ms, 20);
  EXPECT_EQ(g->members[0].metadata, "");
  EXPECT_EQ(g->members[0].assignment, "a");
}

TEST(OffsetsLogTest, BadGroupValuesAreRefusedNotTrusted) {
  EXPECT_FALSE(DecodeGroupMetadataValue("g", "").ok());
  EXPECT_FALSE(DecodeGroupMetadataValue("g", Bytes({0, 5, 0, 0})).ok());
  EXPECT_FALSE(DecodeGroupMetadataValue("g", Bytes({128, 0, 0, 0})).ok());
  const std::string good = EncodeGroupMetadataValue(TwoMembers(), 1);
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_FALSE(DecodeGroupMetadataValue("g", good.substr(0, n)).ok()) << n;
  EXPECT_FALSE(DecodeGroupMetadataValue("g", good + "x").ok());
  // A member count far beyond the bytes left, and a negative one.
  EXPECT_FALSE(
      DecodeGroupMetadataValue("g", Bytes({0, 0, 0, 0, 0, 0, 0, 0, 255, 255,
                                           255, 255, 0x7f, 0xff, 0xff, 0xff}))
          .ok());
  EXPECT_FALSE(
      DecodeGroupMetadataValue("g", Bytes({0, 0, 0, 0, 0, 0, 0, 0, 255, 255,
                                           255, 255, 0x80, 0, 0, 0}))
          .ok());
  // A null protocol type, and negative subscription bytes.
  EXPECT_FALSE(
      DecodeGroupMetadataValue("g", Bytes({0, 0, 255, 255, 0, 0, 0, 0, 255, 255,
                                           255, 255, 0, 0, 0, 0}))
          .ok());
  EXPECT_FALSE(
      DecodeGroupMetadataValue(
          "g",
          Bytes({0,   0,   0,   0,   0, 0, 0, 0, 255, 255, 255, 255,        //
                 0,   0,   0,   1,   0, 0, 0, 0, 0,   0,   0,   0,   0, 0,  //
                 255, 255, 255, 254, 0, 0, 0, 0}))
          .ok());
}

TEST(OffsetsLogTest, BatchesArePlainOrTransactional) {
  const std::string plain = BuildOffsetsLogBatch(
      {{.key = EncodeGroupMetadataKey("g"), .value = std::nullopt}}, 77);
  absl::StatusOr<protocol::RecordBatchHeader> h =
      protocol::ParseBatchHeader(plain);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_FALSE(h->is_transactional());
  EXPECT_FALSE(h->is_control());
  EXPECT_EQ(h->compression(), protocol::Compression::kNone);
  EXPECT_EQ(h->producer_id, -1);
  EXPECT_EQ(h->producer_epoch, -1);
  EXPECT_EQ(h->base_sequence, 0);  // as Kafka's coordinator writes it
  EXPECT_EQ(h->base_timestamp, 77);
  EXPECT_EQ(h->record_count, 1);

  OffsetAndMetadata o;
  o.offset = 3;
  const std::string txn =
      BuildOffsetsLogBatch({{.key = EncodeOffsetCommitKey("g", "t", 0),
                             .value = EncodeOffsetCommitValue(o)},
                            {.key = EncodeOffsetCommitKey("g", "t", 1),
                             .value = EncodeOffsetCommitValue(o)}},
                           78, 4000, 3);
  h = protocol::ParseBatchHeader(txn);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_TRUE(h->is_transactional());
  EXPECT_FALSE(h->is_control());
  EXPECT_EQ(h->producer_id, 4000);
  EXPECT_EQ(h->producer_epoch, 3);
  EXPECT_EQ(h->base_sequence, 0);
  EXPECT_EQ(h->record_count, 2);
  absl::StatusOr<std::vector<protocol::Record>> records =
      protocol::DecodeRecords({*h, txn});
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[1].key, EncodeOffsetCommitKey("g", "t", 1));
  EXPECT_EQ((*records)[1].value, EncodeOffsetCommitValue(o));

  EXPECT_EQ(BuildOffsetsLogBatch({}, 1), "");
}

void AppendBatch(PartitionLog& log, const std::string& batch) {
  ASSERT_FALSE(batch.empty());
  SharedBuffer buffer = CopyToSharedBuffer(batch);
  log.Append(buffer, buffer.get(), batch.size(),
             *protocol::ParseBatchHeader(batch), 0);
}

OffsetsLogRecord Commit(const std::string& group, int32_t partition,
                        int64_t offset) {
  OffsetAndMetadata o;
  o.offset = offset;
  o.commit_timestamp_ms = 1000 + offset;
  return {.key = EncodeOffsetCommitKey(group, "t", partition),
          .value = EncodeOffsetCommitValue(o)};
}

OffsetsLogRecord OffsetTombstone(const std::string& group, int32_t partition) {
  return {.key = EncodeOffsetCommitKey(group, "t", partition),
          .value = std::nullopt};
}

OffsetsLogRecord GroupMetadata(const std::string& group, int32_t generation) {
  GroupRecord g = TwoMembers();
  g.generation = generation;
  return {.key = EncodeGroupMetadataKey(group),
          .value = EncodeGroupMetadataValue(g, 1)};
}

OffsetsLogRecord GroupTombstone(const std::string& group) {
  return {.key = EncodeGroupMetadataKey(group), .value = std::nullopt};
}

int64_t CommittedOffset(const LoadedGroup& g, int32_t partition) {
  const OffsetAndMetadata* o = g.offsets.Find({"t", partition});
  return o == nullptr ? -1 : o->offset;
}

TEST(OffsetsLogTest, ReplayFollowsTheLogOrderAndTheTransactionMarkers) {
  PartitionLog log;
  // Offsets 0-1: g's first commit and its group record.
  AppendBatch(log, BuildOffsetsLogBatch(
                       {Commit("g", 0, 10), GroupMetadata("g", 1)}, 1));
  // 2-3: later commits win; 4: a tombstone removes partition 1.
  AppendBatch(
      log, BuildOffsetsLogBatch({Commit("g", 0, 11), Commit("g", 1, 20)}, 2));
  AppendBatch(log, BuildOffsetsLogBatch({OffsetTombstone("g", 1)}, 3));
  // 5-6: producer 100's TxnOffsetCommit for partitions 2 and 0; 7: a regular
  // commit of partition 0 recorded after it; 8: 100's COMMIT marker, which
  // must not override the regular commit of partition 0.
  AppendBatch(log, BuildOffsetsLogBatch(
                       {Commit("g", 2, 30), Commit("g", 0, 40)}, 4, 100, 1));
  AppendBatch(log, BuildOffsetsLogBatch({Commit("g", 0, 12)}, 5));
  AppendBatch(log, protocol::BuildControlBatch(
                       100, 1, protocol::ControlType::kCommit, 0, 6));
  // 9: producer 200's TxnOffsetCommit, 10: its ABORT marker.
  AppendBatch(log, BuildOffsetsLogBatch({Commit("g", 3, 50)}, 7, 200, 0));
  AppendBatch(log, protocol::BuildControlBatch(
                       200, 0, protocol::ControlType::kAbort, 0, 8));
  // 11: producer 300's, with no marker yet.
  AppendBatch(log, BuildOffsetsLogBatch({Commit("g", 4, 60)}, 9, 300, 4));
  // 12-13: a group that is deleted and has no offsets; 14-16: one that is
  // deleted and keeps an offset.
  AppendBatch(log, BuildOffsetsLogBatch({GroupMetadata("gone", 1)}, 10));
  AppendBatch(log, BuildOffsetsLogBatch({GroupTombstone("gone")}, 11));
  AppendBatch(
      log, BuildOffsetsLogBatch({GroupMetadata("kept", 2),
                                 Commit("kept", 0, 70), GroupTombstone("kept")},
                                12));
  // 17-19: records that do not decode: Kafka 4's ConsumerGroupMetadataKey
  // (version 3), an offset value of an unknown version, no key at all.
  AppendBatch(log, BuildOffsetsLogBatch(
                       {{.key = Bytes({0, 3, 0, 1, 'g'}), .value = "whatever"},
                        {.key = EncodeOffsetCommitKey("g", "t", 0),
                         .value = Bytes({0, 9, 0, 0})}},
                       13));
  {
    protocol::RecordBatchSpec spec;
    AppendBatch(log, *protocol::BuildRecordBatch(
                         spec, {{.key = std::nullopt, .value = "v"}}));
  }
  // 20: a marker of a producer with nothing staged changes nothing.
  AppendBatch(log, protocol::BuildControlBatch(
                       999, 0, protocol::ControlType::kCommit, 0, 14));

  size_t skipped = 0;
  std::map<std::string, LoadedGroup> groups = ReplayOffsetsLog(log, &skipped);
  EXPECT_EQ(skipped, 3u);
  ASSERT_EQ(groups.size(), 2u);
  ASSERT_TRUE(groups.contains("g"));
  ASSERT_TRUE(groups.contains("kept"));
  EXPECT_FALSE(groups.contains("gone"));

  const LoadedGroup& g = groups.at("g");
  ASSERT_TRUE(g.record.has_value());
  EXPECT_EQ(g.record->group_id, "g");
  EXPECT_EQ(g.record->generation, 1);
  EXPECT_EQ(g.record->members.size(), 2u);
  // Partition 0: the regular commit at offset 7 outlives the transaction's
  // commit of its earlier record.
  EXPECT_EQ(CommittedOffset(g, 0), 12);
  EXPECT_EQ(g.offsets.Find({"t", 0})->record_seq, 8u);
  EXPECT_EQ(g.offsets.Find({"t", 0})->commit_timestamp_ms, 1012);
  EXPECT_EQ(CommittedOffset(g, 1), -1);  // the tombstone
  EXPECT_EQ(CommittedOffset(g, 2), 30);  // committed by 100's marker
  EXPECT_EQ(g.offsets.Find({"t", 2})->record_seq, 6u);
  EXPECT_EQ(CommittedOffset(g, 3), -1);  // aborted
  EXPECT_EQ(CommittedOffset(g, 4), -1);  // still pending
  EXPECT_EQ(g.offsets.committed().size(), 2u);
  ASSERT_EQ(g.offsets.pending_txns().size(), 1u);
  const GroupOffsets::PendingTxn& pending = g.offsets.pending_txns().at(300);
  EXPECT_EQ(pending.producer_epoch, 4);
  ASSERT_EQ(pending.offsets.size(), 1u);
  EXPECT_EQ(pending.offsets.at({"t", 4}).offset, 60);
  EXPECT_EQ(pending.offsets.at({"t", 4}).record_seq, 12u);

  const LoadedGroup& kept = groups.at("kept");
  EXPECT_FALSE(kept.record.has_value());
  EXPECT_EQ(CommittedOffset(kept, 0), 70);
}

TEST(OffsetsLogTest, ReplayUnstagesATransactionalTombstone) {
  PartitionLog log;
  AppendBatch(log, BuildOffsetsLogBatch({Commit("g", 0, 5)}, 1, 7, 0));
  AppendBatch(log, BuildOffsetsLogBatch({OffsetTombstone("g", 0)}, 2, 7, 0));
  AppendBatch(log, protocol::BuildControlBatch(
                       7, 0, protocol::ControlType::kCommit, 0, 3));
  size_t skipped = 9;
  EXPECT_TRUE(ReplayOffsetsLog(log, &skipped).empty());
  EXPECT_EQ(skipped, 0u);
}

}  // namespace
}  // namespace exactly::broker
