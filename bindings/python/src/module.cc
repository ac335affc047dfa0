// The extension module exactly._exactly. The package exactly wraps each of
// its classes in a plain Python class (mockable, documented, typed); use
// those, not these.
#include <type_traits>

#include "exactly/processor.h"
#include "exactly/spool.h"
#include "exactly/transactional_producer.h"
#include "natives.h"

namespace {

// The upper bounds of a histogram's buckets, as a tuple (seconds for
// durations).
template <typename Bounds>
pybind11::tuple BoundsTuple(const Bounds& bounds) {
  pybind11::tuple out(bounds.size());
  for (size_t i = 0; i < bounds.size(); ++i) {
    if constexpr (std::is_integral_v<typename Bounds::value_type>) {
      out[i] = bounds[i];
    } else {
      out[i] = static_cast<double>(bounds[i].count()) / 1e6;
    }
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_exactly, m) {
  m.doc() = "exactly's C++ SDK and bundled broker (use the exactly package)";
  exactly::python::RegisterTypes(m);
  exactly::python::RegisterProducers(m);
  exactly::python::RegisterConsumer(m);
  exactly::python::RegisterProcessor(m);
  exactly::python::RegisterBroker(m);
  // The bounds of the stats' histograms (see exactly.prometheus).
  m.attr("COMMIT_LATENCY_BOUNDS") = BoundsTuple(exactly::kCommitLatencyBounds);
  m.attr("BATCH_SIZE_BOUNDS") = BoundsTuple(exactly::kBatchSizeBounds);
  m.attr("GROUP_COMMIT_LATENCY_BOUNDS") =
      BoundsTuple(exactly::kGroupCommitLatencyBounds);
  m.attr("GROUP_COMMIT_SIZE_BOUNDS") =
      BoundsTuple(exactly::kGroupCommitSizeBounds);
#ifdef EXACTLY_PYTHON_WITH_SPOOL
  exactly::python::RegisterSpool(m);
  m.attr("has_spool") = true;
#else
  m.attr("has_spool") = false;
#endif
}
