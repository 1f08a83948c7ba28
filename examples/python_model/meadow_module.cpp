// The tutorial's meadow (examples/tutorial/meadow.hpp) as a Python class, from a project outside
// Shoal's tree (CMakeLists.txt beside this file; docs/python.md):
//
//   import meadow_py
//   m = meadow_py.Meadow(rabbits=200)   # the flags of tutorial_step5_app as keywords
//   m.step(6); m.census()               # {'rabbits': ...}
//   m.agents("Rabbit")                  # {'id': array, 'age': array}
//   m.live(7)                           # one do-all of the model's own, called directly
#include "meadow.hpp"
#include "shoal/python/model.hpp"

NB_MODULE(meadow_py, module) {
  auto meadow_class = shoal::python::bind_model<meadow>(module, "Meadow");
  // Anything else the model offers is one .def away; here a do-all, with the GIL released.
  meadow_class.def(
      "live",
      [](shoal::python::model<meadow>& m, unsigned day) {
        nanobind::gil_scoped_release released;
        m.app().runtime().parallel_do<&Rabbit::live>(day);
        m.app().runtime().synchronize();
      },
      nanobind::arg("day"), "Every rabbit lives one day (a do-all; `steps` does not count it).");
}
