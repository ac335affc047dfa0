#include "controller/controller_state_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "crc32c/crc32c.h"
#include "protocol/serde.h"

namespace exactly::broker {
namespace {

// "EXCS" (exactly controller state), then the format version: a file of
// another format is refused by name, not misread.
constexpr int32_t kMagic = 0x45584353;
// Format 2 adds the dynamic broker configs; a format 1 file (without them)
// still loads.
constexpr int16_t kFormat = 2;
constexpr char kFileName[] = "controller.state";

// The snapshot as flat lists, so one Serde function both writes and reads it
// with the wire codec (whose Decoder bounds-checks every length).
struct StoredTopic {
  std::string name;
  bool unclean_leader_election = false;
  std::vector<std::pair<std::string, std::string>> configs;
  std::vector<PartitionState> partitions;
};

struct StoredState {
  int64_t version = 0;
  int64_t next_producer_id = 1;
  std::vector<BrokerInfo> brokers;
  std::vector<StoredTopic> topics;
  // Dynamic broker configs: (resource name, [(name, value)]).
  std::vector<
      std::pair<std::string, std::vector<std::pair<std::string, std::string>>>>
      broker_configs;

  template <class Io>
  void Serde(Io& io, int16_t format = kFormat) {
    io.Int64(version);
    io.Int64(next_producer_id);
    io.Array(brokers, [&](BrokerInfo& b) {
      io.Int32(b.node_id);
      io.String(b.host);
      io.Int32(b.port);
      io.Bool(b.fenced);
    });
    io.Array(topics, [&](StoredTopic& t) {
      io.String(t.name);
      io.Bool(t.unclean_leader_election);
      io.Array(t.configs, [&](std::pair<std::string, std::string>& c) {
        io.String(c.first);
        io.String(c.second);
      });
      io.Array(t.partitions, [&](PartitionState& p) {
        io.Array(p.replicas, [&](int32_t& r) { io.Int32(r); });
        io.Int32(p.leader);
        io.Int32(p.leader_epoch);
        io.Int32(p.partition_epoch);
        io.Array(p.isr, [&](int32_t& r) { io.Int32(r); });
      });
    });
    if (format < 2) return;
    io.Array(broker_configs, [&](auto& resource) {
      io.String(resource.first);
      io.Array(resource.second, [&](std::pair<std::string, std::string>& c) {
        io.String(c.first);
        io.String(c.second);
      });
    });
  }
};

absl::Status ErrnoError(const char* what, const std::string& path) {
  return absl::InternalError(
      absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

// Writes `bytes` to `path` and fsyncs it.
absl::Status WriteSynced(const std::string& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return ErrnoError("open", path);
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n =
        ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status s = ErrnoError("write", path);
      ::close(fd);
      return s;
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    absl::Status s = ErrnoError("fsync", path);
    ::close(fd);
    return s;
  }
  if (::close(fd) != 0) return ErrnoError("close", path);
  return absl::OkStatus();
}

// Makes a rename inside `dir` durable.
absl::Status SyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return ErrnoError("open", dir);
  const int rc = ::fsync(fd);
  absl::Status s = rc == 0 ? absl::OkStatus() : ErrnoError("fsync", dir);
  ::close(fd);
  return s;
}

}  // namespace

std::string EncodeControllerState(const ClusterMetadata& metadata,
                                  int64_t next_producer_id) {
  StoredState state;
  state.version = metadata.version;
  state.next_producer_id = next_producer_id;
  for (const auto& [id, info] : metadata.brokers) state.brokers.push_back(info);
  for (const auto& [name, placement] : metadata.topics) {
    StoredTopic& t = state.topics.emplace_back();
    t.name = name;
    t.unclean_leader_election = placement->unclean_leader_election;
    t.configs.assign(placement->configs.begin(), placement->configs.end());
    t.partitions = placement->partitions;
  }
  for (const auto& [name, configs] : metadata.broker_configs) {
    state.broker_configs.emplace_back(
        name, std::vector<std::pair<std::string, std::string>>(configs.begin(),
                                                               configs.end()));
  }
  std::string body;
  protocol::Encoder body_encoder(&body, 0, false);
  state.Serde(body_encoder);

  std::string out;
  protocol::Encoder header(&out, 0, false);
  header.Int32(kMagic);
  header.Int16(kFormat);
  header.UInt32(crc32c::Value(body));
  header.Bytes(body);
  return out;
}

absl::StatusOr<ControllerState> DecodeControllerState(std::string_view bytes) {
  protocol::Decoder header(bytes, 0, false);
  int32_t magic = 0;
  int16_t format = 0;
  uint32_t crc = 0;
  std::string body;
  header.Int32(magic);
  header.Int16(format);
  header.UInt32(crc);
  header.Bytes(body);
  if (!header.ok())
    return absl::DataLossError(absl::StrCat("controller state is truncated: ",
                                            header.status().message()));
  if (magic != kMagic)
    return absl::DataLossError("not a controller state file (bad magic)");
  if (format != kFormat && format != 1)
    return absl::DataLossError(
        absl::StrCat("controller state format ", format, " is not ", kFormat));
  if (crc32c::Value(body) != crc)
    return absl::DataLossError("controller state fails its CRC-32C");
  if (header.remaining() != 0)
    return absl::DataLossError("controller state has trailing bytes");

  StoredState state;
  protocol::Decoder decoder(body, 0, false);
  state.Serde(decoder, format);
  if (!decoder.ok() || decoder.remaining() != 0)
    return absl::DataLossError(absl::StrCat(
        "controller state does not parse: ",
        decoder.ok() ? "trailing bytes" : decoder.status().message()));

  ControllerState out;
  out.metadata.version = state.version;
  out.next_producer_id = state.next_producer_id;
  for (BrokerInfo& b : state.brokers) {
    const int32_t id = b.node_id;
    out.metadata.brokers[id] = std::move(b);
  }
  for (StoredTopic& t : state.topics) {
    auto placement = std::make_shared<TopicPlacement>();
    placement->name = t.name;
    placement->unclean_leader_election = t.unclean_leader_election;
    placement->configs.insert(t.configs.begin(), t.configs.end());
    placement->partitions = std::move(t.partitions);
    out.metadata.topics[t.name] = std::move(placement);
  }
  for (auto& [name, configs] : state.broker_configs) {
    out.metadata.broker_configs[name].insert(configs.begin(), configs.end());
  }
  return out;
}

absl::Status SaveControllerState(const std::string& dir,
                                 const ClusterMetadata& metadata,
                                 int64_t next_producer_id) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return absl::InternalError(
        absl::StrCat("create ", dir, ": ", ec.message()));
  const std::string path = (std::filesystem::path(dir) / kFileName).string();
  const std::string temporary = path + ".new";
  if (absl::Status s = WriteSynced(
          temporary, EncodeControllerState(metadata, next_producer_id));
      !s.ok())
    return s;
  if (::rename(temporary.c_str(), path.c_str()) != 0)
    return ErrnoError("rename to", path);
  return SyncDir(dir);
}

absl::StatusOr<ControllerState> LoadControllerState(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / kFileName).string();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (!std::filesystem::exists(path))
      return absl::NotFoundError(absl::StrCat("no ", path));
    return ErrnoError("open", path);
  }
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  if (in.bad()) return ErrnoError("read", path);
  absl::StatusOr<ControllerState> state = DecodeControllerState(bytes);
  if (!state.ok())
    return absl::DataLossError(
        absl::StrCat(path, ": ", state.status().message()));
  return state;
}

}  // namespace exactly::broker
