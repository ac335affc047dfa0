// exactly._exactly.Producer and TransactionalProducer.
//
// The transactional verbs that talk to the coordinator (commit, abort,
// send_offsets) are made with a short per-call timeout and made again while
// they time out: librdkafka resumes such a call where it left off, so the
// wait is sliced like any other and Ctrl-C interrupts it. The retry rules
// (retriable: repeat; abortable: abort and run again; fatal: give up) are
// applied here and in exactly/producer.py, as the SDK's Transact() applies
// them in C++.
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "blocking_call.h"
#include "exactly/error.h"
#include "exactly/producer.h"
#include "exactly/transactional_producer.h"
#include "fast_send.h"
#include "natives.h"
#include "off_thread.h"
#include "producer/producer_access.h"  // the SDK's: the handle, for send_batch
#include "producer_base.h"

namespace exactly::python {
namespace {

using Properties = std::map<std::string, std::string>;

class PyProducer final : public ProducerBase {
 public:
  PyProducer(const Properties& properties, bool unchecked, bool block,
             double queue_full_timeout, py::object on_delivery,
             py::object on_error, py::object on_statistics)
      : ProducerBase(std::move(on_delivery), std::move(on_error), block,
                     queue_full_timeout) {
    ProducerOptions options =
        MakeProducerOptions(properties, unchecked, queue_,
                            !on_delivery_.is_none(), !on_error_.is_none());
    statistics_.Use(std::move(on_statistics), &options);
    producer_ = Take(Producer::Create(options));
  }

  ~PyProducer() override {
    if (producer_ == nullptr) return;
    ReleaseTopics();
    py::gil_scoped_release release;
    producer_.reset();  // closes: flushes for up to 30 s
  }

 protected:
  absl::Status DoSend(const Record& record) override {
    return producer_->Send(record);
  }
  absl::Status DoSend(const Record& record,
                      DeliveryCallback on_delivery) override {
    return producer_->Send(record, std::move(on_delivery));
  }
  absl::Status DoFlush(std::chrono::milliseconds timeout) override {
    return producer_->Flush(timeout);
  }
  absl::Status DoClose(std::chrono::milliseconds timeout) override {
    return producer_->Close(timeout);
  }
  ProducerStats DoStats() const override { return producer_->stats(); }
  rd_kafka_t* BatchHandle() override {
    return internal::ProducerAccess::Handle(*producer_);
  }
  void ReleaseFinishedReports() override {
    internal::ProducerAccess::ReleaseFinishedReports(*producer_);
  }
  void CountSent(uint64_t n) override {
    internal::ProducerAccess::CountSent(*producer_, n);
  }

 private:
  std::unique_ptr<Producer> producer_;
};

class PyTransactionalProducer final : public ProducerBase {
 public:
  PyTransactionalProducer(const Properties& properties, bool block,
                          double queue_full_timeout, py::object on_delivery,
                          py::object on_error, py::handle retry,
                          std::optional<double> init_timeout,
                          py::object on_statistics)
      : ProducerBase(std::move(on_delivery), std::move(on_error), block,
                     queue_full_timeout),
        retry_(ToRetryPolicy(retry)) {
    options_ =
        MakeProducerOptions(properties, /*unchecked=*/false, queue_,
                            !on_delivery_.is_none(), !on_error_.is_none());
    statistics_.Use(std::move(on_statistics), &options_);
    options_.transaction_call_timeout = kTxnSlice;
    // Only Create's init_transactions uses the SDK's retries (off the
    // caller's thread): keep resuming it in short steps; init_timeout bounds
    // the whole.
    options_.retry.max_attempts = 1;
    options_.retry.max_retries = 600;
    options_.retry.initial_backoff = std::chrono::milliseconds(10);
    options_.retry.max_backoff = std::chrono::milliseconds(100);
    init_timeout_ = init_timeout;
    producer_ = Create();
  }

  ~PyTransactionalProducer() override {
    if (producer_ == nullptr) return;
    py::gil_scoped_release release;
    producer_.reset();  // aborts an open transaction, closes
  }

