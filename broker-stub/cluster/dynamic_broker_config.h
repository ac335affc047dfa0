// Dynamic broker configs (Kafka's KIP-226): broker settings changed while the
// brokers run, through AlterConfigs / IncrementalAlterConfigs on the BROKER
// resource. Two layers above what a broker was started with: the cluster-wide
// default (resource name "", source DYNAMIC_DEFAULT_BROKER_CONFIG) and one
// broker's own (resource name its id, DYNAMIC_BROKER_CONFIG), which wins.
//
// Which names may change follows Kafka's DynamicBrokerConfig: the broker
// defaults of the topic configs (log.retention.ms, message.max.bytes,
// min.insync.replicas, log.cleanup.policy...), the log cleaner's and the
// thread pools' sizes, connection limits, listener and SSL settings (those
// per broker only), and the like. A static setting Kafka defines (broker.id,
// log.dirs, num.partitions...) is refused; a name Kafka does not define is
// accepted and stored, as Kafka does. Refusals are INVALID_REQUEST, Kafka's
// answer for a change its DynamicBrokerConfig.validate turns down.
//
// Effect: the topic-config defaults reach every topic that does not override
// them at once (precedence: topic override > this broker's dynamic value >
// the cluster-wide dynamic value > what the broker was started with > the
// default), so retention, max.message.bytes, min.insync.replicas,
// cleanup.policy, message.timestamp.type and the compaction settings act on
// them; the others (thread counts, connection limits, listener settings...)
// are stored and described only.
//
// Durable: in the store with --data-dir; in a cluster, in the controller's
// state, and every broker takes them from the controller's metadata.
#ifndef EXACTLY_BROKER_CLUSTER_DYNAMIC_BROKER_CONFIG_H_
#define EXACTLY_BROKER_CLUSTER_DYNAMIC_BROKER_CONFIG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/api_error.h"

namespace exactly::broker {

class BrokerState;
struct ConfigChange;

// The dynamic values one broker goes by.
struct DynamicBrokerConfigs {
  std::map<std::string, std::string> cluster_default;  // resource ""
  std::map<std::string, std::string> per_broker;       // resource "<id>"

  bool operator==(const DynamicBrokerConfigs&) const = default;
};

// How Kafka treats a broker config name in a dynamic change.
enum class DynamicMode : int8_t {
  kUnknown,      // not a Kafka config: accepted and stored
  kStatic,       // a config Kafka defines that cannot change while it runs
  kClusterWide,  // dynamic, on a broker or the cluster-wide default
  kPerBroker,    // dynamic on one broker only
};
DynamicMode BrokerConfigMode(std::string_view name);

// The topic config a broker config is the default of ("" if none).
std::string_view TopicConfigOf(std::string_view broker_config);

// Checks the whole set of dynamic configs a resource would have (Kafka's
// DynamicBrokerConfig.validate): `per_broker` for a broker's own resource.
ApiError ValidateDynamicBrokerConfigs(
    const std::map<std::string, std::string>& configs, bool per_broker);

// AlterConfigs (`replace_all`: the changes, all kSet, become the resource's
// whole dynamic set) or IncrementalAlterConfigs on BROKER resource
// `resource_name` ("" or this broker's id, checked by the caller). Nothing
// changes unless the result is valid, or with `validate_only`. In a cluster
// the controller keeps the change and every broker takes it up from its
// metadata; alone, the broker keeps it in its store.
ApiError AlterBrokerConfigs(BrokerState& b, const std::string& resource_name,
                            const std::vector<ConfigChange>& changes,
                            bool replace_all, bool validate_only);

// Makes `configs` this broker's dynamic configs: every topic inherits the
// topic-config defaults among them at once, and retention runs (unless
// `enforce_retention` is false: at startup, before the logs are loaded).
void ApplyDynamicBrokerConfigs(BrokerState& b, DynamicBrokerConfigs configs,
                               bool enforce_retention = true);
// Reads this broker's dynamic configs from its store (in Load).
DynamicBrokerConfigs LoadDynamicBrokerConfigs(BrokerState& b);

// The durable form of one resource's dynamic configs (single broker store).
std::string EncodeDynamicConfigs(const std::map<std::string, std::string>& m);
std::map<std::string, std::string> DecodeDynamicConfigs(std::string_view v);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_CLUSTER_DYNAMIC_BROKER_CONFIG_H_
