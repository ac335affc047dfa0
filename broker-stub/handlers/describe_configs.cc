// DescribeConfigs: a topic's configs (every topic config Kafka defines, or the
// keys asked for) with their source as Kafka reports it: DYNAMIC_TOPIC_CONFIG
// for the topic's overrides, otherwise the source of the broker config it
// defaults from (DEFAULT_CONFIG, or STATIC_BROKER_CONFIG when the broker was
// started with it), with synonyms from v1 when asked and IsDefault in v0; a
// dynamic broker config the topic inherits shows as DYNAMIC_BROKER_CONFIG or
// DYNAMIC_DEFAULT_BROKER_CONFIG. A BROKER resource named by this broker's id
// lists the broker's configs with their dynamic values first (synonyms in
// Kafka's order: DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG,
// STATIC_BROKER_CONFIG, DEFAULT_CONFIG; read-only unless dynamic); "" lists
// the cluster-wide dynamic defaults. Other broker ids get INVALID_REQUEST, as
// from Kafka.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cluster/dynamic_broker_config.h"
#include "controller/controller.h"
#include "handlers/admin_handlers.h"

namespace exactly::broker {

namespace {

using protocol::DescribeConfigsRequest;
using protocol::DescribeConfigsResponse;
using protocol::ErrorCode;

struct BrokerConfig {
  std::string name;
  std::string value;
  int8_t source;
};

// Kafka's defaults of the broker settings this broker reports as started
// with: one at Kafka's default reads as DEFAULT_CONFIG, as from a Kafka broker
// whose server.properties does not set it.
std::string_view KafkaBrokerDefault(std::string_view name) {
  static const auto* defaults =
      new std::map<std::string_view, std::string_view>{
          {"auto.create.topics.enable", "true"},
          {"default.replication.factor", "1"},
          {"group.initial.rebalance.delay.ms", "3000"},
          {"group.max.session.timeout.ms", "1800000"},
          {"group.min.session.timeout.ms", "6000"},
          {"num.partitions", "1"},
          {"offsets.topic.replication.factor", "3"},
          {"socket.request.max.bytes", "104857600"},
          {"transaction.max.timeout.ms", "900000"},
          {"transaction.state.log.min.isr", "2"},
          {"transaction.state.log.replication.factor", "3"},
      };
  auto it = defaults->find(name);
  return it == defaults->end() ? std::string_view() : it->second;
}

// This broker's configs under Kafka's names: what it was started with
// (STATIC_BROKER_CONFIG, or DEFAULT_CONFIG at Kafka's default) and the
// broker-level defaults of the topic configs (DEFAULT_CONFIG), sorted by name.
std::vector<BrokerConfig> BrokerConfigs(const BrokerState& b) {
  const BrokerOptions& o = b.options();
  std::vector<BrokerConfig> out;
  auto add = [&](std::string name, std::string value,
                 int8_t source = kSourceStaticBrokerConfig) {
    if (source == kSourceStaticBrokerConfig &&
        KafkaBrokerDefault(name) == value) {
      source = kSourceDefaultConfig;
    }
    out.push_back({std::move(name), std::move(value), source});
  };
  std::string listener =
      absl::StrCat("PLAINTEXT://", o.host, ":", b.advertised_port());
  add("advertised.listeners", absl::StrCat("PLAINTEXT://", b.advertised_host(),
                                           ":", b.advertised_port()));
  add("auto.create.topics.enable", o.auto_create_topics ? "true" : "false");
  add("broker.id", absl::StrCat(o.node_id));
  add("delete.topic.enable", "true", kSourceDefaultConfig);
  const Controller* controller = b.controller();
  if (controller != nullptr) {
    add("default.replication.factor",
        absl::StrCat(controller->options().default_replication_factor));
  } else {
    add("default.replication.factor", "1", kSourceDefaultConfig);
  }
  add("group.initial.rebalance.delay.ms",
      absl::StrCat(o.group_initial_rebalance_delay_ms));
  add("group.max.session.timeout.ms",
      absl::StrCat(o.group_max_session_timeout_ms));
  add("group.min.session.timeout.ms",
      absl::StrCat(o.group_min_session_timeout_ms));
  add("listeners", listener);
  if (!o.data_dir.empty()) add("log.dirs", o.data_dir);
  add("num.partitions", absl::StrCat(o.default_partitions));
  add("offsets.topic.replication.factor", "1");
  add("socket.request.max.bytes", absl::StrCat(o.max_frame_bytes));
  add("transaction.max.timeout.ms", absl::StrCat(o.transaction_max_timeout_ms));
  add("transaction.state.log.min.isr", "1");
  add("transaction.state.log.replication.factor", "1");
  for (const TopicConfigDefinition& d : TopicConfigDefinitions()) {
    if (d.broker_synonym.empty()) continue;
    std::string name(d.broker_synonym);
    if (name == "log.flush.interval.messages" && o.flush.every_messages > 0) {
      add(name, absl::StrCat(o.flush.every_messages));
    } else if (name == "log.flush.interval.ms" && o.flush.every_ms > 0) {
      add(name, absl::StrCat(o.flush.every_ms));
    } else if (name == "min.insync.replicas" && o.min_insync_replicas != 1) {
      add(name, absl::StrCat(o.min_insync_replicas));
    } else if (name == "unclean.leader.election.enable" &&
               controller != nullptr &&
               controller->options().unclean_leader_election) {
      add(name, "true");
    } else {
      add(name, std::string(d.default_value), kSourceDefaultConfig);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const BrokerConfig& x, const BrokerConfig& y) {
              return x.name < y.name;
            });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const BrokerConfig& x, const BrokerConfig& y) {
                          return x.name == y.name;
                        }),
            out.end());
  return out;
}

