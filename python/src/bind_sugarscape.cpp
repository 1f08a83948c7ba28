// shoal.apps.Sugarscape: the sugarscape program's model (a file of its own so that the apps compile in parallel).

#include "sugarscape/sugarscape_app.hpp"
#include "shoal/python/model.hpp"

void bind_sugarscape(nanobind::module_& apps) { shoal::python::bind_model<sugarscape::app>(apps, "Sugarscape"); }
