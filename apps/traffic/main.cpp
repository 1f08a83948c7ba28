// traffic: Nagel–Schreckenberg cars on a random street network, DynaSOAr's traffic benchmark on
// Shoal (network and rules in network.hpp and traffic_model.hpp, the program's flags and outputs in
// traffic_app.hpp; sim::run_model does the rest).

#include "traffic_app.hpp"

int main(int argc, char** argv) { return shoal::sim::run_model<traffic::app>(argc, argv); }
