// wator: the Wa-Tor predator-prey simulation on Shoal (rules in wator_model.hpp, the program's
// flags and outputs in wator_app.hpp; sim::run_model does the rest).

#include "wator_app.hpp"

int main(int argc, char** argv) { return shoal::sim::run_model<wator::app>(argc, argv); }
