// shoal.apps.BarnesHut: the barnes_hut program's model (a file of its own so that the apps compile in parallel).

#include "barnes_hut/barnes_hut_app.hpp"
#include "shoal/python/model.hpp"

void bind_barnes_hut(nanobind::module_& apps) { shoal::python::bind_model<barnes_hut::app>(apps, "BarnesHut"); }
