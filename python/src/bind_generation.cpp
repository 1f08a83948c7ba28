// shoal.apps.Generation: the generation program's model (a file of its own so that the apps compile in parallel).

#include "generation/generation_app.hpp"
#include "shoal/python/model.hpp"

void bind_generation(nanobind::module_& apps) { shoal::python::bind_model<generation::app>(apps, "Generation"); }
