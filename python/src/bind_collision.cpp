// shoal.apps.Collision: the collision program's model (a file of its own so that the apps compile in parallel).

#include "collision/collision_app.hpp"
#include "shoal/python/model.hpp"

void bind_collision(nanobind::module_& apps) { shoal::python::bind_model<collision::app>(apps, "Collision"); }
