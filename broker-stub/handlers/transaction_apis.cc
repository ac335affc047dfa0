// The transaction APIs and the versions this broker advertises for them.
// InitProducerId is a core API (idempotent producers use it too);
// FindCoordinator and TxnOffsetCommit belong to the group coordinator's table.
#include "handlers/api_table.h"
#include "handlers/decoded.h"
#include "handlers/transaction_handlers.h"

namespace exactly::broker {

std::vector<ApiHandler> TransactionApis() {
  using namespace protocol;  // NOLINT: the message types, in one table
  return {
      {ApiKey::kAddPartitionsToTxn, 0, 3,
       &Decoded<AddPartitionsToTxnRequest, HandleAddPartitionsToTxn>},
      {ApiKey::kAddOffsetsToTxn, 0, 3,
       &Decoded<AddOffsetsToTxnRequest, HandleAddOffsetsToTxn>},
      {ApiKey::kEndTxn, 0, 3, &Decoded<EndTxnRequest, HandleEndTxn>},
  };
}

}  // namespace exactly::broker
