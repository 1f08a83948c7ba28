// nbody_mpi: n-body over MPI ranks (mpirun -np N nbody_mpi ...), with nbody's command line and
// CSV columns; built where MPI is found (nbody_ranks_app.hpp).

#include "nbody_ranks_app.hpp"

int main(int argc, char** argv) { return shoal::dist::run_model<nbody::ranks_app>(argc, argv); }
