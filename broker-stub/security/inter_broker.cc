#include "security/inter_broker.h"

#include <mutex>
#include <set>

namespace exactly::broker {

namespace {

struct Endpoints {
  std::mutex mu;
  std::multiset<std::string, std::less<>> set;
};

Endpoints& Registry() {
  static Endpoints* endpoints = new Endpoints();  // never destroyed
  return *endpoints;
}

}  // namespace

void AddInterBrokerEndpoint(const std::string& endpoint) {
  Endpoints& e = Registry();
  std::lock_guard lock(e.mu);
  e.set.insert(endpoint);
}

void RemoveInterBrokerEndpoint(const std::string& endpoint) {
  Endpoints& e = Registry();
  std::lock_guard lock(e.mu);
  auto it = e.set.find(endpoint);
  if (it != e.set.end()) e.set.erase(it);
}

bool IsInterBrokerEndpoint(std::string_view endpoint) {
  Endpoints& e = Registry();
  std::lock_guard lock(e.mu);
  return e.set.find(endpoint) != e.set.end();
}

}  // namespace exactly::broker
