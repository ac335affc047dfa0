// on_statistics for the Python clients: librdkafka's statistics reports
// arrive on a thread that must not touch Python; the relay keeps the newest
// one, and the next call into the client (with the GIL) passes it to the
// Python callback as a str. Reports that come faster than the client is
// called are replaced: each is a whole snapshot. The newest is kept per
// librdkafka client (the report's "name"): a Processor has two, its
// consumer and its producer, whose reports must not replace each other.
#ifndef EXACTLY_BINDINGS_PYTHON_SRC_STATISTICS_H_
#define EXACTLY_BINDINGS_PYTHON_SRC_STATISTICS_H_

#include <map>
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
  // (ProducerOptions, ConsumerOptions, ProcessorOptions).
  template <typename Options>
  void Use(py::object on_statistics, Options* options) {
    if (on_statistics.is_none()) return;
    callback_ = std::move(on_statistics);
    options->on_statistics = [slot = slot_](std::string_view json) {
      std::string client = ClientName(json);
      std::lock_guard<std::mutex> lock(slot->mu);
      slot->fresh[std::move(client)].assign(json);
    };
  }

  // With the GIL: passes the reports not passed on yet (the newest of each
  // client), returning how many. What the callback raises propagates (the
  // reports after it are dropped).
  int Deliver() {
    if (callback_.is_none()) return 0;
    std::map<std::string, std::string> fresh;
    {
      std::lock_guard<std::mutex> lock(slot_->mu);
      if (slot_->fresh.empty()) return 0;
      fresh.swap(slot_->fresh);
    }
    for (const auto& [client, json] : fresh) callback_(py::str(json));
    return static_cast<int>(fresh.size());
  }

 private:
  // The report's first "name" (librdkafka writes the client's first), or
  // "" if it has none.
  static std::string ClientName(std::string_view json) {
    const size_t key = json.find("\"name\"");
    if (key == std::string_view::npos) return "";
    const size_t open = json.find('"', key + 6);
    if (open == std::string_view::npos) return "";
    const size_t close = json.find('"', open + 1);
    if (close == std::string_view::npos) return "";
    return std::string(json.substr(open + 1, close - open - 1));
  }

  struct Slot {
    std::mutex mu;
    std::map<std::string, std::string> fresh;  // by client name
  };
  py::object callback_ = py::none();
  // Shared with the callback set in the options, which may outlive this.
  std::shared_ptr<Slot> slot_ = std::make_shared<Slot>();
};

}  // namespace exactly::python

#endif  // EXACTLY_BINDINGS_PYTHON_SRC_STATISTICS_H_
