// wator_mpi: Wa-Tor over MPI ranks (mpirun -np N wator_mpi ...), with wator's command line and
// outputs; built where MPI is found (wator_band_app.hpp).

#include "wator_band_app.hpp"

int main(int argc, char** argv) { return shoal::dist::run_model<wator::band_app>(argc, argv); }
