// kband::mpi -- the thin MPI layer (include this one header; needs the
// kband::mpi CMake target). kband never calls MPI_Init; every object takes the
// communicator to use (MPI_COMM_WORLD or any other).
//
//   kband_MPI_Core.hpp   check, all_ok, require_all / collective (collective
//                        kband::Error), CommConfig (GPU-aware MPI or staging)
//   kband_MPI_Grid.hpp   CartGrid (1D/2D/3D, periodic per direction), Decomposition
//   kband_MPI_Field.hpp  DistField (a block of a global 3D field), SZ-line conversion
//   kband_MPI_Halo.hpp   HaloExchange (depth 1..4), BoundaryExchange (2x2 systems)
//   kband_MPI_DistD2.hpp the distributed compact derivative on DistD2
#pragma once

#include "kband_MPI_Core.hpp"
#include "kband_MPI_Grid.hpp"
#include "kband_MPI_Field.hpp"
#include "kband_MPI_Halo.hpp"
#include "kband_MPI_DistD2.hpp"
