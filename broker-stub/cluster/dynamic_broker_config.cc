#include "cluster/dynamic_broker_config.h"

#include <algorithm>
#include <memory>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cluster/cluster_membership.h"
#include "cluster/retention.h"
#include "cluster/topic_admin.h"
#include "controller/controller.h"
#include "storage/keys.h"
#include "util/logging.h"

namespace exactly::broker {

namespace {

using protocol::ErrorCode;

// Kafka's DynamicBrokerConfig.AllDynamicConfigs other than the topic-config
// defaults (those come from TopicConfigDefinitions' broker synonyms) and the
// SSL settings: cluster-wide unless listed in kPerBroker.
constexpr std::string_view kDynamic[] = {
    // LogCleaner.ReconfigurableConfigs
    "log.cleaner.threads", "log.cleaner.dedupe.buffer.size",
    "log.cleaner.io.buffer.load.factor", "log.cleaner.io.buffer.size",
    "log.cleaner.io.max.bytes.per.second", "log.cleaner.backoff.ms",
    // DynamicThreadPool
    "num.io.threads", "num.replica.fetchers",
    "num.recovery.threads.per.data.dir", "background.threads",
    "metric.reporters",
    // SocketServer, listener settings that are cluster-wide
    "max.connections.per.ip", "max.connections.per.ip.overrides",
    "max.connections", "max.connection.creation.rate", "num.network.threads",
    // DynamicProducerStateManagerConfig
    "producer.id.expiration.ms", "transaction.partition.verification.enable",
    // DynamicRemoteLogConfig
    "remote.log.index.file.cache.total.size.bytes",
    "remote.log.manager.copy.max.bytes.per.second",
    "remote.log.manager.fetch.max.bytes.per.second", "config.providers"};

// DynamicListenerConfig's listener settings: one broker's only.
constexpr std::string_view kPerBroker[] = {
    "listeners",
    "advertised.listeners",
    "listener.security.protocol.map",
    "sasl.enabled.mechanisms",
    "sasl.jaas.config",
    "sasl.kerberos.service.name",
    "sasl.kerberos.kinit.cmd",
    "sasl.kerberos.ticket.renew.window.factor",
    "sasl.kerberos.ticket.renew.jitter",
    "sasl.kerberos.min.time.before.relogin",
    "sasl.kerberos.principal.to.local.rules",
    "sasl.login.refresh.window.factor",
    "sasl.login.refresh.window.jitter",
    "sasl.login.refresh.min.period.seconds",
    "sasl.login.refresh.buffer.seconds",
    "connections.max.reauth.ms"};

// SslConfigs.RECONFIGURABLE_CONFIGS: dynamic only with a listener prefix
// (listener.name.<listener>.ssl.keystore.location...), per broker.
constexpr std::string_view kSecurity[] = {"ssl.keystore.type",
                                          "ssl.keystore.location",
                                          "ssl.keystore.password",
                                          "ssl.key.password",
                                          "ssl.truststore.type",
                                          "ssl.truststore.location",
                                          "ssl.truststore.password",
                                          "ssl.keystore.key",
                                          "ssl.keystore.certificate.chain",
                                          "ssl.truststore.certificates"};

// Settings Kafka defines that cannot change while it runs (the ones a client
// is likely to try; Kafka knows some hundred more, which this broker takes
// for unknown names).
constexpr std::string_view kStatic[] = {
    "advertised.host.name",
    "authorizer.class.name",
    "auto.create.topics.enable",
    "auto.leader.rebalance.enable",
    "broker.id",
    "broker.rack",
    "controller.listener.names",
    "controller.quorum.voters",
    "controller.quorum.bootstrap.servers",
    "default.replication.factor",
    "delete.topic.enable",
    "group.initial.rebalance.delay.ms",
    "group.max.session.timeout.ms",
    "group.min.session.timeout.ms",
    "group.max.size",
    "inter.broker.listener.name",
    "inter.broker.protocol.version",
    "log.dir",
    "log.dirs",
    "log.message.format.version",
    "log.retention.hours",
    "log.retention.minutes",
    "log.roll.hours",
    "log.roll.jitter.hours",
    "log.retention.check.interval.ms",
    "metadata.log.dir",
    "node.id",
    "num.partitions",
    "offsets.retention.minutes",
    "offsets.topic.num.partitions",
    "offsets.topic.replication.factor",
    "offsets.topic.segment.bytes",
    "process.roles",
    "queued.max.requests",
    "replica.fetch.max.bytes",
    "replica.lag.time.max.ms",
    "request.timeout.ms",
    "reserved.broker.max.id",
    "security.inter.broker.protocol",
    "socket.receive.buffer.bytes",
    "socket.request.max.bytes",
    "socket.send.buffer.bytes",
    "transaction.max.timeout.ms",
    "transaction.state.log.min.isr",
    "transaction.state.log.num.partitions",
    "transaction.state.log.replication.factor",
    "transactional.id.expiration.ms",
    "zookeeper.connect",
    "ssl.client.auth",
    "ssl.protocol",
    "ssl.enabled.protocols",
    "sasl.mechanism.inter.broker.protocol",
    "super.users"};

// Kafka's defaults of the thread pools: a change is held to [half, double]
// the current size (DynamicThreadPool.validateReconfiguration).
constexpr std::pair<std::string_view, int> kThreadPools[] = {
    {"num.io.threads", 8},
    {"num.network.threads", 3},
    {"num.replica.fetchers", 1},
    {"num.recovery.threads.per.data.dir", 2},
    {"background.threads", 10}};

constexpr std::string_view kListenerPrefix = "listener.name.";

bool Contains(const std::string_view* begin, const std::string_view* end,
              std::string_view name) {
  return std::find(begin, end, name) != end;
}
template <size_t N>
bool In(const std::string_view (&list)[N], std::string_view name) {
  return Contains(list, list + N, name);
}

// "listener.name.<listener>.<base>" -> "<base>", else "".
std::string_view ListenerBase(std::string_view name) {
  if (name.substr(0, kListenerPrefix.size()) != kListenerPrefix) return {};
  std::string_view rest = name.substr(kListenerPrefix.size());
  size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0) return {};
  return rest.substr(dot + 1);
}

// Scala's Set(a, b) as Kafka's messages print it.
std::string ScalaSet(const std::set<std::string>& names) {
  return absl::StrCat("Set(", absl::StrJoin(names, ", "), ")");
}

ApiError Refuse(std::string_view what, const std::set<std::string>& names) {
  return Error(ErrorCode::kInvalidRequest,
               absl::StrCat(std::string(what), ": ", ScalaSet(names)));
}

std::string InvalidValue(std::string_view name, std::string_view value,
                         std::string_view why) {
  return absl::StrCat("Invalid value ", std::string(value),
                      " for configuration ", std::string(name), ": ",
                      std::string(why));
}

// The value check of one dynamic config ("" when it is fine).
std::string CheckValue(std::string_view name, std::string_view value) {
  if (std::string_view topic = TopicConfigOf(name); !topic.empty()) {
    absl::Status s = TopicConfig::Validate(topic, value);
    return s.ok() ? std::string()
                  : InvalidValue(name, value, std::string(s.message()));
  }
  for (const auto& [pool, current] : kThreadPools) {
    if (name != pool) continue;
    int32_t v = 0;
    if (!absl::SimpleAtoi(std::string(value), &v))
      return InvalidValue(name, value, "Not a number of type INT");
    if (v < 1) return InvalidValue(name, value, "Value must be at least 1");
    if (v < current / 2)
      return absl::StrCat(
          "Invalid value ", v, " for configuration ", std::string(name),
          ": value should be at least half the current value ", current);
    if (v > current * 2)
      return absl::StrCat("Invalid value ", v, " for configuration ",
                          std::string(name),
                          ": value should not be greater than double the "
                          "current value ",
                          current);
    return {};
  }
  if (name == "log.cleaner.threads" || name == "max.connections" ||
      name == "max.connections.per.ip" ||
      name == "max.connection.creation.rate" ||
      name == "producer.id.expiration.ms" ||
      name == "log.cleaner.io.buffer.size") {
    int32_t v = 0;
    if (!absl::SimpleAtoi(std::string(value), &v))
      return InvalidValue(name, value, "Not a number of type INT");
    const int32_t min = name == "producer.id.expiration.ms" ? 1 : 0;
    if (v < min)
      return InvalidValue(name, value,
                          absl::StrCat("Value must be at least ", min));
    return {};
  }
  if (name == "log.cleaner.dedupe.buffer.size" ||
      name == "log.cleaner.backoff.ms") {
    int64_t v = 0;
    if (!absl::SimpleAtoi(std::string(value), &v))
      return InvalidValue(name, value, "Not a number of type LONG");
    if (v < 0) return InvalidValue(name, value, "Value must be at least 0");
    return {};
  }
  if (name == "transaction.partition.verification.enable" && value != "true" &&
      value != "false") {
    return InvalidValue(name, value,
                        "Expected value to be either true or false");
  }
  return {};
}

// A LIST config among the broker's dynamic ones, and its default.
std::optional<std::string_view> ListDefault(std::string_view name) {
  if (name == "log.cleanup.policy") return "delete";
  if (name == "metric.reporters" || name == "sasl.enabled.mechanisms" ||
      name == "config.providers")
    return name == "sasl.enabled.mechanisms" ? "GSSAPI" : "";
  return std::nullopt;
}

// The key of one resource's dynamic configs in the store.
std::string StoreKey(const std::string& resource_name) {
  return keys::Meta(absl::StrCat("dynamic_broker_configs/", resource_name));
}

}  // namespace

