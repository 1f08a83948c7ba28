// Tutorial step 5: a complete program with the driver (docs/tutorial.md). The model, the
// rabbits of step 2, is meadow.hpp; sim::run_model gives the command line, CSV, checkpoints and
// summary.
#include "meadow.hpp"

int main(int argc, char** argv) { return shoal::sim::run_model<meadow>(argc, argv); }
