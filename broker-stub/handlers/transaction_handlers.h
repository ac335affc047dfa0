// Handlers of the transaction APIs (the coordinator is
// txn/transaction_coordinator.h).
#ifndef EXACTLY_BROKER_HANDLERS_TRANSACTION_HANDLERS_H_
#define EXACTLY_BROKER_HANDLERS_TRANSACTION_HANDLERS_H_

#include "cluster/broker_state.h"
#include "handlers/authorize.h"
#include "protocol/messages/add_offsets_to_txn.h"
#include "protocol/messages/add_partitions_to_txn.h"
#include "protocol/messages/describe_producers.h"
#include "protocol/messages/describe_transactions.h"
#include "protocol/messages/end_txn.h"
#include "protocol/messages/list_transactions.h"
#include "protocol/messages/write_txn_markers.h"
#include "protocol/request_header.h"
#include "server/responder.h"

namespace exactly::broker {

void HandleAddPartitionsToTxn(BrokerState& b, const protocol::RequestHeader& h,
                              protocol::AddPartitionsToTxnRequest& request,
                              Responder r);
void HandleAddOffsetsToTxn(BrokerState& b, const protocol::RequestHeader& h,
                           protocol::AddOffsetsToTxnRequest& request,
                           Responder r);
void HandleEndTxn(BrokerState& b, const protocol::RequestHeader& h,
                  protocol::EndTxnRequest& request, Responder r);

// KIP-664's tools for hanging transactions: find them (DescribeProducers on
// the partition leader, ListTransactions and DescribeTransactions on the
// coordinator) and end them (WriteTxnMarkers).
void HandleDescribeProducers(BrokerState& b, const protocol::RequestHeader& h,
                             protocol::DescribeProducersRequest& request,
                             Responder r);
void HandleListTransactions(BrokerState& b, const protocol::RequestHeader& h,
                            protocol::ListTransactionsRequest& request,
                            Responder r);
void HandleDescribeTransactions(BrokerState& b,
                                const protocol::RequestHeader& h,
                                protocol::DescribeTransactionsRequest& request,
                                Responder r);
void HandleWriteTxnMarkers(BrokerState& b, const protocol::RequestHeader& h,
                           protocol::WriteTxnMarkersRequest& request,
                           Responder r);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_HANDLERS_TRANSACTION_HANDLERS_H_
