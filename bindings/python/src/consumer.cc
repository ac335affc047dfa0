// exactly._exactly.Consumer.
//
// poll() waits in slices with the GIL released. Rebalance listeners and
// async-commit callbacks run inside the SDK's Poll, i.e. on the caller's
// thread; they take the GIL back for the Python call. An exception they
// raise is kept and raised by the poll() (or commit, or close) that ran
// them; a record that poll fetched meanwhile is kept for the next poll.
//
// A synchronous commit is an asynchronous one plus polling until its result
// arrives (records fetched meanwhile are kept for the next polls), so that
// it too is sliced and Ctrl-C interrupts it. The offsets it commits are
// computed here, from the records handed to Python, never from records that
// are still kept back.
#include "exactly/consumer.h"

#include <librdkafka/rdkafka.h>

#include <deque>
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
#include "statistics.h"

namespace exactly::python {
namespace {

using Properties = std::map<std::string, std::string>;

class PyConsumer {
 public:
  PyConsumer(const Properties& properties, bool unchecked, py::object on_error,
             py::object on_statistics)
      : on_error_(std::move(on_error)) {
    ConsumerOptions options;
    options.properties = properties;
    auto take = [&](const char* name, std::string* field) {
      auto it = options.properties.find(name);
      if (it == options.properties.end()) return;
      *field = it->second;
      options.properties.erase(it);
    };
    take("bootstrap.servers", &options.bootstrap_servers);
    take("group.id", &options.group_id);
    take("client.id", &options.client_id);
    options.mode = unchecked ? Mode::kUnchecked : Mode::kExactlyOnce;
    if (!on_error_.is_none()) {
      CallbackQueue* queue = queue_.get();
      options.on_error = [queue](const absl::Status& s) {
        queue->PushError(s);
      };
    }
    statistics_.Use(std::move(on_statistics), &options);
    consumer_ = Take(Consumer::Create(options));
  }

  ~PyConsumer() {
    if (consumer_ == nullptr) return;
    py::gil_scoped_release release;
    consumer_.reset();  // leaves the group; listeners may run
  }

  void Subscribe(const std::vector<std::string>& topics, py::object on_assign,
                 py::object on_revoke, py::object on_lost) {
    CheckOpen();
    on_assign_ = std::move(on_assign);
    on_revoke_ = std::move(on_revoke);
    on_lost_ = std::move(on_lost);
    Check(consumer_->Subscribe(topics, std::make_shared<Listener>(this)));
  }

  void Unsubscribe() {
    CheckOpen();
    const absl::Status status =
        WithoutGil([&] { return consumer_->Unsubscribe(); });
    AfterCallbacks();
    Check(status);
  }

  py::object Poll(std::optional<double> timeout) {
    CheckOpen();
    if (!kept_.empty()) return TakeKept();
    CallInSlices(
        Deadline::After(timeout), kSlice,
        [&](std::chrono::milliseconds slice) { return consumer_->Poll(slice); },
        [&](const absl::StatusOr<std::optional<Message>>& polled) {
          if (polled.ok() && polled->has_value()) Keep(MakeMessage(**polled));
          AfterCallbacks();
          if (!polled.ok()) ThrowStatus(polled.status());
          return !kept_.empty();
        })
        .IgnoreError();  // an error was raised above
    return kept_.empty() ? py::none() : TakeKept();
  }

  py::list PollBatch(size_t max_records, std::optional<double> timeout) {
    CheckOpen();
    py::list out;
    while (!kept_.empty() && out.size() < max_records) out.append(TakeKept());
    if (out.size() > 0 || max_records == 0) return out;
    CallInSlices(
        Deadline::After(timeout), kSlice,
        [&](std::chrono::milliseconds slice) {
          return consumer_->PollBatch(max_records, slice);
        },
        [&](const absl::StatusOr<std::vector<Message>>& polled) {
          if (polled.ok()) {
            for (const Message& m : *polled) Keep(MakeMessage(m));
          }
          AfterCallbacks();
          if (!polled.ok()) ThrowStatus(polled.status());
          while (!kept_.empty() && out.size() < max_records) {
            out.append(TakeKept());
          }
          return out.size() > 0;
        })
        .IgnoreError();  // an error was raised above
    return out;
  }

