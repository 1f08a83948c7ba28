// The Python module shoal._shoal: the apps as classes of shoal.apps (shoal/python/model.hpp does
// the binding; each app is the model class its program runs).

#include <nanobind/nanobind.h>

#include "shoal/python/model.hpp"
#include "traffic/traffic_app.hpp"
#include "wator/wator_app.hpp"

namespace nb = nanobind;

NB_MODULE(_shoal, m) {
  m.doc() = "Shoal: object-oriented agent simulations on GPUs (the apps; see docs/python.md)";
#if defined(SHOAL_BACKEND_CUDA)
  m.attr("backend") = "cuda";
#else
  m.attr("backend") = "cpu";
#endif
  // A full heap raises MemoryError, with the message the program prints (it names the class).
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const shoal::out_of_memory& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    }
  });
  nb::module_ apps = m.def_submodule("apps", "The apps of Shoal's apps/ folder, with their flags as keywords");
  shoal::python::bind_model<wator::app>(apps, "WaTor");
  shoal::python::bind_model<traffic::app>(apps, "Traffic");
}
