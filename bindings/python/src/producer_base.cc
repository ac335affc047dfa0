#include "producer_base.h"

#include <librdkafka/rdkafka.h>

#include <utility>
#include <vector>

#include "exactly/error.h"

namespace exactly::python {
namespace {

bool IsQueueFull(const absl::Status& status) {
  return KafkaErrorCode(status) == RD_KAFKA_RESP_ERR__QUEUE_FULL;
}

// Sets `sent` on the pending Python exception (how many of a batch were
// queued) and raises it.
[[noreturn]] void ThrowWithSent(size_t sent) {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  if (value != nullptr) {
    PyObject* count = PyLong_FromSize_t(sent);
    if (PyObject_SetAttrString(value, "sent", count) != 0) PyErr_Clear();
    Py_XDECREF(count);
  }
  PyErr_Restore(type, value, traceback);
  throw py::error_already_set();
}

bool IsTimedOut(const absl::Status& status) {
  return KafkaErrorCode(status) == RD_KAFKA_RESP_ERR__TIMED_OUT ||
         status.code() == absl::StatusCode::kDeadlineExceeded;
}

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

}  // namespace

RetryPolicy ToRetryPolicy(py::handle retry) {
  RetryPolicy policy;
  if (retry.is_none()) return policy;
  py::tuple t = py::reinterpret_borrow<py::tuple>(retry);
  policy.max_attempts = t[0].cast<int>();
  policy.max_retries = t[1].cast<int>();
  policy.initial_backoff = Millis(t[2].cast<double>());
  policy.max_backoff = Millis(t[3].cast<double>());
  return policy;
}

ProducerOptions MakeProducerOptions(
    const std::map<std::string, std::string>& properties, bool unchecked,
    const std::shared_ptr<CallbackQueue>& queue, bool has_on_delivery,
    bool has_on_error) {
  ProducerOptions options;
  options.properties = properties;
  auto take = [&](const char* name, std::string* field) {
    auto it = options.properties.find(name);
    if (it == options.properties.end()) return;
    *field = it->second;
    options.properties.erase(it);
  };
  take("bootstrap.servers", &options.bootstrap_servers);
  take("client.id", &options.client_id);
  take("transactional.id", &options.transactional_id);
  options.mode = unchecked ? Mode::kUnchecked : Mode::kExactlyOnce;
  // Waiting for room happens here, with the GIL released and signals
  // checked; the SDK only reports that the queue is full.
  options.queue_full = QueueFullPolicy::kFail;
  if (has_on_delivery) {
    options.on_delivery = [queue](const DeliveryReport& report) {
      queue->PushReport(nullptr, report);
    };
  }
  if (has_on_error) {
    options.on_error = [queue](const absl::Status& status) {
      queue->PushError(status);
    };
  }
  return options;
}

ProducerBase::ProducerBase(py::object on_delivery, py::object on_error,
                           bool block_when_full, double queue_full_timeout)
    : on_delivery_(std::move(on_delivery)),
      on_error_(std::move(on_error)),
      block_when_full_(block_when_full),
      queue_full_timeout_(queue_full_timeout) {}

void ProducerBase::CheckOpen() const {
  if (closed_) Check(absl::FailedPreconditionError("the producer is closed"));
}

absl::Status ProducerBase::Attempt(const Record& record,
                                   py::handle on_delivery, bool future) {
  if (on_delivery.is_none()) return DoSend(record);
  PyObject* callback = on_delivery.ptr();
  Py_INCREF(callback);  // handed to the queue by the report
  // Both queues outlive every record's report.
  CallbackQueue* queue = future ? futures_.get() : queue_.get();
  absl::Status status = DoSend(record, [queue, callback](const DeliveryReport& r) {
    queue->PushReport(callback, r);
  });
  if (!status.ok()) Py_DECREF(callback);  // not queued: never reported
  return status;
}

absl::Status ProducerBase::SendWhenRoom(const Record& record,
                                        py::handle on_delivery, bool future) {
  const Deadline deadline = Deadline::After(queue_full_timeout_);
  for (;;) {
    {
      py::gil_scoped_release release;
      queue_->Wait(std::chrono::milliseconds(1));
    }
    Drain();
    CheckSignals();
    absl::Status status = Attempt(record, on_delivery, future);
    if (status.ok() || !IsQueueFull(status) || deadline.expired()) {
      return status;
    }
  }
}

void ProducerBase::SendRecord(const Record& record, py::handle on_delivery,
                              bool future) {
  absl::Status status = Attempt(record, on_delivery, future);
  if (status.ok()) return;
  if (block_when_full_ && IsQueueFull(status)) {
    status = SendWhenRoom(record, on_delivery, future);
  }
  Check(status);
}

void ProducerBase::Send(py::handle topic, py::handle value, py::handle key,
                        int32_t partition, int64_t timestamp_ms,
                        py::handle headers, py::handle on_delivery) {
  SendImpl(topic, value, key, partition, timestamp_ms, headers, on_delivery,
           /*future=*/false);
}

void ProducerBase::SendImpl(py::handle topic, py::handle value,
                            py::handle key, int32_t partition,
                            int64_t timestamp_ms, py::handle headers,
                            py::handle on_delivery, bool future) {
  if (!queue_->empty()) Drain();
  Record record;
  record.topic = TopicView(topic);
  BytesView value_holder;
  BytesView key_holder;
  if (!FastView(value.ptr(), &record.value)) {
    value_holder.Set(value, "value");
    record.value = value_holder.view();
  }
  if (!FastView(key.ptr(), &record.key)) {
    key_holder.Set(key, "key");
    record.key = key_holder.view();
  }
  record.partition = partition;
  record.timestamp_ms = timestamp_ms;
  if (headers.is_none()) {
    SendRecord(record, on_delivery, future);
    return;
  }
  std::vector<BytesView> holders;
  std::vector<Header> parsed;
  ParseHeaders(headers, &holders, &parsed);
  record.headers = parsed;
  SendRecord(record, on_delivery, future);
}

void ProducerBase::SendFuture(py::handle topic, py::handle value,
                              py::handle key, int32_t partition,
                              int64_t timestamp_ms, py::handle headers,
                              py::handle complete) {
  SendImpl(topic, value, key, partition, timestamp_ms, headers, complete,
           /*future=*/true);
}

bool ProducerBase::CompleteFutures(std::optional<double> timeout) {
  if (futures_->empty() && !closed_) {
    py::gil_scoped_release release;
    futures_->Wait(Deadline::After(timeout).Slice(std::chrono::seconds(1)));
  }
  futures_->Drain(py::none(), py::none());
  return !closed_ || !futures_->empty();
}

size_t ProducerBase::SendBatch(py::handle topic, py::handle records,
                               int32_t partition, py::handle on_delivery) {
  if (!queue_->empty()) Drain();
  Record record;
  record.topic = TopicView(topic);
  record.partition = partition;
  py::object sequence = py::reinterpret_steal<py::object>(PySequence_Fast(
      records.ptr(), "records must be a sequence or an iterable"));
  if (!sequence) throw py::error_already_set();
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(sequence.ptr());
  PyObject** items = PySequence_Fast_ITEMS(sequence.ptr());
  size_t sent = 0;
  try {
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* item = items[i];
      BytesView key_holder;
      BytesView value_holder;
      PyObject* key = Py_None;
      PyObject* value = item;
      if (PyTuple_Check(item)) {
        if (PyTuple_GET_SIZE(item) != 2) {
          throw py::value_error(
              "a batch item is a value, or a (key, value) pair");
        }
        key = PyTuple_GET_ITEM(item, 0);
        value = PyTuple_GET_ITEM(item, 1);
      }
      if (!FastView(value, &record.value)) {
        value_holder.Set(value, "value");
        record.value = value_holder.view();
      }
      if (!FastView(key, &record.key)) {
        key_holder.Set(key, "key");
        record.key = key_holder.view();
      }
      SendRecord(record, on_delivery, /*future=*/false);
      ++sent;
    }
  } catch (py::error_already_set& e) {
    e.restore();
    ThrowWithSent(sent);
  } catch (py::builtin_exception& e) {
    e.set_error();
    ThrowWithSent(sent);
  }
  return sent;
}

