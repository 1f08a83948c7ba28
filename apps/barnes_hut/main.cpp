// barnes_hut: 2-D Barnes–Hut gravity on Shoal (model in barnes_hut_model.hpp, the program's
// flags and outputs in barnes_hut_app.hpp; sim::run_model does the rest).

#include "barnes_hut_app.hpp"

int main(int argc, char** argv) { return shoal::sim::run_model<barnes_hut::app>(argc, argv); }
