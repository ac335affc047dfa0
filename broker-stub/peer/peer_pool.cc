#include "peer/peer_pool.h"

namespace exactly::broker {

PeerClient& PeerPool::Get(const BrokerInfo& broker) {
  std::unique_ptr<PeerClient>& client = clients_[broker.node_id];
  if (client != nullptr &&
      (client->host() != broker.host || client->port() != broker.port)) {
    client->Close();
    client.reset();
  }
  if (client == nullptr) {
    client = PeerClient::Create(io_, broker.host,
                                static_cast<uint16_t>(broker.port), options_);
  }
  return *client;
}

}  // namespace exactly::broker