int ProducerBase::Poll(std::optional<double> timeout) {
  int ran = Drain();
  if (ran > 0 || (timeout.has_value() && *timeout == 0)) return ran;
  const Deadline deadline = Deadline::After(timeout);
  while (!deadline.expired()) {
    {
      py::gil_scoped_release release;
      queue_->Wait(deadline.Slice());
    }
    ran = Drain();
    if (ran > 0) return ran;
    CheckSignals();
  }
  return 0;
}

void ProducerBase::Flush(std::optional<double> timeout) {
  CheckOpen();
  const Deadline deadline = Deadline::After(timeout);
  for (;;) {
    absl::Status status;
    {
      py::gil_scoped_release release;
      status = DoFlush(deadline.Slice());
    }
    Drain();
    if (status.ok()) return;
    if (!IsTimedOut(status) || deadline.expired()) ThrowStatus(status);
    CheckSignals();
  }
}

void ProducerBase::Close(std::optional<double> timeout) {
  if (closed_) {
    Drain();
    return;
  }
  BeforeClose();
  // Flush here, interruptibly; then the SDK's Close only has to stop.
  const Deadline deadline = Deadline::After(timeout);
  absl::Status flushed;
  for (;;) {
    {
      py::gil_scoped_release release;
      flushed = DoFlush(deadline.Slice());
    }
    Drain();
    if (flushed.ok() || !IsTimedOut(flushed) || deadline.expired()) break;
    CheckSignals();
  }
  absl::Status closed;
  {
    py::gil_scoped_release release;
    closed = DoClose(std::chrono::milliseconds(0));
  }
  closed_ = true;
  Drain();  // the reports of records failed by the close
  Check(flushed.ok() ? closed : flushed);
}

py::object ProducerBase::Stats() const {
  const ProducerStats s = DoStats();
  return PackageAttr("exactly.types", "ProducerStats")(
      s.delivered, s.failed, s.in_flight, s.callback_errors);
}

}  // namespace exactly::python
