// exactly._exactly.SpooledProducer: the SDK's durable spool. send() returns
// once the record is on local disk (the GIL released while it syncs); a
// full spool is waited out here, interruptibly, rather than inside the SDK;
// flush() waits for Kafka in slices. send_batch_async() returns once the
// records are admitted; its completion, like on_error, runs on the caller's
// thread (inside send, flush, poll, close).
#include "exactly/spool.h"

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "blocking_call.h"
#include "callbacks.h"
#include "natives.h"
#include "producer_base.h"

namespace exactly::python {
namespace {

using Properties = std::map<std::string, std::string>;

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

double Seconds(std::chrono::microseconds us) { return us.count() / 1e6; }

// The records of send_batch / send_batch_async: values or (key, value)
// pairs for one topic, pointing into the Python buffers `holders` keeps.
struct Batch {
  Batch(py::handle topic, py::handle items, int32_t partition,
        py::handle cursor_arg) {
    const std::string_view topic_view = TopicView(topic);
    py::list list = py::reinterpret_borrow<py::list>(items);
    holders.reserve(2 * list.size());  // views into them must stay put
    records.reserve(list.size());
    for (py::handle item : list) {
      Record record;
      record.topic = topic_view;
      record.partition = partition;
      py::handle key = py::none();
      py::handle value = item;
      if (PyTuple_Check(item.ptr())) {
        py::tuple pair = py::reinterpret_borrow<py::tuple>(item);
        if (pair.size() != 2) {
          throw py::value_error(
              "a batch item is a value, or a (key, value) pair");
        }
        key = pair[0];
        value = pair[1];
      }
      holders.emplace_back(value, "value");
      record.value = holders.back().view();
      holders.emplace_back(key, "key");
      record.key = holders.back().view();
      records.push_back(record);
    }
    if (!cursor_arg.is_none()) cursor_holder.Set(cursor_arg, "cursor");
  }
  std::string_view cursor() const { return cursor_holder.view(); }

  std::vector<BytesView> holders;
  std::vector<Record> records;
  BytesView cursor_holder;  // empty: no cursor
};

class PySpooledProducer {
 public:
  PySpooledProducer(const std::string& dir, const Properties& properties,
                    const py::dict& settings, py::object on_error,
                    py::object on_statistics)
      : on_error_(std::move(on_error)) {
    SpoolOptions options;
    options.dir = dir;
    options.producer = MakeProducerOptions(properties, /*unchecked=*/false,
                                           queue_, /*has_on_delivery=*/false,
                                           /*has_on_error=*/false);
    statistics_.Use(std::move(on_statistics), &options.producer);
    auto get = [&](const char* name) -> py::object {
      if (!settings.contains(name)) return py::none();
      return settings[name];
    };
    if (py::object v = get("sync"); !v.is_none()) {
      const std::string sync = v.cast<std::string>();
      if (sync == "always") {
        options.sync = SyncPolicy::kAlways;
      } else if (sync == "interval") {
        options.sync = SyncPolicy::kInterval;
      } else if (sync == "none") {
        options.sync = SyncPolicy::kNone;
      } else {
        throw py::value_error(absl::StrCat(
            "sync must be 'always', 'interval' or 'none', not '", sync, "'"));
      }
    }
    if (py::object v = get("sync_interval"); !v.is_none()) {
      options.sync_interval = Millis(v.cast<double>());
    }
    if (py::object v = get("max_records"); !v.is_none()) {
      options.max_records = v.cast<uint64_t>();
    }
    if (py::object v = get("max_bytes"); !v.is_none()) {
      options.max_bytes = v.cast<uint64_t>();
    }
    if (py::object v = get("when_full"); !v.is_none()) {
      const std::string when = v.cast<std::string>();
      if (when != "block" && when != "fail") {
        throw py::value_error(absl::StrCat(
            "when_full must be 'block' or 'fail', not '", when, "'"));
      }
      block_when_full_ = when == "block";
    }
    if (py::object v = get("full_timeout"); !v.is_none()) {
      full_timeout_ = v.cast<double>();
    }
    // Waiting for room happens here, interruptibly.
    options.when_full = SpoolFullPolicy::kFail;
    if (py::object v = get("max_batch_records"); !v.is_none()) {
      options.max_batch_records = v.cast<size_t>();
    }
    if (py::object v = get("max_batch_bytes"); !v.is_none()) {
      options.max_batch_bytes = v.cast<size_t>();
    }
    if (py::object v = get("max_batch_time"); !v.is_none()) {
      options.max_batch_time = Millis(v.cast<double>());
    }
    if (py::object v = get("checkpoint_topic"); !v.is_none()) {
      options.checkpoint_topic = v.cast<std::string>();
    }
    if (py::object v = get("create_checkpoint_topic"); !v.is_none()) {
      options.create_checkpoint_topic = v.cast<bool>();
    }
    if (py::object v = get("recovery_timeout"); !v.is_none()) {
      options.recovery_timeout = Millis(v.cast<double>());
    }
    if (py::object v = get("stamp_headers"); !v.is_none()) {
      options.stamp_headers = v.cast<bool>();
    }
    if (!on_error_.is_none()) {
      CallbackQueue* queue = queue_.get();
      options.on_error = [queue](const absl::Status& s) {
        queue->PushError(s);
      };
    }
    spool_ = Take(WithoutGil([&] { return SpooledProducer::Create(options); }));
  }

