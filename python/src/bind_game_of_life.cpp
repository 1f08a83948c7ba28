// shoal.apps.GameOfLife: the game_of_life program's model (a file of its own so that the apps compile in parallel).

#include "game_of_life/game_of_life_app.hpp"
#include "shoal/python/model.hpp"

void bind_game_of_life(nanobind::module_& apps) { shoal::python::bind_model<game_of_life::app>(apps, "GameOfLife"); }
