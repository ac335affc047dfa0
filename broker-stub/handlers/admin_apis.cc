// The admin APIs and the versions this broker advertises for them (CreateTopics
// is in core_apis.cc). Each range is every version whose message and behaviour
// are implemented: DeleteTopics stops at v5 because v6 names topics by id, and
// DescribeConfigs at v2 because v3 adds config types and documentation. Not
// served: DescribeCluster (no client of ours sends it; Java's AdminClient falls
// back to Metadata when it is not advertised).
#include "handlers/admin_handlers.h"
#include "handlers/api_table.h"
#include "handlers/decoded.h"

namespace exactly::broker {

std::vector<ApiHandler> AdminApis() {
  using namespace protocol;  // NOLINT: the message types, in one table
  return {
      {ApiKey::kDeleteTopics, 0, 5,
       &Decoded<DeleteTopicsRequest, HandleDeleteTopics>},
      {ApiKey::kDeleteRecords, 0, 2,
       &Decoded<DeleteRecordsRequest, HandleDeleteRecords>},
      {ApiKey::kCreatePartitions, 0, 3,
       &Decoded<CreatePartitionsRequest, HandleCreatePartitions>},
      {ApiKey::kDescribeConfigs, 0, 2,
       &Decoded<DescribeConfigsRequest, HandleDescribeConfigs>},
      {ApiKey::kAlterConfigs, 0, 2,
       &Decoded<AlterConfigsRequest, HandleAlterConfigs>},
      {ApiKey::kIncrementalAlterConfigs, 0, 1,
       &Decoded<IncrementalAlterConfigsRequest, HandleIncrementalAlterConfigs>},
  };
}

}  // namespace exactly::broker