  ~PySpooledProducer() {
    if (spool_ == nullptr) return;
    py::gil_scoped_release release;
    spool_.reset();  // Close(0): what is not in Kafka stays spooled
  }

  void Send(py::handle topic, py::handle value, py::handle key,
            int32_t partition, int64_t timestamp_ms, py::handle headers,
            py::handle cursor) {
    CheckOpen();
    Drain();
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
    BytesView cursor_holder;
    if (!cursor.is_none()) cursor_holder.Set(cursor, "cursor");
    Spooled([&] {
      return cursor.is_none() ? spool_->Send(record)
                              : spool_->Send(record, cursor_holder.view());
    });
  }

  void SendBatch(py::handle topic, py::handle records, int32_t partition,
                 py::handle cursor) {
    CheckOpen();
    Drain();
    const Batch batch(topic, records, partition, cursor);
    Spooled([&] { return spool_->SendBatch(batch.records, batch.cursor()); });
  }

  // SendAsync: returns once the records are admitted (encoded and queued, so
  // the Python buffers are no longer needed); `on_durable(error or None)`
  // runs later on the caller's thread (poll, flush, send, close). Without
  // it, a failure goes to on_error.
  void SendBatchAsync(py::handle topic, py::handle records, int32_t partition,
                      py::handle cursor, py::handle on_durable) {
    CheckOpen();
    Drain();
    const Batch batch(topic, records, partition, cursor);
    // A strong reference for the completion, handed to the queue when it
    // runs; dropped here if no attempt is admitted.
    py::object callback = py::reinterpret_borrow<py::object>(on_durable);
    PyObject* owned = callback.is_none() ? nullptr : callback.inc_ref().ptr();
    bool admitted = false;
    try {
      Spooled([&] {
        std::shared_ptr<CallbackQueue> queue = queue_;
        absl::Status s = spool_->SendAsync(
            batch.records,
            [queue, owned](const absl::Status& status) {
              if (owned == nullptr) {
                if (!status.ok()) queue->PushError(status);
                return;
              }
              QueuedCall call;
              call.kind = QueuedCall::Kind::kResult;
              call.callback = owned;  // the queue's consumer drops it
              call.status = status;
              queue->Push(std::move(call));
            },
            batch.cursor());
        admitted = s.ok();
        return s;
      });
    } catch (...) {
      if (!admitted && owned != nullptr) Py_DECREF(owned);
      throw;
    }
  }

  void Flush(std::optional<double> timeout) {
    CheckOpen();
    Check(FlushInSlices(Deadline::After(timeout)));
  }

  // For an event loop (exactly.aio): the descriptor that becomes readable
  // when on_durable calls (or errors) are queued, and the drain that runs up
  // to `max_calls` of them on the calling thread (true: some are left).
  int LoopFd() { return queue_->WakeFd(); }
  bool LoopDrain(int max_calls) {
    return queue_->DrainForLoop(max_calls, py::none(), on_error_);
  }

  int Poll(std::optional<double> timeout) {
    return PollCallbacks(*queue_, timeout, [this] { return Drain(); });
  }

  // Returns how many records stay spooled for the next instance.
  uint64_t Close(double drain_timeout) {
    if (closed_ || spool_ == nullptr) return 0;
    const Deadline deadline = Deadline::After(drain_timeout);
    if (!deadline.expired() &&
        FlushInSlices(deadline).code() == absl::StatusCode::kDeadlineExceeded) {
      CheckSignals();  // after the last slice too, as after every other one
    }
    const uint64_t left = spool_->metrics().depth;
    const absl::Status status =
        WithoutGil([&] { return spool_->Close(std::chrono::milliseconds(0)); });
    closed_ = true;
    Drain();
    if (status.code() != absl::StatusCode::kDeadlineExceeded) Check(status);
    return left;
  }

  py::object Metrics() const {
    CheckOpen();
    const SpoolMetrics m = spool_->metrics();
    return PackageAttr("exactly.spool", "SpoolMetrics")(
        m.depth, m.bytes, m.oldest_age.count() / 1000.0, m.disk_bytes,
        m.appended, m.sent, m.committed, m.transactions, m.group_commits,
        m.recoveries, m.drainer_errors, Seconds(m.last_commit_latency),
        Seconds(m.max_commit_latency), Seconds(m.mean_commit_latency),
        m.quarantined, m.next_sequence, m.committed_sequence,
        ErrorOrNone(m.drainer_status),
        py::tuple(py::cast(m.group_commit_latency_counts)),
        Seconds(m.group_commit_latency_sum),
        py::tuple(py::cast(m.group_commit_size_counts)));
  }

