#include "handlers/api_table.h"

namespace exactly::broker {

const std::vector<ApiHandler>& ApiHandlers() {
  static const std::vector<ApiHandler>* table = [] {
    auto* all = new std::vector<ApiHandler>();
    for (auto area :
         {CoreApis, GroupApis, TransactionApis, AdminApis, SecurityApis}) {
      for (const ApiHandler& h : area()) all->push_back(h);
    }
    return all;
  }();
  return *table;
}

const ApiHandler* FindApiHandler(int16_t api_key) {
  for (const ApiHandler& h : ApiHandlers()) {
    if (static_cast<int16_t>(h.key) == api_key) return &h;
  }
  return nullptr;
}

}  // namespace exactly::broker
