// exactly._exactly.Broker: the bundled broker in this process, with its
// fault injection. The broker serves on its own threads and never calls
// back into Python; calls that wait for it release the GIL.
#include "exactly/broker/broker.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "natives.h"

namespace exactly::python {
namespace {

using broker::Broker;
using broker::BrokerOptions;
using broker::FaultMatch;

template <typename T>
void Set(const py::dict& options, const char* name, T* field) {
  if (options.contains(name) && !options[name].is_none()) {
    *field = options[name].cast<T>();
  }
}

BrokerOptions ToBrokerOptions(const py::dict& options) {
  BrokerOptions o;
  Set(options, "host", &o.host);
  Set(options, "port", &o.port);
  Set(options, "advertised_host", &o.advertised_host);
  Set(options, "data_dir", &o.data_dir);
  Set(options, "node_id", &o.node_id);
  Set(options, "cluster_id", &o.cluster_id);
  Set(options, "default_partitions", &o.default_partitions);
  Set(options, "auto_create_topics", &o.auto_create_topics);
  Set(options, "max_frame_bytes", &o.max_frame_bytes);
  Set(options, "max_connections", &o.max_connections);
  Set(options, "max_in_flight_request_bytes", &o.max_in_flight_request_bytes);
  Set(options, "max_decompressed_batch_bytes", &o.max_decompressed_batch_bytes);
  Set(options, "max_frame_waste_bytes", &o.max_frame_waste_bytes);
  Set(options, "flush_every_messages", &o.flush.every_messages);
  Set(options, "flush_every_ms", &o.flush.every_ms);
  Set(options, "group_initial_rebalance_delay_ms",
      &o.group_initial_rebalance_delay_ms);
  Set(options, "group_min_session_timeout_ms", &o.group_min_session_timeout_ms);
  Set(options, "group_max_session_timeout_ms", &o.group_max_session_timeout_ms);
  Set(options, "transaction_max_timeout_ms", &o.transaction_max_timeout_ms);
  Set(options, "transaction_abort_check_interval_ms",
      &o.transaction_abort_check_interval_ms);
  Set(options, "strict_sequence_reuse", &o.strict_sequence_reuse);
  Set(options, "transaction_partition_verification",
      &o.transaction_partition_verification);
  Set(options, "verbose", &o.verbose);
  for (auto item : options) {
    static const char* const kKnown[] = {"host",
                                         "port",
                                         "advertised_host",
                                         "data_dir",
                                         "node_id",
                                         "cluster_id",
                                         "default_partitions",
                                         "auto_create_topics",
                                         "max_frame_bytes",
                                         "max_connections",
                                         "max_in_flight_request_bytes",
                                         "max_decompressed_batch_bytes",
                                         "max_frame_waste_bytes",
                                         "flush_every_messages",
                                         "flush_every_ms",
                                         "group_initial_rebalance_delay_ms",
                                         "group_min_session_timeout_ms",
                                         "group_max_session_timeout_ms",
                                         "transaction_max_timeout_ms",
                                         "transaction_abort_check_interval_ms",
                                         "strict_sequence_reuse",
                                         "transaction_partition_verification",
                                         "verbose"};
    const std::string name = item.first.cast<std::string>();
    bool known = false;
    for (const char* k : kKnown) known |= name == k;
    if (!known) {
      throw py::type_error(absl::StrCat("unknown broker option: ", name));
    }
  }
  return o;
}

FaultMatch ToMatch(std::optional<int16_t> api_key,
                   std::optional<std::string> topic,
                   std::optional<int32_t> partition) {
  FaultMatch match;
  match.api_key = api_key;
  match.topic = std::move(topic);
  match.partition = partition;
  return match;
}

py::object OptionalBytes(const std::optional<std::string>& s) {
  if (!s.has_value()) return py::none();
  return py::bytes(*s);
}

class PyBroker {
 public:
  explicit PyBroker(const py::dict& options)
      : options_(ToBrokerOptions(options)) {}

  ~PyBroker() {
    if (broker_ == nullptr) return;
    py::gil_scoped_release release;
    broker_.reset();
  }

