// How a Processor's options split into its consumer's and producer's.
#ifndef EXACTLY_SDK_SRC_CLIENT_OPTIONS_INTERNAL_H_
#define EXACTLY_SDK_SRC_CLIENT_OPTIONS_INTERNAL_H_

#include "exactly/options.h"

namespace exactly::internal {

ProducerOptions ProducerOptionsFor(const ProcessorOptions& options);
ConsumerOptions ConsumerOptionsFor(const ProcessorOptions& options);

}  // namespace exactly::internal

#endif  // EXACTLY_SDK_SRC_CLIENT_OPTIONS_INTERNAL_H_
