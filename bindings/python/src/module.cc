// The extension module exactly._exactly. The package exactly wraps each of
// its classes in a plain Python class (mockable, documented, typed); use
// those, not these.
#include "natives.h"

PYBIND11_MODULE(_exactly, m) {
  m.doc() = "exactly's C++ SDK and bundled broker (use the exactly package)";
  exactly::python::RegisterTypes(m);
  exactly::python::RegisterProducers(m);
  exactly::python::RegisterConsumer(m);
  exactly::python::RegisterProcessor(m);
  exactly::python::RegisterBroker(m);
#ifdef EXACTLY_PYTHON_WITH_SPOOL
  exactly::python::RegisterSpool(m);
  m.attr("has_spool") = true;
#else
  m.attr("has_spool") = false;
#endif
}
