#include "producer_base.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "blocking_call.h"
#include "client/rdkafka_util.h"  // the SDK's: statuses from librdkafka codes
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

absl::Status ProducerBase::Attempt(const Record& record, py::handle on_delivery,
                                   bool future) {
  if (on_delivery.is_none()) return DoSend(record);
  PyObject* callback = on_delivery.ptr();
  Py_INCREF(callback);  // handed to the queue by the report
  // Both queues outlive every record's report.
  CallbackQueue* queue = future ? futures_.get() : queue_.get();
  absl::Status status =
      DoSend(record, [queue, callback](const DeliveryReport& r) {
        queue->PushReport(callback, r);
      });
  if (!status.ok()) Py_DECREF(callback);  // not queued: never reported
  return status;
}

absl::Status ProducerBase::SendWhenRoom(const Record& record,
                                        py::handle on_delivery, bool future) {
  const Deadline deadline = Deadline::After(queue_full_timeout_);
  for (;;) {
    WithoutGil([&] { queue_->Wait(std::chrono::milliseconds(1)); });
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

void ProducerBase::SendImpl(py::handle topic, py::handle value, py::handle key,
                            int32_t partition, int64_t timestamp_ms,
                            py::handle headers, py::handle on_delivery,
                            bool future) {
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
    rd_kafka_t* rk = nullptr;
    if (on_delivery.is_none() && timestamp_ms == 0 && !closing_ && !closed_) {
      rk = BatchHandle();
    }
    if (rk != nullptr) {
      SendPlain(rk, record);
    } else {
      SendRecord(record, on_delivery, future);
    }
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

namespace {

// One batch item: a value, or a (key, value) pair.
void ItemViews(PyObject* item, BytesView* key_holder, BytesView* value_holder,
               std::string_view* key, std::string_view* value) {
  PyObject* k = Py_None;
  PyObject* v = item;
  if (PyTuple_Check(item)) {
    if (PyTuple_GET_SIZE(item) != 2) {
      throw py::value_error("a batch item is a value, or a (key, value) pair");
    }
    k = PyTuple_GET_ITEM(item, 0);
    v = PyTuple_GET_ITEM(item, 1);
  }
  if (!FastView(v, value)) {
    value_holder->Set(v, "value");
    *value = value_holder->view();
  }
  if (!FastView(k, key)) {
    key_holder->Set(k, "key");
    *key = key_holder->view();
  }
}

// How many records send_batch hands to librdkafka per call.
constexpr size_t kBatchChunk = 1024;
// Records this close to message.max.bytes take the record-by-record path,
// which raises MSG_SIZE_TOO_LARGE for them in order (librdkafka's batch call
// would fail that one record and queue the ones after it).
constexpr size_t kRecordOverheadMargin = 512;

}  // namespace

size_t ProducerBase::SendBatch(py::handle topic, py::handle records,
                               int32_t partition, py::handle on_delivery) {
  if (!queue_->empty()) Drain();
  const std::string_view topic_view = TopicView(topic);
  // A tuple of the items: callbacks run while the batch waits for room
  // cannot change what is being sent (and free items under it).
  py::object sequence =
      PyTuple_CheckExact(records.ptr())
          ? py::reinterpret_borrow<py::object>(records)
          : py::reinterpret_steal<py::object>(PySequence_Tuple(records.ptr()));
  if (!sequence) throw py::error_already_set();
  const size_t n = static_cast<size_t>(PyTuple_GET_SIZE(sequence.ptr()));
  PyObject** items = &PyTuple_GET_ITEM(sequence.ptr(), 0);
  size_t sent = 0;
  try {
    rd_kafka_t* rk = nullptr;
    if (on_delivery.is_none() && !closed_ && !closing_) rk = BatchHandle();
    if (rk != nullptr) {
      SendBatchFast(rk, topic_view, partition, items, n, &sent);
      return sent;
    }
    Record record;
    record.topic = topic_view;
    record.partition = partition;
    for (size_t i = 0; i < n; ++i) {
      BytesView key_holder;
      BytesView value_holder;
      ItemViews(items[i], &key_holder, &value_holder, &record.key,
                &record.value);
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

void ProducerBase::SendPlain(rd_kafka_t* rk, const Record& record) {
  ReadLimits(rk);
  rd_kafka_topic_t* rkt = BatchTopic(rk, record.topic);
  std::optional<Deadline> deadline;
  for (;;) {
    if (rd_kafka_produce(rkt, record.partition, RD_KAFKA_MSG_F_COPY,
                         const_cast<char*>(record.value.data()),
                         record.value.size(), record.key.data(),
                         record.key.size(), nullptr) == 0) {
      CountSent(1);
      ReleaseFinishedReports();
      return;
    }
    const rd_kafka_resp_err_t err = rd_kafka_last_error();
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL || !block_when_full_ ||
        (deadline.has_value() && deadline->expired())) {
      Check(internal::StatusFromCode(
          err, absl::StrCat("send to ", std::string(record.topic)), rk));
    }
    if (!deadline.has_value()) {
      deadline.emplace(Deadline::After(queue_full_timeout_));
    }
    WaitForRoom(rk);
    if (closing_ || closed_) {
      Check(absl::FailedPreconditionError("the producer is closed"));
    }
  }
}

rd_kafka_topic_t* ProducerBase::BatchTopic(rd_kafka_t* rk,
                                           std::string_view topic) {
  auto it = topics_.find(topic);
  if (it != topics_.end()) return it->second;
  if (topic.empty() || topic.size() > 249) {
    Check(absl::InvalidArgumentError(absl::StrCat(
        "topic name must have 1 to 249 characters, got ", topic.size())));
  }
  const std::string name(topic);
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, name.c_str(), nullptr);
  if (rkt == nullptr) {
    Check(internal::StatusFromCode(rd_kafka_last_error(),
                                   absl::StrCat("send to ", name), rk));
  }
  topics_.emplace(name, rkt);
  return rkt;
}

void ProducerBase::ReleaseTopics() {
  sticky_.Forget();
  for (auto& [name, rkt] : topics_) rd_kafka_topic_destroy(rkt);
  topics_.clear();
}

void ProducerBase::WaitForRoom(rd_kafka_t* rk) {
  {
    // Until librdkafka's queue has room for a good number of records again
    // (the SDK's delivery thread frees it), for a millisecond or two at
    // most: then callbacks run and signals are checked.
    HandleInUse in_use(&handle_users_);
    py::gil_scoped_release release;
    for (int i = 0; i < 20; ++i) {
      ReleaseFinishedReports();
      if (static_cast<size_t>(rd_kafka_outq_len(rk)) + room_wanted_ <=
          max_queue_messages_) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  Drain();
  CheckSignals();
}

void ProducerBase::ReadLimits(rd_kafka_t* rk) {
  if (max_message_bytes_ != 0) return;
  auto get = [rk](const char* name, size_t fallback) -> size_t {
    char value[64];
    size_t size = sizeof(value);
    if (rd_kafka_conf_get(rd_kafka_conf(rk), name, value, &size) !=
        RD_KAFKA_CONF_OK) {
      return fallback;
    }
    const size_t parsed = std::strtoull(value, nullptr, 10);
    return parsed > 0 ? parsed : fallback;
  };
  max_queue_messages_ = get("queue.buffering.max.messages", 100000);
  room_wanted_ = std::max<size_t>(
      1, std::min<size_t>(kBatchChunk, max_queue_messages_ / 8));
  max_message_bytes_ = get("message.max.bytes", 1000000);
}

void ProducerBase::SendBatchFast(rd_kafka_t* rk, std::string_view topic,
                                 int32_t partition, PyObject** items, size_t n,
                                 size_t* sent) {
  ReadLimits(rk);
  rd_kafka_topic_t* rkt = BatchTopic(rk, topic);
  std::vector<rd_kafka_message_t> messages;
  messages.reserve(std::min(n, kBatchChunk));
  std::vector<BytesView> holders;  // only for buffer-protocol items
  holders.reserve(2 * std::min(n, kBatchChunk));
  size_t i = 0;
  while (i < n) {
    // Views of the next chunk; stops before a record too large for it (or
    // not a key or value at all).
    messages.clear();
    holders.clear();
    bool one_by_one = false;
    bool keyless = true;
    size_t end = i;
    for (; end < n && messages.size() < kBatchChunk; ++end) {
      BytesView key_holder;
      BytesView value_holder;
      std::string_view key;
      std::string_view value;
      try {
        ItemViews(items[end], &key_holder, &value_holder, &key, &value);
      } catch (const std::exception&) {
        // Queue the records before it first; the record-by-record path
        // below raises the same error again.
        one_by_one = true;
        break;
      }
      if (key.size() + value.size() + kRecordOverheadMargin >
          max_message_bytes_) {
        one_by_one = true;
        break;
      }
      if (key.data() != nullptr) keyless = false;
      rd_kafka_message_t m{};
      m.payload = const_cast<char*>(value.data());
      m.len = value.size();
      m.key = const_cast<char*>(key.data());
      m.key_len = key.size();
      messages.push_back(m);
      holders.push_back(std::move(key_holder));
      holders.push_back(std::move(value_holder));
    }

    // Keyless records without a partition: the whole chunk to one.
    int32_t chunk_partition = partition;
    if (partition == RD_KAFKA_PARTITION_UA && keyless && !messages.empty()) {
      HandleInUse in_use(&handle_users_);  // ForChunk may release the GIL
      chunk_partition = sticky_.ForChunk(rk, rkt);
    }

    // Hand it over; on a full queue, wait for room and go on from the
    // first record not queued.
    const Deadline deadline = Deadline::After(queue_full_timeout_);
    size_t done = 0;
    while (done < messages.size()) {
      if (closing_ || closed_) {
        Check(absl::FailedPreconditionError("the producer is closed"));
      }
      const size_t count = messages.size() - done;
      const int good = rd_kafka_produce_batch(
          rkt, chunk_partition, RD_KAFKA_MSG_F_COPY, messages.data() + done,
          static_cast<int>(count));
      size_t prefix = 0;
      while (prefix < count && messages[done + prefix].err == 0) ++prefix;
      if (prefix == count) {
        *sent += count;
        CountSent(count);
        ReleaseFinishedReports();
        break;
      }
      const rd_kafka_resp_err_t err = messages[done + prefix].err;
      if (good >= 0 && static_cast<size_t>(good) != prefix) {
        // Records after the failed one were queued: say so.
        const size_t failed_at = *sent + prefix;
        *sent += static_cast<size_t>(good);
        CountSent(static_cast<size_t>(good));
        Check(internal::StatusFromCode(
            err,
            absl::StrCat("send to ", std::string(topic), ": record ", failed_at,
                         " of the batch failed, ",
                         static_cast<size_t>(good) - prefix,
                         " record(s) after it were queued"),
            rk));
      }
      *sent += prefix;
      CountSent(prefix);
      done += prefix;
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL || !block_when_full_ ||
          deadline.expired()) {
        Check(internal::StatusFromCode(
            err, absl::StrCat("send to ", std::string(topic)), rk));
      }
      WaitForRoom(rk);  // runs callbacks: the loop checks for a close
    }
    i = end;
    if (one_by_one) {
      Record record;
      record.topic = topic;
      record.partition = partition;
      BytesView key_holder;
      BytesView value_holder;
      ItemViews(items[i], &key_holder, &value_holder, &record.key,
                &record.value);
      SendRecord(record, py::none(), /*future=*/false);
      ++*sent;
      ++i;
    }
  }
}

int ProducerBase::Poll(std::optional<double> timeout) {
  return PollCallbacks(*queue_, timeout, [this] { return Drain(); });
}

absl::Status ProducerBase::FlushInSlices(const Deadline& deadline) {
  return CallInSlices(
      deadline, kSlice,
      [&](std::chrono::milliseconds slice) { return DoFlush(slice); },
      [&](const absl::Status& status) {
        Drain();
        return status.ok() || !IsTimedOut(status);
      });
}

void ProducerBase::Flush(std::optional<double> timeout) {
  CheckOpen();
  Check(FlushInSlices(Deadline::After(timeout)));
}

void ProducerBase::Close(std::optional<double> timeout) {
  if (closed_) {
    Drain();
    return;
  }
  BeforeClose();
  // The batch path's topic handles go before the librdkafka handle does,
  // and neither while another thread still uses them without the GIL (it
  // sees closing_ when it has the GIL back).
  closing_ = true;
  while (handle_users_ > 0) {
    py::gil_scoped_release release;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ReleaseTopics();
  // Flush here, interruptibly; then the SDK's Close only has to stop.
  const absl::Status flushed = FlushInSlices(Deadline::After(timeout));
  const absl::Status closed =
      WithoutGil([&] { return DoClose(std::chrono::milliseconds(0)); });
  closed_ = true;
  Drain();  // the reports of records failed by the close
  Check(flushed.ok() ? closed : flushed);
}

py::object ProducerBase::Stats() const {
  const ProducerStats s = DoStats();
  return PackageAttr("exactly.types", "ProducerStats")(
      s.delivered, s.failed, s.in_flight, s.callback_errors, s.sent);
}

}  // namespace exactly::python
