// kband::mpi -- the thin MPI layer. kband never calls MPI_Init; every call
// takes the communicator to use. The distributed DistD2 solver builds on this.
#pragma once

#include <mpi.h>

#include "kband_Core.hpp"

namespace kband {
namespace mpi {

/// Throws kband::Error on a failed MPI call, naming the call.
inline void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw Error(impl::concat(what, " failed: ", std::string(msg, len)));
  }
}

/// True when every rank of `comm` passes `ok`; a collective agreement used so
/// that an argument error seen by one rank makes every rank throw.
inline bool all_ok(bool ok, MPI_Comm comm) {
  int local = ok ? 1 : 0, global = 0;
  check(MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  return global == 1;
}

}  // namespace mpi
}  // namespace kband
