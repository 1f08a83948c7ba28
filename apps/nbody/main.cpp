// nbody: 2-D gravity between every pair of bodies on Shoal (model in nbody_model.hpp, the
// program's flags and outputs in nbody_app.hpp; sim::run_model does the rest).

#include "nbody_app.hpp"

int main(int argc, char** argv) { return shoal::sim::run_model<nbody::app>(argc, argv); }
