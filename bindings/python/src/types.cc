// The value types (DeliveryReport, Message, ConsumerGroupMetadata) and the
// module-level helpers.
#include <librdkafka/rdkafka.h>

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "exactly/options.h"
#include "natives.h"

namespace exactly::python {
namespace {

std::string Repr(py::handle object) {
  return py::repr(object).cast<std::string>();
}

}  // namespace

py::object MakeMessage(const Message& message) {
  PyMessage out;
  out.topic = std::string(message.topic());
  out.partition = message.partition();
  out.offset = message.offset();
  out.timestamp_ms = message.timestamp_ms();
  out.key = BytesOrNone(message.key(), message.has_key());
  out.value = BytesOrNone(message.value(), message.has_value());
  py::list headers;
  for (const Header& h : message.headers()) {
    headers.append(py::make_tuple(
        py::str(h.key.data(), h.key.size()),
        BytesOrNone(h.value, h.value.data() != nullptr)));
  }
  out.headers = std::move(headers);
  return py::cast(std::move(out));
}

const ConsumerGroupMetadata& GroupMetadataArg(
    py::handle group, std::unique_ptr<ConsumerGroupMetadata>* holder) {
  if (py::isinstance<py::str>(group)) {
    *holder = std::make_unique<ConsumerGroupMetadata>(
        ConsumerGroupMetadata::ForGroup(group.cast<std::string>()));
    return **holder;
  }
  if (py::isinstance<PyGroupMetadata>(group)) {
    return *group.cast<PyGroupMetadata&>().metadata;
  }
  throw py::type_error(absl::StrCat(
      "group must be a Consumer, a ConsumerGroupMetadata or a group id (str), "
      "not ",
      Py_TYPE(group.ptr())->tp_name));
}

void RegisterTypes(py::module_& m) {
  py::class_<PyDeliveryReport>(m, "DeliveryReport",
                               "Where a sent record landed.")
      .def_readonly("topic", &PyDeliveryReport::topic)
      .def_readonly("partition", &PyDeliveryReport::partition)
      .def_readonly("offset", &PyDeliveryReport::offset)
      .def_readonly("timestamp_ms", &PyDeliveryReport::timestamp_ms)
      .def_readonly("key", &PyDeliveryReport::key)
      .def_readonly("value", &PyDeliveryReport::value)
      .def("__repr__", [](const PyDeliveryReport& r) {
        return absl::StrCat("DeliveryReport(topic=", Repr(py::str(r.topic)),
                            ", partition=", r.partition,
                            ", offset=", r.offset, ")");
      });

  py::class_<PyMessage>(m, "Message", "A consumed record.")
      .def_readonly("topic", &PyMessage::topic)
      .def_readonly("partition", &PyMessage::partition)
      .def_readonly("offset", &PyMessage::offset)
      .def_readonly("timestamp_ms", &PyMessage::timestamp_ms)
      .def_readonly("key", &PyMessage::key)
      .def_readonly("value", &PyMessage::value)
      .def_readonly("headers", &PyMessage::headers)
      .def(
          "header",
          [](const PyMessage& m, const std::string& name) -> py::object {
            py::object found = py::none();
            for (py::handle h : m.headers) {
              py::tuple pair = py::reinterpret_borrow<py::tuple>(h);
              if (pair[0].cast<std::string>() == name) {
                found = py::reinterpret_borrow<py::object>(pair[1]);
              }
            }
            return found;
          },
          py::arg("name"),
          "The value of the last header named `name`, or None.")
      .def_property_readonly(
          "topic_partition",
          [](const PyMessage& m) {
            return PackageAttr("exactly.types", "TopicPartition")(m.topic,
                                                                 m.partition);
          })
      .def(
          "next_offset",
          [](const PyMessage& m) {
            return PackageAttr("exactly.types", "TopicPartitionOffset")(
                m.topic, m.partition, m.offset + 1);
          },
          "(topic, partition, offset + 1): what to commit after this record.")
      .def("__repr__", [](const PyMessage& m) {
        return absl::StrCat("Message(topic=", Repr(py::str(m.topic)),
                            ", partition=", m.partition, ", offset=", m.offset,
                            ", key=", Repr(m.key), ", value=", Repr(m.value),
                            ")");
      });

  py::class_<PyGroupMetadata>(
      m, "ConsumerGroupMetadata",
      "A consumer's group membership, for TransactionalProducer.send_offsets.")
      .def_static(
          "for_group",
          [](const std::string& group_id) {
            return PyGroupMetadata(ConsumerGroupMetadata::ForGroup(group_id));
          },
          py::arg("group_id"));

  m.def(
      "kafka_errors",
      [] {
        const rd_kafka_err_desc* descs = nullptr;
        size_t count = 0;
        rd_kafka_get_err_descs(&descs, &count);
        py::list out;
        for (size_t i = 0; i < count; ++i) {
          if (descs[i].name == nullptr) continue;
          out.append(py::make_tuple(static_cast<int>(descs[i].code),
                                    descs[i].name,
                                    descs[i].desc != nullptr ? descs[i].desc
                                                             : ""));
        }
        return out;
      },
      "Every (code, name, description) librdkafka knows.");

  m.def(
      "producer_properties",
      [](const std::map<std::string, std::string>& properties, bool unchecked) {
        ProducerOptions options;
        options.properties = properties;
        options.mode = unchecked ? Mode::kUnchecked : Mode::kExactlyOnce;
        return Take(LibrdkafkaProperties(options));
      },
      py::arg("properties"), py::arg("unchecked") = false,
      "The librdkafka properties a producer is created with.");
  m.def(
      "consumer_properties",
      [](const std::map<std::string, std::string>& properties, bool unchecked) {
        ConsumerOptions options;
        options.properties = properties;
        options.mode = unchecked ? Mode::kUnchecked : Mode::kExactlyOnce;
        return Take(LibrdkafkaProperties(options));
      },
      py::arg("properties"), py::arg("unchecked") = false,
      "The librdkafka properties a consumer is created with.");
  m.attr("librdkafka_version") = rd_kafka_version_str();
}

}  // namespace exactly::python
