// Built against the installed SDK only. It needs no broker: it checks that
// the SDK's option validation runs from the installed library (an unsafe
// combination is refused with the property named) and that a safe producer
// can be created, then closed.
#include <cstdio>
#include <string>

#include "exactly/exactly.h"

int main() {
  exactly::ProducerOptions unsafe;
  unsafe.bootstrap_servers = "127.0.0.1:1";
  unsafe.transactional_id = "install-check";
  unsafe.properties["acks"] = "1";
  auto refused = exactly::TransactionalProducer::Create(unsafe);
  if (refused.ok() ||
      std::string(refused.status().message()).find("acks") ==
          std::string::npos) {
    std::fprintf(stderr, "acks=1 with a transactional.id was not refused\n");
    return 1;
  }

  exactly::ProducerOptions safe;
  safe.bootstrap_servers = "127.0.0.1:1";  // nothing listens: never used
  auto producer = exactly::Producer::Create(safe);
  if (!producer.ok()) {
    std::fprintf(stderr, "Producer::Create: %s\n",
                 std::string(producer.status().message()).c_str());
    return 1;
  }
  (*producer)->Close(std::chrono::milliseconds(100)).IgnoreError();
  std::printf("installed SDK: refused '%s'; created a safe producer\n",
              std::string(refused.status().message()).c_str());
  return 0;
}