std::string_view TopicConfigOf(std::string_view broker_config) {
  if (broker_config.empty()) return {};
  for (const TopicConfigDefinition& d : TopicConfigDefinitions()) {
    if (d.broker_synonym == broker_config) return d.name;
  }
  return {};
}

DynamicMode BrokerConfigMode(std::string_view name) {
  // DynamicLogConfig: the topic-config defaults, but for the message format.
  if (name != "log.message.format.version" && !TopicConfigOf(name).empty())
    return DynamicMode::kClusterWide;
  if (In(kDynamic, name)) return DynamicMode::kClusterWide;
  if (In(kPerBroker, name) || In(kSecurity, name))
    return DynamicMode::kPerBroker;
  if (std::string_view base = ListenerBase(name); !base.empty()) {
    // A listener override: per broker, but for the cluster-level settings.
    if (base == "max.connections" || base == "max.connection.creation.rate" ||
        base == "num.network.threads")
      return DynamicMode::kClusterWide;
    return DynamicMode::kPerBroker;
  }
  if (In(kStatic, name)) return DynamicMode::kStatic;
  return DynamicMode::kUnknown;
}

ApiError ValidateDynamicBrokerConfigs(
    const std::map<std::string, std::string>& configs, bool per_broker) {
  // In Kafka's order: a static name, an SSL setting without a listener, a bad
  // value, a per-broker setting on the cluster-wide default.
  std::set<std::string> static_names;
  std::set<std::string> unprefixed;
  std::set<std::string> broker_only;
  for (const auto& entry : configs) {
    const std::string& name = entry.first;
    const DynamicMode mode = BrokerConfigMode(name);
    if (mode == DynamicMode::kStatic) static_names.insert(name);
    if (In(kSecurity, name)) unprefixed.insert(name);
    if (mode == DynamicMode::kPerBroker) broker_only.insert(name);
  }
  if (!static_names.empty())
    return Refuse("Cannot update these configs dynamically", static_names);
  if (!unprefixed.empty()) {
    return Refuse(
        "These security configs can be dynamically updated only per-listener "
        "using the listener prefix",
        unprefixed);
  }
  for (const auto& entry : configs) {
    std::string_view base = ListenerBase(entry.first);
    std::string why = CheckValue(
        base.empty() ? std::string_view(entry.first) : base, entry.second);
    if (!why.empty()) return Error(ErrorCode::kInvalidRequest, why);
  }
  if (!per_broker && !broker_only.empty()) {
    return Refuse(
        "Cannot update these configs at default cluster level, broker id "
        "must be specified",
        broker_only);
  }
  return {};
}

