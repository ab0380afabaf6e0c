// Compile/link check of the kband::mpi target (built, not run, by the install tests).
#include <kband_MPI.hpp>

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  const bool ok = kband::mpi::all_ok(true, MPI_COMM_WORLD);
  MPI_Finalize();
  return ok ? 0 : 1;
}