const BrokerConfig* FindBrokerConfig(const std::vector<BrokerConfig>& configs,
                                     std::string_view name) {
  for (const BrokerConfig& c : configs) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

bool Wanted(const DescribeConfigsRequest::Resource& resource,
            std::string_view name) {
  // Kafka: a null or empty key list asks for every config.
  if (!resource.configuration_keys || resource.configuration_keys->empty())
    return true;
  const auto& keys = *resource.configuration_keys;
  return std::find(keys.begin(), keys.end(), name) != keys.end();
}

DescribeConfigsResponse::Config MakeConfig(
    std::string name, std::string value,
    std::vector<DescribeConfigsResponse::Synonym> synonyms, bool read_only,
    bool include_synonyms) {
  DescribeConfigsResponse::Config c;
  c.name = std::move(name);
  c.value = std::move(value);
  c.read_only = read_only;
  // The first synonym is where the value comes from (Kafka's ConfigHelper).
  c.config_source =
      synonyms.empty() ? kSourceDefaultConfig : synonyms.front().source;
  c.is_default = c.config_source == kSourceDefaultConfig;
  if (include_synonyms) c.synonyms = std::move(synonyms);
  return c;
}

void DescribeTopic(const Topic& topic, const std::vector<BrokerConfig>& broker,
                   const DynamicBrokerConfigs& dynamic,
                   const DescribeConfigsRequest::Resource& resource,
                   bool include_synonyms,
                   DescribeConfigsResponse::Result& result) {
  for (const TopicConfigDefinition& d : TopicConfigDefinitions()) {
    if (!Wanted(resource, d.name)) continue;
    std::vector<DescribeConfigsResponse::Synonym> synonyms;
    std::string value(d.default_value);
    if (topic.config.IsExplicit(d.name)) {
      value = topic.config.Get(d.name);
      synonyms.push_back({std::string(d.name), value, kSourceTopicConfig, {}});
    }
    if (!d.broker_synonym.empty() &&
        topic.config.FindInherited(d.name) != nullptr) {
      // Inherited from a dynamic broker config: its layers, highest first.
      std::string synonym(d.broker_synonym);
      for (const auto& [layer, source] :
           {std::pair(&dynamic.per_broker, kSourceDynamicBrokerConfig),
            std::pair(&dynamic.cluster_default,
                      kSourceDynamicDefaultBrokerConfig)}) {
        auto it = layer->find(synonym);
        if (it == layer->end()) continue;
        if (synonyms.empty()) value = it->second;
        synonyms.push_back({synonym, it->second, source, {}});
      }
    }
    if (const BrokerConfig* bc = FindBrokerConfig(broker, d.broker_synonym)) {
      if (synonyms.empty()) value = bc->value;
      synonyms.push_back({bc->name, bc->value, bc->source, {}});
    }
    result.configs.push_back(MakeConfig(std::string(d.name), std::move(value),
                                        std::move(synonyms),
                                        /*read_only=*/false, include_synonyms));
  }
}

// Kafka hides the values of password configs (and of a JAAS config).
bool Sensitive(const std::string& name) {
  return absl::EndsWith(name, ".password") ||
         absl::EndsWith(name, "sasl.jaas.config");
}

// A BROKER resource: this broker's own (`per_broker`: every config, the
// dynamic values first) or the cluster-wide default (only the configs set
// there, with that value as its only synonym), as Kafka 3.9 lists them.
void DescribeBroker(const std::vector<BrokerConfig>& broker,
                    const DynamicBrokerConfigs& dynamic, bool per_broker,
                    const DescribeConfigsRequest::Resource& resource,
                    bool include_synonyms,
                    DescribeConfigsResponse::Result& result) {
  std::set<std::string> names;
  for (const auto& entry : dynamic.cluster_default) names.insert(entry.first);
  if (per_broker) {
    for (const auto& entry : dynamic.per_broker) names.insert(entry.first);
    for (const BrokerConfig& bc : broker) names.insert(bc.name);
  }
  for (const std::string& name : names) {
    if (!Wanted(resource, name)) continue;
    const bool sensitive = Sensitive(name);
    auto shown = [&](const std::string& v) {
      return sensitive ? std::optional<std::string>() : v;
    };
    std::vector<DescribeConfigsResponse::Synonym> synonyms;
    if (per_broker) {
      if (auto it = dynamic.per_broker.find(name);
          it != dynamic.per_broker.end())
        synonyms.push_back(
            {name, shown(it->second), kSourceDynamicBrokerConfig, {}});
    }
    if (auto it = dynamic.cluster_default.find(name);
        it != dynamic.cluster_default.end())
      synonyms.push_back(
          {name, shown(it->second), kSourceDynamicDefaultBrokerConfig, {}});
    std::optional<std::string> value =
        synonyms.empty() ? std::nullopt : synonyms.front().value;
    // The cluster-wide default lists its own value only (as Kafka does).
    const BrokerConfig* bc =
        per_broker ? FindBrokerConfig(broker, name) : nullptr;
    if (bc != nullptr) {
      if (synonyms.empty()) value = shown(bc->value);
      synonyms.push_back({bc->name, shown(bc->value), bc->source, {}});
    }
    const DynamicMode mode = BrokerConfigMode(name);
    const bool read_only =
        mode != DynamicMode::kClusterWide && mode != DynamicMode::kPerBroker;
    DescribeConfigsResponse::Config c =
        MakeConfig(name, "", std::move(synonyms), read_only, include_synonyms);
    c.value = std::move(value);
    c.is_sensitive = sensitive;
    result.configs.push_back(std::move(c));
  }
}

}  // namespace