ApiError AlterBrokerConfigs(BrokerState& b, const std::string& resource_name,
                            const std::vector<ConfigChange>& changes,
                            bool replace_all, bool validate_only) {
  std::vector<std::string> null_values;
  std::set<std::string> seen;
  bool duplicates = false;
  for (const ConfigChange& c : changes) {
    if (c.op != ConfigChange::Op::kDelete && !c.value)
      null_values.push_back(c.name);
    if (!seen.insert(c.name).second) duplicates = true;
  }
  if (duplicates)
    return Error(ErrorCode::kInvalidRequest,
                 "Error due to duplicate config keys");
  if (!null_values.empty()) {
    return Error(ErrorCode::kInvalidRequest,
                 absl::StrCat("Null value not supported for : ",
                              absl::StrJoin(null_values, ", ")));
  }
  const bool per_broker = !resource_name.empty();
  const DynamicBrokerConfigs& current = b.dynamic_configs();
  std::map<std::string, std::string> configs;
  if (!replace_all)
    configs = per_broker ? current.per_broker : current.cluster_default;
  for (const ConfigChange& c : changes) {
    switch (c.op) {
      case ConfigChange::Op::kSet:
        configs[c.name] = *c.value;
        break;
      case ConfigChange::Op::kDelete:
        configs.erase(c.name);
        break;
      case ConfigChange::Op::kAppend:
      case ConfigChange::Op::kSubtract: {
        const bool append = c.op == ConfigChange::Op::kAppend;
        std::optional<std::string_view> list_default = ListDefault(c.name);
        if (!list_default) {
          return Error(
              ErrorCode::kInvalidConfig,
              absl::StrCat("Config value ", append ? "append" : "subtract",
                           " is not allowed for config key: ", c.name));
        }
        auto it = configs.find(c.name);
        configs[c.name] =
            EditConfigList(it != configs.end() ? std::string_view(it->second)
                           : append            ? *list_default
                                               : std::string_view(),
                           *c.value, append);
        break;
      }
      default:
        return Error(
            ErrorCode::kInvalidRequest,
            absl::StrCat("Unknown operations type ", static_cast<int>(c.op)));
    }
  }
  if (ApiError e = ValidateDynamicBrokerConfigs(configs, per_broker); !e.ok())
    return e;
  if (validate_only) return {};

  if (Controller* controller = b.controller()) {
    // Every broker, this one at once, takes the change up from the
    // controller's metadata (ApplyClusterMetadata).
    controller->SetBrokerConfigs(resource_name, std::move(configs));
    ApplyClusterMetadata(b, controller->metadata());
    return {};
  }
  DynamicBrokerConfigs next = current;
  (per_broker ? next.per_broker : next.cluster_default) = configs;
  if (Store* store = b.store()) {
    if (configs.empty()) {
      store->Delete(StoreKey(resource_name));
    } else {
      store->Put(StoreKey(resource_name), EncodeDynamicConfigs(configs));
    }
  }
  LogInfo("dynamic broker configs of ",
          per_broker ? resource_name : std::string("the cluster default"),
          " now: ", absl::StrJoin(configs, ", ", absl::PairFormatter("=")));
  ApplyDynamicBrokerConfigs(b, std::move(next));
  return {};
}

