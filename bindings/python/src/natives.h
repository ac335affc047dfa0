// The extension's types that more than one file needs, and the functions
// that register each part with the module.
#ifndef EXACTLY_BINDINGS_PYTHON_SRC_NATIVES_H_
#define EXACTLY_BINDINGS_PYTHON_SRC_NATIVES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "common.h"
#include "exactly/group_metadata.h"
#include "exactly/message.h"

namespace exactly::python {

// exactly.DeliveryReport: where a record landed (offset -1001 if it failed).
struct PyDeliveryReport {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp_ms = 0;
  py::object key;
  py::object value;
};

// exactly.Message: a consumed record, copied out of librdkafka (so it may
// outlive its consumer).
struct PyMessage {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp_ms = -1;
  py::object key;      // bytes or None
  py::object value;    // bytes or None
  py::object headers;  // list of (str, bytes | None)
};
py::object MakeMessage(const Message& message);

// exactly.ConsumerGroupMetadata, for send_offsets.
struct PyGroupMetadata {
  explicit PyGroupMetadata(ConsumerGroupMetadata m)
      : metadata(std::make_unique<ConsumerGroupMetadata>(std::move(m))) {}
  std::unique_ptr<ConsumerGroupMetadata> metadata;
};
// A PyGroupMetadata, or a str group id (ConsumerGroupMetadata::ForGroup),
// as the SDK's type; `holder` keeps a temporary alive.
const ConsumerGroupMetadata& GroupMetadataArg(
    py::handle group, std::unique_ptr<ConsumerGroupMetadata>* holder);

void RegisterTypes(py::module_& m);
void RegisterProducers(py::module_& m);
void RegisterConsumer(py::module_& m);
void RegisterProcessor(py::module_& m);
void RegisterBroker(py::module_& m);
void RegisterSpool(py::module_& m);

}  // namespace exactly::python

#endif  // EXACTLY_BINDINGS_PYTHON_SRC_NATIVES_H_
