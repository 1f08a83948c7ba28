// The Python module shoal._shoal: the apps as classes of shoal.apps (shoal/python/model.hpp does
// the binding; each app is the model class its program runs).

#include <nanobind/nanobind.h>

#include "shoal/shoal.hpp"

namespace nb = nanobind;

// One file per app (bind_<app>.cpp).
void bind_wator(nb::module_& apps);
void bind_traffic(nb::module_& apps);
void bind_sugarscape(nb::module_& apps);
void bind_nbody(nb::module_& apps);
void bind_barnes_hut(nb::module_& apps);
void bind_collision(nb::module_& apps);
void bind_generation(nb::module_& apps);
void bind_game_of_life(nb::module_& apps);

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
  bind_wator(apps);
  bind_traffic(apps);
  bind_sugarscape(apps);
  bind_nbody(apps);
  bind_barnes_hut(apps);
  bind_collision(apps);
  bind_generation(apps);
  bind_game_of_life(apps);
}
