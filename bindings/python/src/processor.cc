// exactly._exactly.Processor: the SDK's consume-transform-produce loop with
// a Python transform. Python drives it one batch at a time (run_once, with
// the GIL released); the transform runs inside, on the caller's thread,
// taking the GIL for the call. An exception the transform raises aborts the
// batch's transaction (its input stays uncommitted and is transformed again
// by the next run_once) and is raised by run_once.
#include "exactly/processor.h"

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "blocking_call.h"
#include "callbacks.h"
#include "exactly/error.h"
#include "natives.h"
#include "off_thread.h"
#include "producer_base.h"
#include "statistics.h"

namespace exactly::python {
namespace {

using Properties = std::map<std::string, std::string>;

// What the transform writes to, valid during one transform call.
class PyEmitter {
 public:
  explicit PyEmitter(Emitter* emitter) : emitter_(emitter) {}

  void Send(py::handle topic, py::handle value, py::handle key,
            int32_t partition, int64_t timestamp_ms, py::handle headers) {
    if (emitter_ == nullptr) {
      throw py::value_error(
          "this emitter belongs to a transform call that has returned");
    }
    Record record;
    record.topic = TopicView(topic);
    BytesView value_holder(value, "value");
    BytesView key_holder(key, "key");
    record.value = value_holder.view();
    record.key = key_holder.view();
    record.partition = partition;
    record.timestamp_ms = timestamp_ms;
    std::vector<BytesView> holders;
    std::vector<Header> parsed;
    ParseHeaders(headers, &holders, &parsed);
    record.headers = parsed;
    absl::Status status = emitter_->Send(record);
    if (!status.ok()) {
      failure_ = status;
      ThrowStatus(status);
    }
  }

  void Invalidate() { emitter_ = nullptr; }
  const absl::Status& failure() const { return failure_; }

 private:
  Emitter* emitter_;
  absl::Status failure_;
};

// Shared by the SDK's transform function and the Python object, which may
// be gone when an abandoned Create finishes.
struct TransformState {
  PyObject* transform = nullptr;  // borrowed from PyProcessor::transform_
  std::atomic<bool> alive{true};
  std::unique_ptr<py::error_already_set> raised;  // with the GIL
};

class PyProcessor {
 public:
  PyProcessor(const Properties& consumer_properties,
              const Properties& producer_properties,
              const std::vector<std::string>& input_topics,
              size_t max_batch_records, double max_batch_time,
              py::object transform, py::object on_error, py::handle retry,
              std::optional<double> init_timeout, py::object on_statistics)
      : on_error_(std::move(on_error)), transform_(std::move(transform)) {
    state_->transform = transform_.ptr();
    ProcessorOptions options;
    options.consumer_properties = consumer_properties;
    options.producer_properties = producer_properties;
    auto take = [](Properties* from, const char* name, std::string* field) {
      auto it = from->find(name);
      if (it == from->end()) return;
      *field = it->second;
      from->erase(it);
    };
    take(&options.consumer_properties, "bootstrap.servers",
         &options.bootstrap_servers);
    options.producer_properties.erase("bootstrap.servers");
    take(&options.consumer_properties, "group.id", &options.group_id);
    take(&options.producer_properties, "transactional.id",
         &options.transactional_id);
    options.input_topics = input_topics;
    options.max_batch_records = max_batch_records;
    options.max_batch_time =
        std::chrono::milliseconds(static_cast<int64_t>(max_batch_time * 1000));
    options.retry = ToRetryPolicy(retry);
    statistics_.Use(std::move(on_statistics), &options);
    if (!on_error_.is_none()) {
      CallbackQueue* queue = queue_.get();
      options.on_error = [queue](const absl::Status& s) {
        queue->PushError(s);
      };
    }
    std::shared_ptr<TransformState> state = state_;
    Transform fn = [state](const Message& input, Emitter& output) {
      return CallTransform(*state, input, output);
    };
    std::optional<absl::StatusOr<std::unique_ptr<Processor>>> created =
        CallOffThread<absl::StatusOr<std::unique_ptr<Processor>>>(
            [options, fn] { return Processor::Create(options, fn); },
            Deadline::After(init_timeout));
    if (!created.has_value()) {
      Check(absl::DeadlineExceededError(
          "creating the processor (initialising transactions, joining the "
          "group) did not complete within init_timeout"));
    }
    processor_ = Take(std::move(*created));
  }

  ~PyProcessor() {
    state_->alive.store(false);
    if (processor_ == nullptr) return;
    py::gil_scoped_release release;
    processor_.reset();
  }

