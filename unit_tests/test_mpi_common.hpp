// Shared helpers of the kband MPI tests (see kband_test_common.hpp for the
// portability rules: Views in the default memory space, host mirrors, fences).
#pragma once

#include <kband_MPI.hpp>

#include "kband_test_common.hpp"

#include <array>

namespace kband_test {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
inline int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}
/// Sum of `v` over all ranks (tests count failures collectively so that every
/// rank takes the same branch afterwards).
inline long long sum_all(long long v) {
  long long s = 0;
  MPI_Allreduce(&v, &s, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return s;
}
inline double max_all(double v) {
  double s = 0;
  MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return s;
}

inline const char* dir_name(kband::Direction d) {
  return d == kband::Direction::X ? "x" : (d == kband::Direction::Y ? "y" : "z");
}

/// Unequal block sizes: along a direction of p ranks, coordinate c owns
/// base + (2c mod 3) planes; returns this rank's local extents and the global ones.
inline void unequal_blocks(const kband::mpi::CartGrid& g, std::array<int, 3> base, std::array<int, 3>& local,
                           std::array<int, 3>& global) {
  for (int d = 0; d < 3; ++d) {
    const auto dir = static_cast<kband::Direction>(d);
    global[d] = 0;
    for (int c = 0; c < g.dims(dir); ++c) global[d] += base[d] + (2 * c) % 3;
    local[d] = base[d] + (2 * g.coord(dir)) % 3;
  }
}

/// Sets every point of f's local block to value(I, J, K) of its global indices.
template <class Field, class F>
void fill_field(const Field& f, F value) {
  using kband::Direction;
  auto h = Kokkos::create_mirror_view(f.local());
  for (int k = 0; k < f.local_extent(Direction::Z); ++k)
    for (int j = 0; j < f.local_extent(Direction::Y); ++j)
      for (int i = 0; i < f.local_extent(Direction::X); ++i)
        h(i, j, k) = value(f.offset(Direction::X) + i, f.offset(Direction::Y) + j, f.offset(Direction::Z) + k);
  Kokkos::deep_copy(f.local(), h);
}

/// The buffer paths to test: Staged always; Direct where MPI may see the
/// buffers (host memory, or KBAND_MPI_GPU_AWARE / MPIX says the MPI is
/// GPU-aware); CudaIPC on CUDA builds.
inline std::vector<kband::mpi::BufferPath> test_paths() {
  using P = kband::mpi::BufferPath;
  std::vector<P> p;
  if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, Exec::memory_space>::accessible ||
      kband::mpi::gpu_aware_default())
    p.push_back(P::Direct);
  p.push_back(P::Staged);
#if defined(KOKKOS_ENABLE_CUDA)
  p.push_back(P::CudaIPC);
#endif
  return p;
}

/// The 1D grids along each direction and one 3D grid (MPI_Dims_create), each
/// periodic or not in every direction.
inline std::vector<std::pair<std::string, std::array<int, 3>>> test_grids() {
  return {{"1D-x", {0, 1, 1}}, {"1D-y", {1, 0, 1}}, {"1D-z", {1, 1, 0}}, {"3D", {0, 0, 0}}};
}

}  // namespace kband_test
