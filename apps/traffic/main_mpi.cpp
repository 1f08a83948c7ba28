// traffic_mpi: traffic over MPI ranks (mpirun -np N traffic_mpi ...), with traffic's command line
// and outputs; built where MPI is found (traffic_regions_app.hpp).

#include "traffic_regions_app.hpp"

int main(int argc, char** argv) { return shoal::dist::run_model<traffic::regions_app>(argc, argv); }
