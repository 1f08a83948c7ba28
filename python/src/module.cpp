// The Python module shoal._shoal: the apps as classes of shoal.apps (shoal/python/model.hpp does
// the binding; each app is the model class its program runs).

#include <nanobind/nanobind.h>

#include "barnes_hut/barnes_hut_app.hpp"
#include "collision/collision_app.hpp"
#include "generation/generation_app.hpp"
#include "nbody/nbody_app.hpp"
#include "shoal/python/model.hpp"
#include "sugarscape/sugarscape_app.hpp"
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
  shoal::python::bind_model<sugarscape::app>(apps, "Sugarscape");
  shoal::python::bind_model<nbody::app>(apps, "NBody");
  shoal::python::bind_model<barnes_hut::app>(apps, "BarnesHut");
  shoal::python::bind_model<collision::app>(apps, "Collision");
  shoal::python::bind_model<generation::app>(apps, "Generation");
}
