// game_of_life: DynaSOAr's Game of Life on Shoal, both variants (rules and variants in
// game_of_life_model.hpp, the program's flags and outputs in game_of_life_app.hpp; sim::run_model
// does the rest).

#include "game_of_life_app.hpp"

int main(int argc, char** argv) { return shoal::sim::run_model<game_of_life::app>(argc, argv); }