  void Start() {
    if (broker_ != nullptr) return;
    absl::StatusOr<std::unique_ptr<Broker>> started;
    {
      py::gil_scoped_release release;
      started = Broker::Start(options_);
    }
    broker_ = Take(std::move(started));
    // A restart keeps the port, so pin the one picked now.
    options_.port = broker_->port();
  }

  void Stop() {
    if (broker_ == nullptr) return;
    absl::Status status;
    {
      py::gil_scoped_release release;
      status = broker_->Stop();
      broker_.reset();
    }
    Check(status);
  }

  void Restart(const std::string& mode) {
    Broker::RestartMode m;
    if (mode == "clean") {
      m = Broker::RestartMode::kClean;
    } else if (mode == "crash") {
      m = Broker::RestartMode::kCrash;
    } else if (mode == "power_loss") {
      m = Broker::RestartMode::kPowerLoss;
    } else {
      throw py::value_error(absl::StrCat(
          "restart mode must be 'clean', 'crash' or 'power_loss', not '", mode,
          "'"));
    }
    Broker& b = Running();
    absl::Status status;
    {
      py::gil_scoped_release release;
      status = b.Restart(m);
    }
    Check(status);
  }

  bool running() const { return broker_ != nullptr; }
  std::string bootstrap_servers() { return Running().bootstrap_servers(); }
  uint16_t port() { return Running().port(); }

  void CreateTopic(const std::string& name, int32_t partitions,
                   const std::map<std::string, std::string>& configs) {
    Broker& b = Running();
    absl::Status status;
    {
      py::gil_scoped_release release;
      status = b.CreateTopic(name, partitions, configs);
    }
    Check(status);
  }

  std::vector<std::string> ListTopics() {
    Broker& b = Running();
    py::gil_scoped_release release;
    return b.ListTopics();
  }

  // Each batch as a dict, each record as a dict: exactly.testing turns
  // them into dataclasses.
  py::list ReadLog(const std::string& topic, int32_t partition) {
    Broker& b = Running();
    absl::StatusOr<std::vector<broker::LoggedBatch>> batches;
    {
      py::gil_scoped_release release;
      batches = b.ReadLog(topic, partition);
    }
    py::list out;
    for (const broker::LoggedBatch& batch : Take(std::move(batches))) {
      py::list records;
      for (const broker::LoggedRecord& r : batch.records) {
        py::list headers;
        for (const auto& [key, value] : r.headers) {
          headers.append(py::make_tuple(key, OptionalBytes(value)));
        }
        py::dict record;
        record["offset"] = r.offset;
        record["timestamp_ms"] = r.timestamp;
        record["key"] = OptionalBytes(r.key);
        record["value"] = OptionalBytes(r.value);
        record["headers"] = headers;
        records.append(record);
      }
      py::dict d;
      d["base_offset"] = batch.base_offset;
      d["last_offset"] = batch.last_offset;
      d["producer_id"] = batch.producer_id;
      d["producer_epoch"] = batch.producer_epoch;
      d["base_sequence"] = batch.base_sequence;
      d["transactional"] = batch.transactional;
      d["control"] = batch.control;
      d["commit_marker"] = batch.commit_marker;
      d["compression"] = batch.compression;
      d["records"] = records;
      out.append(d);
    }
    return out;
  }

  py::tuple Offsets(const std::string& topic, int32_t partition) {
    Broker& b = Running();
    absl::StatusOr<broker::PartitionOffsets> offsets;
    {
      py::gil_scoped_release release;
      offsets = b.Offsets(topic, partition);
    }
    const broker::PartitionOffsets o = Take(std::move(offsets));
    return py::make_tuple(o.log_start_offset, o.high_watermark,
                          o.last_stable_offset, o.log_end_offset);
  }

  std::optional<int64_t> CommittedOffset(const std::string& group,
                                         const std::string& topic,
                                         int32_t partition) {
    Broker& b = Running();
    absl::StatusOr<std::optional<int64_t>> offset;
    {
      py::gil_scoped_release release;
      offset = b.CommittedOffset(group, topic, partition);
    }
    return Take(std::move(offset));
  }

