// shoal.apps.WaTor: the wator program's model (a file of its own so that the apps compile in parallel).

#include "wator/wator_app.hpp"
#include "shoal/python/model.hpp"

void bind_wator(nanobind::module_& apps) { shoal::python::bind_model<wator::app>(apps, "WaTor"); }
