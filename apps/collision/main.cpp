// collision: bodies that attract each other and merge on Shoal (model in collision_model.hpp,
// the program's flags and outputs in collision_app.hpp; sim::run_model does the rest).

#include "collision_app.hpp"

int main(int argc, char** argv) { return shoal::sim::run_model<collision::app>(argc, argv); }
