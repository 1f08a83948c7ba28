// structure: DynaSOAr's spring mesh on Shoal (rules in structure_model.hpp, the starting mesh in
// structure_mesh.hpp, the program's flags and outputs in structure_app.hpp; sim::run_model does
// the rest).

#include "structure_app.hpp"

int main(int argc, char** argv) { return shoal::sim::run_model<structure::app>(argc, argv); }
