// on_statistics for the Python clients: librdkafka's statistics reports
// arrive on a thread that must not touch Python; the relay keeps the newest
// one, and the next call into the client (with the GIL) passes it to the
// Python callback as a str. Reports that come faster than the client is
// called are replaced: each is a whole snapshot.
#ifndef EXACTLY_BINDINGS_PYTHON_SRC_STATISTICS_H_
#define EXACTLY_BINDINGS_PYTHON_SRC_STATISTICS_H_

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "common.h"

namespace exactly::python {

class StatisticsRelay {
 public:
  // With `on_statistics` (None: nothing), sets `options`' on_statistics
  // (ProducerOptions, ConsumerOptions).
  template <typename Options>
  void Use(py::object on_statistics, Options* options) {
    if (on_statistics.is_none()) return;
    callback_ = std::move(on_statistics);
    options->on_statistics = [slot = slot_](std::string_view json) {
      std::lock_guard<std::mutex> lock(slot->mu);
      slot->json.assign(json);
      slot->fresh = true;
    };
  }

  // With the GIL: passes a report not passed on yet, if there is one (1)
  // or not (0). What the callback raises propagates.
  int Deliver() {
    if (callback_.is_none()) return 0;
    std::string json;
    {
      std::lock_guard<std::mutex> lock(slot_->mu);
      if (!slot_->fresh) return 0;
      slot_->fresh = false;
      json.swap(slot_->json);
    }
    callback_(py::str(json));
    return 1;
  }

 private:
  struct Slot {
    std::mutex mu;
    std::string json;
    bool fresh = false;
  };
  py::object callback_ = py::none();
  // Shared with the callback set in the options, which may outlive this.
  std::shared_ptr<Slot> slot_ = std::make_shared<Slot>();
};

}  // namespace exactly::python

#endif  // EXACTLY_BINDINGS_PYTHON_SRC_STATISTICS_H_
