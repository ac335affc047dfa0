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
      // v4: from the partition leaders of a cluster (KIP-890).
      {ApiKey::kAddPartitionsToTxn, 0, 4,
       &Decoded<AddPartitionsToTxnRequest, HandleAddPartitionsToTxn>},
      {ApiKey::kAddOffsetsToTxn, 0, 3,
       &Decoded<AddOffsetsToTxnRequest, HandleAddOffsetsToTxn>},
      {ApiKey::kEndTxn, 0, 3, &Decoded<EndTxnRequest, HandleEndTxn>},
      // KIP-664: finding and ending hanging transactions. Versions as Kafka
      // 3.9 serves them.
      {ApiKey::kWriteTxnMarkers, 0, 1,
       &Decoded<WriteTxnMarkersRequest, HandleWriteTxnMarkers>},
      {ApiKey::kDescribeProducers, 0, 0,
       &Decoded<DescribeProducersRequest, HandleDescribeProducers>},
      {ApiKey::kDescribeTransactions, 0, 0,
       &Decoded<DescribeTransactionsRequest, HandleDescribeTransactions>},
      {ApiKey::kListTransactions, 0, 1,
       &Decoded<ListTransactionsRequest, HandleListTransactions>},
  };
}

}  // namespace exactly::broker