ApiError CheckBrokerResourceName(const BrokerState& b, const std::string& name,
                                 bool allow_empty) {
  if (name.empty()) {
    if (allow_empty) return {};
    return Error(ErrorCode::kInvalidRequest, "Broker id must not be empty");
  }
  int32_t id = 0;
  if (!absl::SimpleAtoi(name, &id)) {
    return Error(
        ErrorCode::kInvalidRequest,
        absl::StrCat("Broker id must be an integer, but it is: ", name));
  }
  if (id != b.options().node_id) {
    return Error(
        ErrorCode::kInvalidRequest,
        absl::StrCat("Unexpected broker id, expected ", b.options().node_id,
                     allow_empty ? " or empty string" : "", ", but received ",
                     name));
  }
  return {};
}

void HandleDescribeConfigs(BrokerState& b, const RequestHeader& h,
                           DescribeConfigsRequest& request, Responder r) {
  DescribeConfigsResponse response;
  const bool include_synonyms = h.api_version >= 1 && request.include_synonyms;
  const std::vector<BrokerConfig> broker = BrokerConfigs(b);
  for (const DescribeConfigsRequest::Resource& resource : request.resources) {
    DescribeConfigsResponse::Result& result = response.results.emplace_back();
    result.resource_type = resource.resource_type;
    result.resource_name = resource.resource_name;
    ApiError error;
    if (auto injected =
            b.faults().TakeError(h.api_key, &resource.resource_name)) {
      error = Error(static_cast<ErrorCode>(*injected), "injected fault");
    } else if (ApiError denied = ConfigsAuthorization(
                   b, r, AclOperation::kDescribeConfigs, resource.resource_type,
                   resource.resource_name);
               !denied.ok()) {
      error = std::move(denied);
    } else if (resource.resource_type == kResourceTopic) {
      if (absl::Status s = ValidateTopicName(resource.resource_name); !s.ok()) {
        error =
            Error(ErrorCode::kInvalidTopicException, std::string(s.message()));
      } else if (const Topic* topic = b.topics().Find(resource.resource_name)) {
        DescribeTopic(*topic, broker, b.dynamic_configs(), resource,
                      include_synonyms, result);
      } else {
        error = Error(ErrorCode::kUnknownTopicOrPartition,
                      absl::StrCat("The topic '", resource.resource_name,
                                   "' does not exist."));
      }
    } else if (resource.resource_type == kResourceBroker) {
      error = CheckBrokerResourceName(b, resource.resource_name,
                                      /*allow_empty=*/true);
      // "" names the cluster-wide dynamic defaults.
      if (error.ok()) {
        DescribeBroker(broker, b.dynamic_configs(),
                       /*per_broker=*/!resource.resource_name.empty(), resource,
                       include_synonyms, result);
      }
    } else if (resource.resource_type == kResourceBrokerLogger) {
      // No logger levels can be set on this broker: an empty list.
      error = CheckBrokerResourceName(b, resource.resource_name,
                                      /*allow_empty=*/false);
    } else {
      error = Error(ErrorCode::kInvalidRequest,
                    absl::StrCat("Unsupported resource type: ",
                                 static_cast<int>(resource.resource_type)));
    }
    result.error_code = error.code_value();
    result.error_message = error.message_or_null();
  }
  // Answered once what it describes is durable (a config altered in this turn
  // of the loop is committed with it).
  b.commits().AfterCommit(
      [response = std::move(response),
       r = std::move(r)](const absl::Status&) mutable { r.Send(response); });
}

}  // namespace exactly::broker
