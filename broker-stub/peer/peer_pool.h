// One PeerClient per other broker of the cluster (this one included: a
// coordinator sends its own markers through the protocol too, as Kafka's
// does), made on first use. Runs on the broker's event loop.
#ifndef EXACTLY_BROKER_PEER_PEER_POOL_H_
#define EXACTLY_BROKER_PEER_PEER_POOL_H_

#include <asio/io_context.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "controller/cluster_metadata.h"
#include "peer/peer_client.h"

namespace exactly::broker {

class PeerPool {
 public:
  explicit PeerPool(asio::io_context& io, PeerClientOptions options = {})
      : io_(io), options_(std::move(options)) {}

  // The connection to `broker`. A broker that came back at another address
  // gets a new one; the old one fails what it had pending first, so that no
  // callback is lost.
  PeerClient& Get(const BrokerInfo& broker);

 private:
  asio::io_context& io_;
  const PeerClientOptions options_;
  std::map<int32_t, std::unique_ptr<PeerClient>> clients_;
};

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_PEER_PEER_POOL_H_