  py::list Quarantined() const {
    CheckOpen();
    py::list out;
    py::object cls = PackageAttr("exactly.spool", "QuarantinedRecord");
    for (const QuarantinedRecord& q : spool_->Quarantined()) {
      out.append(cls(q.sequence, q.records, q.reason, py::bytes(q.bytes),
                     q.quarantined_ms));
    }
    return out;
  }

  std::string recovered_cursor() const {
    CheckOpen();
    return spool_->recovered_cursor();
  }
  std::string spool_id() const {
    CheckOpen();
    return spool_->spool_id();
  }
  bool exactly_once() const {
    CheckOpen();
    return spool_->exactly_once();
  }
  bool closed() const { return closed_; }

 private:
  void CheckOpen() const {
    if (closed_ || spool_ == nullptr) {
      Check(absl::FailedPreconditionError("the spooled producer is closed"));
    }
  }

  // Queued calls (on_durable, on_error), then librdkafka's statistics
  // reports to on_statistics.
  int Drain() {
    const int ran = queue_->Drain(py::none(), on_error_);
    return ran + statistics_.Deliver();
  }

  // Flushes in slices until done, failed other than by a timeout, or
  // `deadline`; returns the last status.
  absl::Status FlushInSlices(const Deadline& deadline) {
    return CallInSlices(
        deadline, std::chrono::milliseconds(100),
        [&](std::chrono::milliseconds slice) { return spool_->Flush(slice); },
        [&](const absl::Status& status) {
          Drain();
          return status.code() != absl::StatusCode::kDeadlineExceeded;
        });
  }

  // Runs a spool write with the GIL released; while the spool is full
  // (and when_full is "block"), waits for room in slices.
  template <typename F>
  void Spooled(F write) {
    const Deadline deadline = Deadline::After(full_timeout_);
    for (;;) {
      const absl::Status status = WithoutGil(write);
      if (status.ok()) return;
      if (!block_when_full_ ||
          status.code() != absl::StatusCode::kResourceExhausted ||
          deadline.expired()) {
        ThrowStatus(status);
      }
      WithoutGil([&] { queue_->Wait(std::chrono::milliseconds(5)); });
      Drain();
      CheckSignals();
    }
  }

  std::shared_ptr<CallbackQueue> queue_ = std::make_shared<CallbackQueue>();
  py::object on_error_;
  bool block_when_full_ = true;
  double full_timeout_ = 30.0;
  bool closed_ = false;
  StatisticsRelay statistics_;
  std::unique_ptr<SpooledProducer> spool_;
};

}  // namespace

void RegisterSpool(py::module_& m) {
  py::class_<PySpooledProducer>(m, "SpooledProducer")
      .def(py::init<const std::string&, const Properties&, const py::dict&,
                    py::object, py::object>(),
           py::arg("dir"), py::arg("properties"), py::arg("settings"),
           py::arg("on_error"), py::arg("on_statistics") = py::none())
      .def("send", &PySpooledProducer::Send, py::arg("topic"), py::arg("value"),
           py::arg("key"), py::arg("partition"), py::arg("timestamp_ms"),
           py::arg("headers"), py::arg("cursor"))
      .def("send_batch", &PySpooledProducer::SendBatch, py::arg("topic"),
           py::arg("records"), py::arg("partition"), py::arg("cursor"))
      .def("send_batch_async", &PySpooledProducer::SendBatchAsync,
           py::arg("topic"), py::arg("records"), py::arg("partition"),
           py::arg("cursor"), py::arg("on_durable"))
      .def("flush", &PySpooledProducer::Flush, py::arg("timeout"))
      .def("poll", &PySpooledProducer::Poll, py::arg("timeout"))
      .def("loop_fd", &PySpooledProducer::LoopFd)
      .def("loop_drain", &PySpooledProducer::LoopDrain, py::arg("max_calls"))
      .def("close", &PySpooledProducer::Close, py::arg("drain_timeout"))
      .def("metrics", &PySpooledProducer::Metrics)
      .def("quarantined", &PySpooledProducer::Quarantined)
      .def_property_readonly("recovered_cursor",
                             &PySpooledProducer::recovered_cursor)
      .def_property_readonly("spool_id", &PySpooledProducer::spool_id)
      .def_property_readonly("exactly_once", &PySpooledProducer::exactly_once)
      .def_property_readonly("closed", &PySpooledProducer::closed);
}

}  // namespace exactly::python
