// What the Python Producer, TransactionalProducer and SpooledProducer share:
// the send path (the GIL held while librdkafka copies the record, released
// only to wait for room), the callback queue, flush/poll/close that run the
// queued callbacks on the caller's thread, and waiting for a future.
#ifndef EXACTLY_BINDINGS_PYTHON_SRC_PRODUCER_BASE_H_
#define EXACTLY_BINDINGS_PYTHON_SRC_PRODUCER_BASE_H_

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "callbacks.h"
#include "common.h"
#include "exactly/options.h"
#include "exactly/producer.h"
#include "exactly/record.h"
#include "statistics.h"
#include "sticky_partitioner.h"

namespace exactly::python {

// The retry policy as Python passes it: (max_attempts, max_retries,
// initial_backoff seconds, max_backoff seconds).
RetryPolicy ToRetryPolicy(py::handle retry);

// ProducerOptions from the librdkafka properties Python collected;
// bootstrap.servers, client.id and transactional.id become the fields of the
// same name. Callbacks are routed to `queue`, only where Python has one.
ProducerOptions MakeProducerOptions(
    const std::map<std::string, std::string>& properties, bool unchecked,
    const std::shared_ptr<CallbackQueue>& queue, bool has_on_delivery,
    bool has_on_error);

class ProducerBase {
 public:
  ProducerBase(py::object on_delivery, py::object on_error,
               bool block_when_full, double queue_full_timeout);
  virtual ~ProducerBase() = default;
  ProducerBase(const ProducerBase&) = delete;
  ProducerBase& operator=(const ProducerBase&) = delete;

  // The Python API.
  void Send(py::handle topic, py::handle value, py::handle key,
            int32_t partition, int64_t timestamp_ms, py::handle headers,
            py::handle on_delivery);
  // As Send, with the report going to `complete` (a future's completion)
  // through the futures queue, which CompleteFutures also serves.
  void SendFuture(py::handle topic, py::handle value, py::handle key,
                  int32_t partition, int64_t timestamp_ms, py::handle headers,
                  py::handle complete);
  // For the thread that completes futures: waits (GIL released) up to
  // `timeout` for reports, completes them; false once closed and done.
  bool CompleteFutures(std::optional<double> timeout);
  // For an event loop (exactly.aio): the descriptor that becomes readable
  // when send_future reports are queued, and the drain that completes up to
  // `max_calls` of them on the calling thread (true: some are left).
  int LoopFd() { return futures_->WakeFd(); }
  bool LoopDrain(int max_calls) {
    return futures_->DrainForLoop(max_calls, py::none(), py::none());
  }
  size_t SendBatch(py::handle topic, py::handle records, int32_t partition,
                   py::handle on_delivery);
  int Poll(std::optional<double> timeout);
  void Flush(std::optional<double> timeout);
  void Close(std::optional<double> timeout);
  bool closed() const { return closed_; }
  py::object Stats() const;

 protected:
  // Each queues one record; the callback variant completes it exactly once
  // on success.
  virtual absl::Status DoSend(const Record& record) = 0;
  virtual absl::Status DoSend(const Record& record,
                              DeliveryCallback on_delivery) = 0;
  virtual absl::Status DoFlush(std::chrono::milliseconds timeout) = 0;
  // Called without the GIL.
  virtual absl::Status DoClose(std::chrono::milliseconds timeout) = 0;
  virtual ProducerStats DoStats() const = 0;
  // Before Close flushes, with the GIL (the transactional producer aborts
  // an open transaction).
  virtual void BeforeClose() {}
  // The librdkafka handle send_batch may hand whole chunks of records to
  // (rd_kafka_produce_batch), or null for the record-by-record path. Only
  // where a record needs nothing from the SDK but the produce itself (the
  // plain idempotent producer).
  virtual rd_kafka_t* BatchHandle() { return nullptr; }
  // After producing on BatchHandle(): frees, on this thread (which allocated
  // them), the records whose reports the delivery thread has finished with.
  virtual void ReleaseFinishedReports() {}
  // After queueing `n` records on BatchHandle(): counts them as sent
  // (ProducerStats::sent), as the SDK's Send does.
  virtual void CountSent(uint64_t /*n*/) {}
  // Destroys the topic handles of the batch path; before the librdkafka
  // handle goes (Close, and the destructor of a class with BatchHandle()).
  void ReleaseTopics();