DynamicBrokerConfigs LoadDynamicBrokerConfigs(BrokerState& b) {
  DynamicBrokerConfigs out;
  Store* store = b.store();
  if (store == nullptr) return out;
  if (absl::StatusOr<std::string> v = store->Get(StoreKey("")); v.ok())
    out.cluster_default = DecodeDynamicConfigs(*v);
  if (absl::StatusOr<std::string> v =
          store->Get(StoreKey(absl::StrCat(b.options().node_id)));
      v.ok())
    out.per_broker = DecodeDynamicConfigs(*v);
  return out;
}

void ApplyDynamicBrokerConfigs(BrokerState& b, DynamicBrokerConfigs configs,
                               bool enforce_retention) {
  auto inherited = std::make_shared<std::map<std::string, std::string>>();
  for (const TopicConfigDefinition& d : TopicConfigDefinitions()) {
    if (d.broker_synonym.empty() ||
        BrokerConfigMode(d.broker_synonym) != DynamicMode::kClusterWide)
      continue;
    const std::string synonym(d.broker_synonym);
    for (const auto* layer : {&configs.per_broker, &configs.cluster_default}) {
      auto it = layer->find(synonym);
      if (it == layer->end()) continue;
      // A value the topic config cannot take (stored by another broker's
      // rules) is left out.
      if (TopicConfig::Validate(d.name, it->second).ok())
        (*inherited)[std::string(d.name)] = it->second;
      break;
    }
  }
  b.set_dynamic_configs(std::move(configs));
  const TopicConfig::Inherited& before = b.topics().inherited();
  if ((before ? *before : std::map<std::string, std::string>()) == *inherited)
    return;
  b.topics().SetInherited(std::move(inherited));
  if (!enforce_retention) return;
  // Retention configs take effect now, not at the next append.
  for (const auto& entry : b.topics().all()) {
    for (const auto& partition : entry.second->partitions)
      EnforceRetention(b, *partition);
  }
}

std::string EncodeDynamicConfigs(const std::map<std::string, std::string>& m) {
  std::string out;
  for (const auto& [name, value] : m) {
    absl::StrAppend(&out, name.size(), ":", name, value.size(), ":", value);
  }
  return out;
}

std::map<std::string, std::string> DecodeDynamicConfigs(std::string_view v) {
  std::map<std::string, std::string> out;
  auto take = [&v](std::string* s) {
    size_t colon = v.find(':');
    size_t n = 0;
    if (colon == std::string_view::npos ||
        !absl::SimpleAtoi(std::string(v.substr(0, colon)), &n) ||
        v.size() - colon - 1 < n)
      return false;
    *s = std::string(v.substr(colon + 1, n));
    v.remove_prefix(colon + 1 + n);
    return true;
  };
  std::string name;
  std::string value;
  while (!v.empty() && take(&name) && take(&value)) out[name] = value;
  return out;
}

}  // namespace exactly::broker