  void Commit(py::handle offsets, bool asynchronous, py::object on_commit) {
    CheckOpen();
    std::vector<TopicPartitionOffset> list =
        offsets.is_none() ? HandedOutPositions() : ToOffsets(offsets);
    if (list.empty()) {
      if (!on_commit.is_none()) on_commit(py::none());
      return;
    }
    if (in_listener_) {
      // Inside a rebalance listener (which runs inside poll): librdkafka's
      // synchronous commit, the usual way to commit on revocation.
      const absl::Status status =
          WithoutGil([&] { return consumer_->Commit(list); });
      if (!on_commit.is_none()) on_commit(ErrorOrNone(status));
      if (!asynchronous) Check(status);
      return;
    }
    if (asynchronous) {
      CommitCallback done;
      if (!on_commit.is_none()) {
        PyObject* callback = on_commit.release().ptr();  // to the queue
        CallbackQueue* queue = queue_.get();
        done = [queue, callback](const absl::Status& status) {
          QueuedCall call;
          call.callback = callback;
          call.kind = QueuedCall::Kind::kResult;
          call.status = status;
          queue->Push(std::move(call));
        };
        absl::Status status = consumer_->CommitAsync(list, std::move(done));
        if (!status.ok()) {
          Py_DECREF(callback);
          ThrowStatus(status);
        }
        return;
      }
      Check(consumer_->CommitAsync(list));
      return;
    }
    // Synchronous: commit asynchronously and poll until the result is in.
    auto result = std::make_shared<std::optional<absl::Status>>();
    Check(consumer_->CommitAsync(
        list, [result](const absl::Status& status) { *result = status; }));
    while (!result->has_value()) {
      const absl::StatusOr<std::optional<Message>> polled =
          WithoutGil([&] { return consumer_->Poll(kSlice); });
      if (polled.ok() && polled->has_value()) Keep(MakeMessage(**polled));
      AfterCallbacks();
      if (!polled.ok()) ThrowStatus(polled.status());
      if (!result->has_value()) CheckSignals();
    }
    if (!on_commit.is_none()) on_commit(ErrorOrNone(**result));
    Check(**result);
  }

