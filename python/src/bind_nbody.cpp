// shoal.apps.NBody: the nbody program's model (a file of its own so that the apps compile in parallel).

#include "nbody/nbody_app.hpp"
#include "shoal/python/model.hpp"

void bind_nbody(nanobind::module_& apps) { shoal::python::bind_model<nbody::app>(apps, "NBody"); }