  void RunOnce() {
    CheckOpen();
    const absl::Status status =
        WithoutGil([&] { return processor_->RunOnce(); });
    AfterCallbacks();
    Check(status);
  }

  py::object Stats() const {
    const ProcessorStats s =
        processor_ != nullptr ? processor_->stats() : ProcessorStats{};
    py::dict by_cause;
    for (size_t i = 0; i < kProcessorAbortCauseCount; ++i) {
      by_cause[py::str(std::string(kProcessorAbortCauseNames[i]))] =
          s.aborted_by_cause[i];
    }
    return PackageAttr("exactly.types", "ProcessorStats")(
        s.records_in, s.records_out, s.transactions_committed,
        s.transactions_aborted, s.batches_replayed,
        FromOffsets(s.committed_offsets), by_cause,
        py::tuple(py::cast(s.batch_size_counts)), s.partitions_assigned,
        s.partitions_revoked);
  }

  void Close() {
    if (processor_ == nullptr || closed_) return;
    closed_ = true;
    const absl::Status status = WithoutGil([&] { return processor_->Close(); });
    AfterCallbacks();
    Check(status);
  }

  bool closed() const { return closed_; }

 private:
  static absl::Status CallTransform(TransformState& state, const Message& input,
                                    Emitter& output) {
    py::gil_scoped_acquire gil;
    if (!state.alive.load()) {
      return absl::CancelledError("the Python processor is gone");
    }
    auto emitter = std::make_unique<PyEmitter>(&output);
    PyEmitter* raw = emitter.get();
    py::object handle = py::cast(std::move(emitter));
    absl::Status status;
    try {
      py::handle(state.transform)(MakeMessage(input), handle);
    } catch (py::error_already_set& e) {
      if (!raw->failure().ok() &&
          NextTxnAction(raw->failure()) != TxnAction::kGiveUp) {
        // The emitter's abortable (or retriable) error, let through by the
        // transform: the processor aborts and transforms the batch again.
        status = raw->failure();
      } else {
        if (state.raised == nullptr) {
          state.raised = std::make_unique<py::error_already_set>(e);
        }
        status =
            absl::AbortedError(absl::StrCat("the transform raised ", e.what()));
      }
    }
    raw->Invalidate();
    return status;
  }

  void CheckOpen() const {
    if (closed_ || processor_ == nullptr) {
      Check(absl::FailedPreconditionError("the processor is closed"));
    }
  }

  // After the SDK ran callbacks: queued errors to on_error, then what the
  // transform raised, then statistics reports to on_statistics.
  void AfterCallbacks() {
    if (!queue_->empty()) queue_->Drain(py::none(), on_error_);
    if (state_->raised != nullptr) {
      std::unique_ptr<py::error_already_set> raised = std::move(state_->raised);
      throw *raised;
    }
    statistics_.Deliver();
  }

  std::shared_ptr<CallbackQueue> queue_ = std::make_shared<CallbackQueue>();
  py::object on_error_;
  py::object transform_;
  std::shared_ptr<TransformState> state_ = std::make_shared<TransformState>();
  bool closed_ = false;
  StatisticsRelay statistics_;
  std::unique_ptr<Processor> processor_;
};

}  // namespace

void RegisterProcessor(py::module_& m) {
  py::class_<PyEmitter>(m, "Emitter",
                        "Where a transform sends its output: into the "
                        "batch's transaction.")
      .def("send", &PyEmitter::Send, py::arg("topic"),
           py::arg("value") = py::none(), py::arg("key") = py::none(),
           py::kw_only(), py::arg("partition") = kAnyPartition,
           py::arg("timestamp_ms") = 0, py::arg("headers") = py::none());

  py::class_<PyProcessor>(m, "Processor")
      .def(
          py::init<const Properties&, const Properties&,
                   const std::vector<std::string>&, size_t, double, py::object,
                   py::object, py::handle, std::optional<double>, py::object>(),
          py::arg("consumer_properties"), py::arg("producer_properties"),
          py::arg("input_topics"), py::arg("max_batch_records"),
          py::arg("max_batch_time"), py::arg("transform"), py::arg("on_error"),
          py::arg("retry"), py::arg("init_timeout"),
          py::arg("on_statistics") = py::none())
      .def("run_once", &PyProcessor::RunOnce)
      .def("stats", &PyProcessor::Stats)
      .def("close", &PyProcessor::Close)
      .def_property_readonly("closed", &PyProcessor::closed);
}

}  // namespace exactly::python
