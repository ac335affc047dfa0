// exactly: exactly-once delivery with Apache Kafka. One include for all of
// the SDK.
#ifndef EXACTLY_EXACTLY_H_
#define EXACTLY_EXACTLY_H_

#include "exactly/consumer.h"                // IWYU pragma: export
#include "exactly/error.h"                   // IWYU pragma: export
#include "exactly/group_metadata.h"          // IWYU pragma: export
#include "exactly/message.h"                 // IWYU pragma: export
#include "exactly/options.h"                 // IWYU pragma: export
#include "exactly/processor.h"               // IWYU pragma: export
#include "exactly/producer.h"                // IWYU pragma: export
#include "exactly/record.h"                  // IWYU pragma: export
#include "exactly/transactional_producer.h"  // IWYU pragma: export

#endif  // EXACTLY_EXACTLY_H_