  void Begin() {
    CheckUsable();
    Drain();
    // Usually immediate; after an abort that purged a record the broker may
    // hold, it first starts a new producer epoch (init_transactions), which
    // is sliced like the other coordinator calls.
    const uint64_t bumps = producer_->stats().epoch_bumps;
    absl::Status status =
        TxnCall([&] { return producer_->Begin(); }, std::nullopt);
    epoch_bumps_ += producer_->stats().epoch_bumps - bumps;
    Check(status);
  }

  void Commit(std::optional<double> timeout) {
    CheckUsable();
    // The whole of commit(): its slices and retries (the SDK's own
    // histogram sees only the call that completed).
    const auto start = Clock::now();
    absl::Status status = TxnCall([&] { return producer_->Commit(); }, timeout);
    if (status.ok()) {
      ++committed_;
      const auto took = std::chrono::duration_cast<std::chrono::microseconds>(
          Clock::now() - start);
      ++commit_latency_counts_[std::lower_bound(kCommitLatencyBounds.begin(),
                                                kCommitLatencyBounds.end(),
                                                took) -
                               kCommitLatencyBounds.begin()];
      commit_latency_sum_ += took;
    }
    Check(status);
  }

  // `cause`: one of kAbortCauseNames (exactly.TransactionalProducer passes
  // it; the application's abort() is "requested").
  void Abort(std::optional<double> timeout, const std::string& cause) {
    const auto it =
        std::find(kAbortCauseNames.begin(), kAbortCauseNames.end(), cause);
    if (it == kAbortCauseNames.end()) {
      Check(absl::InvalidArgumentError(
          absl::StrCat("unknown abort cause \"", cause, "\"")));
    }
    CheckUsable();
    absl::Status status = TxnCall([&] { return producer_->Abort(); }, timeout);
    if (status.ok()) CountAbort(it - kAbortCauseNames.begin());
    Check(status);
  }

  void SendOffsets(py::handle offsets, py::handle group,
                   std::optional<double> timeout) {
    CheckUsable();
    const std::vector<TopicPartitionOffset> list = ToOffsets(offsets);
    std::unique_ptr<ConsumerGroupMetadata> holder;
    const ConsumerGroupMetadata& metadata = GroupMetadataArg(group, &holder);
    Check(TxnCall([&] { return producer_->SendOffsets(list, metadata); },
                  timeout));
  }

  // A new librdkafka producer after a fatal error, unless fenced.
  void Rebuild() {
    if (IsFenced(fatal_)) {
      Check(absl::FailedPreconditionError(absl::StrCat(
          "not rebuilding: transactional.id \"", options_.transactional_id,
          "\" was fenced by a newer instance, which rebuilding would fence "
          "in turn (",
          fatal_.message(), ")")));
    }
    CheckOpen();
    if (producer_ != nullptr) {
      py::gil_scoped_release release;
      // The old instance's records are lost with it (their callbacks report
      // CANCELLED); its open transaction is aborted by the new one's init.
      producer_->Close(std::chrono::milliseconds(0)).IgnoreError();
      producer_.reset();
    }
    Drain();
    producer_ = Create();
    fatal_ = absl::OkStatus();
    ++rebuilds_;
  }

  bool in_transaction() const {
    return producer_ != nullptr && producer_->in_transaction();
  }
  const std::string& transactional_id() const {
    return options_.transactional_id;
  }
  void CountRerun() { ++reruns_; }
  py::object TxnStats() const {
    py::dict by_cause;
    for (size_t i = 0; i < kAbortCauseCount; ++i) {
      by_cause[py::str(std::string(kAbortCauseNames[i]))] =
          aborted_by_cause_[i];
    }
    py::tuple latency(commit_latency_counts_.size());
    for (size_t i = 0; i < commit_latency_counts_.size(); ++i) {
      latency[i] = commit_latency_counts_[i];
    }
    return PackageAttr("exactly.types", "TransactionStats")(
        committed_, aborted_, reruns_, retries_, rebuilds_, epoch_bumps_,
        by_cause, latency, commit_latency_sum_.count() / 1e6, IsFenced(fatal_));
  }

