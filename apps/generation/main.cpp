// generation: DynaSOAr's Generations cellular automaton on Shoal (rules in generation_model.hpp,
// the program's flags and outputs in generation_app.hpp; sim::run_model does the rest).

#include "generation_app.hpp"

int main(int argc, char** argv) { return shoal::sim::run_model<generation::app>(argc, argv); }
