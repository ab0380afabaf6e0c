// Halo and boundary-row exchanges against a global field of known values:
// every direction, depth 1..4, periodic and not, 1D and 3D grids with unequal
// blocks, both buffer paths (direct and staged through host mirrors).
#include "test_mpi_common.hpp"

namespace {

using namespace kband_test;
using kband::Direction;
using Field = kband::mpi::DistField<double>;
using Lines = kband::GroupedBatch<double, kSZ>;

/// The global field: unique, exactly representable values.
double gval(int I, int J, int K) { return 1.0 + I + 128.0 * J + 16384.0 * K; }

/// Number of wrong halo entries of one side: lo (side 0) or hi (side 1).
long long check_side(const Field& f, Direction dir, int depth, const Lines& halo, int side, bool has_neighbour,
                     std::string& first) {
  Host<Lines> h(halo);
  h.to_host();
  const int d = static_cast<int>(dir);
  const int nl = f.local_extent(dir), N = f.global_extent(dir);
  kband::impl::LineMap map{f.local_extent(Direction::X), f.local_extent(Direction::Y), f.local_extent(Direction::Z),
                           dir};
  long long bad = padding_damage(h);
  for (int s = 0; s < halo.nsys(); ++s)
    for (int r = 0; r < depth; ++r) {
      int idx[3];
      map.point(s, 0, idx[0], idx[1], idx[2]);
      int g[3] = {f.offset(Direction::X) + idx[0], f.offset(Direction::Y) + idx[1], f.offset(Direction::Z) + idx[2]};
      g[d] = side == 0 ? f.offset(dir) - depth + r : f.offset(dir) + nl + r;
      g[d] = (g[d] + N) % N;
      const double expect = has_neighbour ? gval(g[0], g[1], g[2]) : -1.0;  // -1: untouched poison
      if (!same_bits(h(s, r), expect)) {
        if (!bad && first.empty())
          first = kband::impl::concat("side ", side, " s=", s, " r=", r, ": ", h(s, r), " expected ", expect);
        ++bad;
      }
    }
  return bad;
}

TEST(MPIHalo, KnownGlobalField) {
  long long checked = 0;
  for (const auto& gc : test_grids())
    for (bool periodic : {true, false}) {
      kband::mpi::CartGrid grid(MPI_COMM_WORLD, gc.second, {periodic, periodic, periodic});
      std::array<int, 3> local{}, global{};
      unequal_blocks(grid, {4, 5, 4}, local, global);
      Field f("f", grid, kband::mpi::Decomposition::from_local(grid, global, local));
      fill_field(f, gval);
      for (Direction dir : {Direction::X, Direction::Y, Direction::Z}) {
        Lines u = kband::mpi::make_lines<kSZ>("u", f, dir);
        Exec exec;
        kband::mpi::to_lines(exec, dir, f, u);
        for (int depth = 1; depth <= 4; ++depth)
          for (auto path : test_paths()) {
            kband::mpi::CommConfig cfg;
            cfg.path = path;
            kband::mpi::HaloExchange<double, kSZ> hx(grid, dir, depth, u.nsys(), u.n(), cfg);
            EXPECT_EQ(hx.direct(), path != kband::mpi::BufferPath::Staged);
            Lines lo = hx.make_halo("lo"), hi = hx.make_halo("hi");
            for (const Lines& b : {lo, hi}) {
              Host<Lines> h(b);
              poison(h, -1.0);
              h.to_device();
            }
            hx.exchange(exec, u, lo, hi);
            exec.fence();
            std::string first;
            const long long bad = check_side(f, dir, depth, lo, 0, grid.prev(dir) != MPI_PROC_NULL, first) +
                                  check_side(f, dir, depth, hi, 1, grid.next(dir) != MPI_PROC_NULL, first);
            EXPECT_EQ(bad, 0) << gc.first << (periodic ? " periodic" : " non-periodic") << " dir "
                              << dir_name(dir) << " depth " << depth << " " << kband::mpi::path_name(path) << ": "
                              << first;
            ++checked;
          }
      }
    }
  EXPECT_EQ(checked, 4 * 2 * 3 * 4 * static_cast<long long>(test_paths().size()));
}

/// Boundary buffers: rank with coordinate c along dir sends 1000 c + 10 side + e;
/// from_prev / from_next must hold the neighbours' to_next / to_prev.
TEST(MPIHalo, BoundaryExchange) {
  for (const auto& gc : test_grids())
    for (bool periodic : {true, false})
      for (Direction dir : {Direction::X, Direction::Y, Direction::Z})
        for (auto path : test_paths()) {
          kband::mpi::CartGrid grid(MPI_COMM_WORLD, gc.second, {periodic, periodic, periodic});
          kband::mpi::CommConfig cfg;
          cfg.path = path;
          const int m = 13;
          kband::mpi::BoundaryExchange<double> bx(grid, dir, m, cfg);
          const int p = grid.dims(dir), c = grid.coord(dir);
          auto value = [](int coord, int side, int e) { return 1000.0 * coord + 10.0 * side + e; };
          for (int side = 0; side < 2; ++side) {
            auto v = side == 0 ? bx.to_prev() : bx.to_next();
            auto h = Kokkos::create_mirror_view(v);
            for (int e = 0; e < m; ++e) h(e) = value(c, side, e);
            Kokkos::deep_copy(v, h);
            auto r = side == 0 ? bx.from_prev() : bx.from_next();
            Kokkos::deep_copy(r, -1.0);
          }
          // Over CUDA IPC a neighbour copies straight into this rank's receive
          // buffer as soon as it starts: every rank poisons before any starts.
          MPI_Barrier(grid.comm());
          Exec exec;
          bx.start(exec);
          bx.finish(exec);
          exec.fence();
          long long bad = 0;
          for (int side = 0; side < 2; ++side) {
            auto r = side == 0 ? bx.from_prev() : bx.from_next();
            auto h = Kokkos::create_mirror_view(r);
            Kokkos::deep_copy(h, r);
            const int nc = side == 0 ? c - 1 : c + 1;
            const bool exists = periodic || (nc >= 0 && nc < p);
            // CudaIPC receives into alternating buffers: the poisoned one is not the one
            // read after the exchange, so only existing neighbours are checked there
            if (!exists && path == kband::mpi::BufferPath::CudaIPC) continue;
            for (int e = 0; e < m; ++e) {
              // prev's to_next (side 1) arrives in from_prev, next's to_prev (side 0) in from_next
              const double expect = exists ? value((nc + p) % p, 1 - side, e) : -1.0;
              bad += same_bits(h(e), expect) ? 0 : 1;
            }
          }
          EXPECT_EQ(bad, 0) << gc.first << " dir " << dir_name(dir) << (periodic ? " periodic " : " non-periodic ")
                            << kband::mpi::path_name(path);
        }
}

}  // namespace