 protected:
  absl::Status DoSend(const Record& record) override {
    if (producer_ == nullptr) return NoProducer();
    absl::Status status = producer_->Send(record);
    return status.ok() ? status : Track(std::move(status));
  }
  absl::Status DoSend(const Record& record,
                      DeliveryCallback on_delivery) override {
    if (producer_ == nullptr) return NoProducer();
    absl::Status status = producer_->Send(record, std::move(on_delivery));
    return status.ok() ? status : Track(std::move(status));
  }
  absl::Status DoFlush(std::chrono::milliseconds timeout) override {
    if (producer_ == nullptr) return NoProducer();
    return producer_->producer_stats().in_flight == 0 ? absl::OkStatus()
                                                      : WaitInFlight(timeout);
  }
  absl::Status DoClose(std::chrono::milliseconds timeout) override {
    if (producer_ == nullptr) return absl::OkStatus();
    return producer_->Close(timeout);
  }
  ProducerStats DoStats() const override {
    return producer_ != nullptr ? producer_->producer_stats() : ProducerStats{};
  }
  void BeforeClose() override {
    // An open transaction would hold back read_committed consumers until
    // the coordinator timed it out.
    if (in_transaction() && fatal_.ok()) {
      if (TxnCall([&] { return producer_->Abort(); }, 10.0).ok()) {
        CountAbort(static_cast<size_t>(AbortCause::kClose));
      }
    }
  }

 private:
  std::unique_ptr<TransactionalProducer> Create() {
    ProducerOptions options = options_;
    std::optional<absl::StatusOr<std::unique_ptr<TransactionalProducer>>>
        created = CallOffThread<
            absl::StatusOr<std::unique_ptr<TransactionalProducer>>>(
            [options] { return TransactionalProducer::Create(options); },
            Deadline::After(init_timeout_));
    if (!created.has_value()) {
      Check(absl::DeadlineExceededError(absl::StrCat(
          "initialising transactions for \"", options_.transactional_id,
          "\" did not complete within init_timeout")));
    }
    return Take(std::move(*created));
  }

