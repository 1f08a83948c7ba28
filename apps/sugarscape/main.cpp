// sugarscape: Epstein and Axtell's agents on a grid of sugar, on Shoal (rules in sugarscape_model.hpp,
// the program's flags and outputs in sugarscape_app.hpp; sim::run_model does the rest).

#include "sugarscape_app.hpp"

int main(int argc, char** argv) { return shoal::sim::run_model<sugarscape::app>(argc, argv); }
