// shoal.apps.Traffic: the traffic program's model (a file of its own so that the apps compile in parallel).

#include "traffic/traffic_app.hpp"
#include "shoal/python/model.hpp"

void bind_traffic(nanobind::module_& apps) { shoal::python::bind_model<traffic::app>(apps, "Traffic"); }