  // KIP-664's abort of a hanging transaction: an ABORT marker on one
  // partition. Returns the marker's offset.
  int64_t AbortTransaction(const std::string& topic, int32_t partition,
                           int64_t producer_id) {
    Broker& b = Running();
    absl::StatusOr<int64_t> offset;
    {
      py::gil_scoped_release release;
      offset = b.AbortTransaction(topic, partition, producer_id);
    }
    return Take(std::move(offset));
  }

  // ---- Faults ----
  void FailRequests(std::optional<int16_t> api_key,
                    std::optional<std::string> topic,
                    std::optional<int32_t> partition, int16_t error_code,
                    int count) {
    Running().faults().FailRequests(
        ToMatch(api_key, std::move(topic), partition), error_code, count);
  }
  void DropProduceResponses(int count, int one_in,
                            std::optional<std::string> topic,
                            std::optional<int32_t> partition) {
    Running().faults().DropProduceResponses(
        count, one_in, ToMatch(std::nullopt, std::move(topic), partition));
  }
  void AddLatency(int32_t latency_ms, std::optional<int16_t> api_key,
                  std::optional<std::string> topic,
                  std::optional<int32_t> partition) {
    Running().faults().AddLatency(
        latency_ms, ToMatch(api_key, std::move(topic), partition));
  }
  void CloseAllConnections() { Running().faults().CloseAllConnections(); }
  void BrokerDown(int32_t duration_ms) {
    Running().faults().BrokerDown(duration_ms);
  }
  void HoldTransactionMarkers(int count) {
    Running().faults().HoldTransactionMarkers(count);
  }
  void ClearFaults() { Running().faults().Clear(); }
  std::vector<std::string> History() { return Running().faults().History(); }

 private:
  Broker& Running() {
    if (broker_ == nullptr) {
      Check(absl::FailedPreconditionError(
          "the broker is not running: call start() (or use it as a context "
          "manager)"));
    }
    return *broker_;
  }

  BrokerOptions options_;
  std::unique_ptr<Broker> broker_;
};

}  // namespace

void RegisterBroker(py::module_& m) {
  py::class_<PyBroker>(m, "Broker")
      .def(py::init<const py::dict&>(), py::arg("options"))
      .def("start", &PyBroker::Start)
      .def("stop", &PyBroker::Stop)
      .def("restart", &PyBroker::Restart, py::arg("mode"))
      .def_property_readonly("running", &PyBroker::running)
      .def_property_readonly("bootstrap_servers", &PyBroker::bootstrap_servers)
      .def_property_readonly("port", &PyBroker::port)
      .def("create_topic", &PyBroker::CreateTopic, py::arg("name"),
           py::arg("partitions"), py::arg("configs"))
      .def("list_topics", &PyBroker::ListTopics)
      .def("read_log", &PyBroker::ReadLog, py::arg("topic"),
           py::arg("partition"))
      .def("offsets", &PyBroker::Offsets, py::arg("topic"),
           py::arg("partition"))
      .def("committed_offset", &PyBroker::CommittedOffset, py::arg("group"),
           py::arg("topic"), py::arg("partition"))
      .def("abort_transaction", &PyBroker::AbortTransaction, py::arg("topic"),
           py::arg("partition"), py::arg("producer_id"))
      .def("fail_requests", &PyBroker::FailRequests, py::arg("api_key"),
           py::arg("topic"), py::arg("partition"), py::arg("error_code"),
           py::arg("count"))
      .def("drop_produce_responses", &PyBroker::DropProduceResponses,
           py::arg("count"), py::arg("one_in"), py::arg("topic"),
           py::arg("partition"))
      .def("add_latency", &PyBroker::AddLatency, py::arg("latency_ms"),
           py::arg("api_key"), py::arg("topic"), py::arg("partition"))
      .def("close_all_connections", &PyBroker::CloseAllConnections)
      .def("broker_down", &PyBroker::BrokerDown, py::arg("duration_ms"))
      .def("hold_transaction_markers", &PyBroker::HoldTransactionMarkers,
           py::arg("count"))
      .def("clear_faults", &PyBroker::ClearFaults)
      .def("fault_history", &PyBroker::History);
}

}  // namespace exactly::python
