// The transaction APIs and the versions this broker advertises for them.
#include "handlers/api_table.h"
#include "handlers/decoded.h"
#include "handlers/handlers.h"

namespace exactly::broker {

std::vector<ApiHandler> TransactionApis() { return {}; }

}  // namespace exactly::broker