  // The SDK's producer has no flush of its own for the transactional
  // variant (commit flushes); wait for the in-flight count instead.
  absl::Status WaitInFlight(std::chrono::milliseconds timeout) {
    const auto until = Clock::now() + timeout;
    while (producer_->producer_stats().in_flight > 0) {
      if (Clock::now() >= until) {
        return MakeKafkaStatus(KafkaErrorFromCode(RD_KAFKA_RESP_ERR__TIMED_OUT),
                               "flush: records not yet reported");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return absl::OkStatus();
  }

  static absl::Status NoProducer() {
    return absl::FailedPreconditionError(
        "the producer has no librdkafka instance: a rebuild() was "
        "interrupted; call rebuild() again");
  }

  void CheckUsable() {
    CheckOpen();
    if (producer_ == nullptr) Check(NoProducer());
    if (!fatal_.ok()) ThrowStatus(fatal_);
  }

  absl::Status Track(absl::Status status) {
    if (IsFatal(status) && fatal_.ok()) fatal_ = status;
    return status;
  }

  void CountAbort(size_t cause) {
    ++aborted_;
    ++aborted_by_cause_[cause];
  }

  // Makes `call` (which blocks for at most kTxnSlice) until it stops
  // failing with a retriable error: at once after a timeout (resuming it),
  // after a back-off otherwise, at most retry_.max_retries times.
  absl::Status TxnCall(absl::FunctionRef<absl::Status()> call,
                       std::optional<double> timeout) {
    const Deadline deadline = Deadline::After(timeout);
    std::chrono::milliseconds backoff = retry_.initial_backoff;
    int retries = 0;
    for (;;) {
      const absl::Status status = WithoutGil([&] { return Track(call()); });
      Drain();
      if (NextTxnAction(status) != TxnAction::kRetry || deadline.expired()) {
        return status;
      }
      CheckSignals();
      if (KafkaErrorCode(status) == RD_KAFKA_RESP_ERR__TIMED_OUT) continue;
      if (++retries > retry_.max_retries) return status;
      ++retries_;
      InterruptibleSleep(std::min(backoff, deadline.Left()));
      backoff = std::min(backoff * 2, retry_.max_backoff);
    }
  }

  ProducerOptions options_;
  const RetryPolicy retry_;
  std::optional<double> init_timeout_;
  std::unique_ptr<TransactionalProducer> producer_;
  absl::Status fatal_;
  uint64_t committed_ = 0;
  uint64_t aborted_ = 0;
  uint64_t reruns_ = 0;
  uint64_t retries_ = 0;
  uint64_t rebuilds_ = 0;
  uint64_t epoch_bumps_ = 0;
  std::array<uint64_t, kAbortCauseCount> aborted_by_cause_{};
  std::array<uint64_t, kCommitLatencyBounds.size() + 1>
      commit_latency_counts_{};
  std::chrono::microseconds commit_latency_sum_{0};
};

template <typename T, typename Class>
void DefineProducerApi(Class& cls) {
  // send has the Python signature; exactly.Producer installs bound_send()
  // instead, the same call without pybind11's dispatcher (fast_send.h).
  cls.def("send", &T::Send, py::arg("topic"), py::arg("value") = py::none(),
          py::arg("key") = py::none(), py::kw_only(), py::arg("partition") = -1,
          py::arg("timestamp_ms") = 0, py::arg("headers") = py::none(),
          py::arg("on_delivery") = py::none(),
          "Queues one record (see exactly.Producer.send).")
      .def(
          "bound_send",
          [](py::object self) { return MakeFastSend(self.cast<T*>(), self); },
          "send, as a function bound to this producer that skips pybind11's "
          "dispatcher (exactly.Producer installs it as its send)")
      .def("send_future", &T::SendFuture, py::arg("topic"), py::arg("value"),
           py::arg("key"), py::arg("partition"), py::arg("timestamp_ms"),
           py::arg("headers"), py::arg("complete"))
      .def("complete_futures", &T::CompleteFutures, py::arg("timeout"))
      .def("loop_fd", &T::LoopFd)
      .def("loop_drain", &T::LoopDrain, py::arg("max_calls"))
      .def("send_batch", &T::SendBatch, py::arg("topic"), py::arg("records"),
           py::arg("partition"), py::arg("on_delivery"))
      .def("poll", &T::Poll, py::arg("timeout"))
      .def("flush", &T::Flush, py::arg("timeout"))
      .def("close", &T::Close, py::arg("timeout"))
      .def_property_readonly("closed", &T::closed)
      .def("stats", &T::Stats);
}

}  // namespace

void RegisterProducers(py::module_& m) {
  py::class_<PyProducer> producer(m, "Producer");
  producer.def(py::init<const Properties&, bool, bool, double, py::object,
                        py::object, py::object>(),
               py::arg("properties"), py::arg("unchecked"), py::arg("block"),
               py::arg("queue_full_timeout"), py::arg("on_delivery"),
               py::arg("on_error"), py::arg("on_statistics") = py::none());
  DefineProducerApi<PyProducer>(producer);

  py::class_<PyTransactionalProducer> txn(m, "TransactionalProducer");
  txn.def(py::init<const Properties&, bool, double, py::object, py::object,
                   py::handle, std::optional<double>, py::object>(),
          py::arg("properties"), py::arg("block"),
          py::arg("queue_full_timeout"), py::arg("on_delivery"),
          py::arg("on_error"), py::arg("retry"), py::arg("init_timeout"),
          py::arg("on_statistics") = py::none());
  DefineProducerApi<PyTransactionalProducer>(txn);
  txn.def("begin", &PyTransactionalProducer::Begin)
      .def("commit", &PyTransactionalProducer::Commit, py::arg("timeout"))
      .def("abort", &PyTransactionalProducer::Abort, py::arg("timeout"),
           py::arg("cause") = "requested")
      .def("send_offsets", &PyTransactionalProducer::SendOffsets,
           py::arg("offsets"), py::arg("group"), py::arg("timeout"))
      .def("rebuild", &PyTransactionalProducer::Rebuild)
      .def("count_rerun", &PyTransactionalProducer::CountRerun)
      .def_property_readonly("in_transaction",
                             &PyTransactionalProducer::in_transaction)
      .def_property_readonly("transactional_id",
                             &PyTransactionalProducer::transactional_id)
      .def("transaction_stats", &PyTransactionalProducer::TxnStats);
}

}  // namespace exactly::python