  // Runs the queued callbacks (raising what they raise), and completes
  // the futures whose reports are in.
  int Drain() {
    if (!futures_->empty()) futures_->Drain(py::none(), py::none());
    int ran = queue_->Drain(on_delivery_, on_error_);
    return ran + statistics_.Deliver();
  }
  // Fails if closed.
  void CheckOpen() const;

  // Declared first: destroyed last, after the SDK objects whose threads
  // push onto it.
  std::shared_ptr<CallbackQueue> queue_ = std::make_shared<CallbackQueue>();
  // Reports for send_future: completed by whichever comes first, a call
  // into the producer or its future-completing thread.
  std::shared_ptr<CallbackQueue> futures_ = std::make_shared<CallbackQueue>();
  const py::object on_delivery_;
  // on_statistics: passed on by Drain(), that is by each call into the
  // client (send, poll, flush, ...).
  StatisticsRelay statistics_;
  const py::object on_error_;
  bool closed_ = false;

 private:
  void SendImpl(py::handle topic, py::handle value, py::handle key,
                int32_t partition, int64_t timestamp_ms, py::handle headers,
                py::handle on_delivery, bool future);
  void SendRecord(const Record& record, py::handle on_delivery, bool future);
  absl::Status Attempt(const Record& record, py::handle on_delivery,
                       bool future);
  absl::Status SendWhenRoom(const Record& record, py::handle on_delivery,
                            bool future);
  // send_batch without a callback, through rd_kafka_produce_batch: items
  // [0, n) of `items`; returns how many were queued (all, or raises).
  // `sent` counts the records queued, also when it raises.
  void SendBatchFast(rd_kafka_t* rk, std::string_view topic, int32_t partition,
                     PyObject** items, size_t n, size_t* sent);
  // send() of a record without headers, timestamp or callback, through
  // BatchHandle(): one rd_kafka_produce on a cached topic handle.
  void SendPlain(rd_kafka_t* rk, const Record& record);
  rd_kafka_topic_t* BatchTopic(rd_kafka_t* rk, std::string_view topic);
  // Waits a moment for room (GIL released), runs callbacks, checks signals.
  void WaitForRoom(rd_kafka_t* rk);
  // Flushes in slices until done, failed other than by a timeout, or
  // `deadline`; returns the last status.
  absl::Status FlushInSlices(const Deadline& deadline);
  // message.max.bytes and queue.buffering.max.messages, once.
  void ReadLimits(rd_kafka_t* rk);

  std::map<std::string, rd_kafka_topic_t*, std::less<>> topics_;
  StickyPartitioner sticky_;      // for keyless chunks of send_batch
  size_t max_message_bytes_ = 0;  // message.max.bytes, read on first use
  size_t max_queue_messages_ = 0;
  size_t room_wanted_ = 1;
  bool closing_ = false;
  // Calls on the librdkafka handle (or its topic handles) made with the GIL
  // released; Close waits for them to end before it destroys the handles.
  // Changed and read with the GIL held only.
  int handle_users_ = 0;
  struct HandleInUse {
    explicit HandleInUse(int* users) : users_(users) { ++*users_; }
    ~HandleInUse() { --*users_; }
    HandleInUse(const HandleInUse&) = delete;
    HandleInUse& operator=(const HandleInUse&) = delete;
    int* users_;
  };

  const bool block_when_full_;
  const double queue_full_timeout_;
};

}  // namespace exactly::python

#endif  // EXACTLY_BINDINGS_PYTHON_SRC_PRODUCER_BASE_H_