  void Seek(const std::string& topic, int32_t partition, int64_t offset,
            std::optional<double> timeout) {
    CheckOpen();
    DropKept([&](const PyMessage& m) {
      return m.topic == topic && m.partition == partition;
    });
    Check(WithoutGil([&] {
      const double seconds = timeout.value_or(10.0);
      return consumer_->Seek(
          {topic, partition, offset},
          std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
    }));
  }

  py::list Position() {
    CheckOpen();
    return FromOffsets(HandedOutPositions(/*all=*/true));
  }

  py::list Committed(std::optional<double> timeout) {
    CheckOpen();
    return FromOffsets(Take(WithoutGil([&] {
      const double seconds = timeout.value_or(10.0);
      return consumer_->Committed(
          std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
    })));
  }

  py::list Assignment() {
    CheckOpen();
    return FromPartitions(Take(consumer_->Assignment()));
  }

  PyGroupMetadata GroupMetadata() {
    CheckOpen();
    return PyGroupMetadata(Take(consumer_->GroupMetadata()));
  }

  void Close() {
    if (consumer_ == nullptr || closed_) return;
    closed_ = true;
    const absl::Status status = WithoutGil([&] { return consumer_->Close(); });
    kept_.clear();
    AfterCallbacks();
    Check(status);
  }

  bool closed() const { return closed_; }

 private:
  // Runs the Python listeners, inside the SDK's Poll/Close.
  class Listener final : public RebalanceListener {
   public:
    explicit Listener(PyConsumer* consumer) : consumer_(consumer) {}
    void OnAssigned(const std::vector<TopicPartition>& partitions) override {
      consumer_->CallListener(consumer_->on_assign_, partitions, false);
    }
    void OnRevoked(const std::vector<TopicPartition>& partitions) override {
      consumer_->CallListener(consumer_->on_revoke_, partitions, true);
    }
    void OnLost(const std::vector<TopicPartition>& partitions) override {
      consumer_->CallListener(consumer_->on_lost_.is_none()
                                  ? consumer_->on_revoke_
                                  : consumer_->on_lost_,
                              partitions, true);
    }

   private:
    PyConsumer* consumer_;
  };

  void CallListener(const py::object& callback,
                    const std::vector<TopicPartition>& partitions,
                    bool revoked) {
    py::gil_scoped_acquire gil;
    if (revoked) {
      // Records kept back from revoked partitions are no longer ours.
      DropKept([&](const PyMessage& m) {
        for (const TopicPartition& tp : partitions) {
          if (tp.topic == m.topic && tp.partition == m.partition) return true;
        }
        return false;
      });
    }
    if (callback.is_none()) return;
    in_listener_ = true;
    try {
      callback(FromPartitions(partitions));
    } catch (py::error_already_set& e) {
      if (!raised_) raised_ = std::make_unique<py::error_already_set>(e);
    }
    in_listener_ = false;
  }

  void CheckOpen() const {
    if (closed_ || consumer_ == nullptr) {
      Check(absl::FailedPreconditionError("the consumer is closed"));
    }
  }

  // After the SDK ran callbacks: queued errors to on_error, then what a
  // listener raised, then a statistics report to on_statistics.
  void AfterCallbacks() {
    if (!queue_->empty()) queue_->Drain(py::none(), on_error_);
    if (raised_ != nullptr) {
      std::unique_ptr<py::error_already_set> raised = std::move(raised_);
      throw *raised;
    }
    statistics_.Deliver();
  }

  void Keep(py::object message) { kept_.push_back(std::move(message)); }
  py::object TakeKept() {
    py::object m = std::move(kept_.front());
    kept_.pop_front();
    return m;
  }
  template <typename Pred>
  void DropKept(Pred pred) {
    std::deque<py::object> left;
    for (py::object& m : kept_) {
      if (!pred(m.cast<const PyMessage&>())) left.push_back(std::move(m));
    }
    kept_ = std::move(left);
  }

  // The next offset to read per assigned partition, as far as Python has
  // seen: librdkafka's position, moved back to the first record kept here.
  // Without `all`, only partitions with a valid position.
  std::vector<TopicPartitionOffset> HandedOutPositions(bool all = false) {
    std::vector<TopicPartitionOffset> positions = Take(consumer_->Position());
    for (const py::object& object : kept_) {
      const PyMessage& m = object.cast<const PyMessage&>();
      for (TopicPartitionOffset& p : positions) {
        if (p.topic == m.topic && p.partition == m.partition &&
            (p.offset < 0 || m.offset < p.offset)) {
          p.offset = m.offset;
        }
      }
    }
    if (all) return positions;
    std::vector<TopicPartitionOffset> valid;
    for (TopicPartitionOffset& p : positions) {
      if (p.offset >= 0) valid.push_back(std::move(p));
    }
    return valid;
  }

  // Declared first: destroyed after consumer_, whose callbacks push here.
  std::shared_ptr<CallbackQueue> queue_ = std::make_shared<CallbackQueue>();
  py::object on_error_;
  // librdkafka's reports come inside the SDK's Poll; passed on after it.
  StatisticsRelay statistics_;
  py::object on_assign_ = py::none();
  py::object on_revoke_ = py::none();
  py::object on_lost_ = py::none();
  std::deque<py::object> kept_;  // fetched, not yet handed to Python
  std::unique_ptr<py::error_already_set> raised_;
  bool in_listener_ = false;
  bool closed_ = false;
  std::unique_ptr<Consumer> consumer_;
};

}  // namespace

void RegisterConsumer(py::module_& m) {
  py::class_<PyConsumer>(m, "Consumer")
      .def(py::init<const Properties&, bool, py::object, py::object>(),
           py::arg("properties"), py::arg("unchecked"), py::arg("on_error"),
           py::arg("on_statistics") = py::none())
      .def("subscribe", &PyConsumer::Subscribe, py::arg("topics"),
           py::arg("on_assign"), py::arg("on_revoke"), py::arg("on_lost"))
      .def("unsubscribe", &PyConsumer::Unsubscribe)
      .def("poll", &PyConsumer::Poll, py::arg("timeout"))
      .def("poll_batch", &PyConsumer::PollBatch, py::arg("max_records"),
           py::arg("timeout"))
      .def("commit", &PyConsumer::Commit, py::arg("offsets"),
           py::arg("asynchronous"), py::arg("on_commit"))
      .def("seek", &PyConsumer::Seek, py::arg("topic"), py::arg("partition"),
           py::arg("offset"), py::arg("timeout"))
      .def("position", &PyConsumer::Position)
      .def("committed", &PyConsumer::Committed, py::arg("timeout"))
      .def("assignment", &PyConsumer::Assignment)
      .def("group_metadata", &PyConsumer::GroupMetadata)
      .def("close", &PyConsumer::Close)
      .def_property_readonly("closed", &PyConsumer::closed);
}

}  // namespace exactly::python
