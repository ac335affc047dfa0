#include "group/member.h"

#include "protocol/serde.h"

namespace exactly::broker {

const std::string& Member::Metadata(const std::string& protocol) const {
  static const std::string* const kNone = new std::string();
  for (const MemberProtocol& p : protocols) {
    if (p.name == protocol) return p.metadata;
  }
  return *kNone;
}

std::string Member::Vote(const std::set<std::string>& candidates) const {
  for (const MemberProtocol& p : protocols) {
    if (candidates.contains(p.name)) return p.name;
  }
  return {};
}

std::optional<std::set<std::string>> ParseConsumerSubscription(
    const std::string& metadata) {
  // Every version of ConsumerProtocolSubscription starts with the v0 fields:
  // int16 version, then an int16-length string array of topics.
  protocol::Decoder d(metadata, 0, false);
  int16_t version = 0;
  d.Int16(version);
  std::vector<std::string> topics;
  d.Array(topics, [&](std::string& t) { d.String(t); });
  if (!d.ok() || version < 0) return std::nullopt;
  return std::set<std::string>(topics.begin(), topics.end());
}

}  // namespace exactly::broker
