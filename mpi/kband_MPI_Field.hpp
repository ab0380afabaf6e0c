// kband::mpi::DistField: a 3D field f(i, j, k) block-distributed over a
// CartGrid. Each rank holds its block as a rank-3 View (LayoutLeft by default:
// i fastest, as in Fortran codes) and knows where the block sits in the global
// nx x ny x nz domain. The x-, y- or z-lines of the block convert to and from
// SZ-grouped batches (kband::field_to_lines / lines_to_field): system
// s = (j + nyl*k, i + nxl*k, i + nxl*j) for x, y, z lines, row r = the local
// index along the line.
#pragma once

#include "kband_MPI_Grid.hpp"

namespace kband {
namespace mpi {

template <class T, class Layout = Kokkos::LayoutLeft,
          class MemSpace = Kokkos::DefaultExecutionSpace::memory_space>
class DistField {
 public:
  using value_type = T;
  using memory_space = MemSpace;
  using view_type = Kokkos::View<T***, Layout, MemSpace>;

  DistField() = default;

  /// Allocates this rank's block of the decomposition `dec` of `grid`
  /// (validated collectively). Zero-initialised.
  DistField(const std::string& label, const CartGrid& grid, const Decomposition& dec) : grid_(grid), dec_(dec) {
    kband::impl::ProfilingRegion region("kband::mpi::DistField");
    dec_.validate(grid_, "kband::mpi::DistField");
    for (int d = 0; d < 3; ++d) {
      const Direction dir = static_cast<Direction>(d);
      local_[d] = dec_.count(dir, grid_.coord(dir));
      offset_[d] = dec_.offset(dir, grid_.coord(dir));
    }
    data_ = view_type(label, local_[0], local_[1], local_[2]);
  }

  /// Balanced blocks of a global domain (Decomposition::balanced).
  DistField(const std::string& label, const CartGrid& grid, std::array<int, 3> global)
      : DistField(label, grid, Decomposition::balanced(grid, global)) {}

  /// This rank's block, extents (local_extent(X), local_extent(Y), local_extent(Z)).
  const view_type& local() const { return data_; }
  const CartGrid& grid() const { return grid_; }
  const Decomposition& decomposition() const { return dec_; }
  int global_extent(Direction d) const { return dec_.global[static_cast<int>(d)]; }
  int local_extent(Direction d) const { return local_[static_cast<int>(d)]; }
  /// Global index of local index 0 along d.
  int offset(Direction d) const { return offset_[static_cast<int>(d)]; }
  /// Number of `d`-directed lines in the block (the systems of one line batch).
  int nlines(Direction d) const {
    const int k = static_cast<int>(d);
    return local_[(k + 1) % 3] * local_[(k + 2) % 3];
  }

 private:
  CartGrid grid_;
  Decomposition dec_;
  std::array<int, 3> local_ = {0, 0, 0}, offset_ = {0, 0, 0};
  view_type data_;
};

/// A GroupedBatch sized for the `dir`-lines of the local block of `f`:
/// nsys = f.nlines(dir), n = f.local_extent(dir).
template <int SZ, class T, class L, class M>
GroupedBatch<T, SZ, M> make_lines(const std::string& label, const DistField<T, L, M>& f, Direction dir) {
  kband::impl::ProfilingRegion region("kband::mpi::make_lines");
  return GroupedBatch<T, SZ, M>(label, f.nlines(dir), f.local_extent(dir));
}

/// Local block -> its `dir`-lines (SZ layout); no communication, no fence.
template <class Exec, class T, class L, class M, class B>
void to_lines(const Exec& exec, Direction dir, const DistField<T, L, M>& f, const B& lines) {
  kband::impl::ProfilingRegion region("kband::mpi::to_lines");
  field_to_lines(exec, dir, f.local(), lines);
}

/// `dir`-lines (SZ layout) -> local block; no communication, no fence.
template <class Exec, class B, class T, class L, class M>
void from_lines(const Exec& exec, Direction dir, const B& lines, const DistField<T, L, M>& f) {
  kband::impl::ProfilingRegion region("kband::mpi::from_lines");
  lines_to_field(exec, dir, lines, f.local());
}

/// The whole global field on the host: on rank `root` of grid.comm(), or on
/// every rank when root < 0 (MPI_Gatherv / MPI_Allgatherv; collective, fences
/// through the host copy of the local block). Other ranks get an empty View.
/// For checks and output of small fields, not for performance.
template <class T, class L, class M>
Kokkos::View<T***, Kokkos::LayoutLeft, Kokkos::HostSpace> gather(const DistField<T, L, M>& f, int root = -1) {
  kband::impl::ProfilingRegion region("kband::mpi::gather");
  const CartGrid& g = f.grid();
  const Decomposition& dec = f.decomposition();
  const int p = g.size();
  std::vector<int> counts(p), displs(p);
  std::vector<std::array<int, 6>> box(p);  // offset and extent of every rank's block
  for (int r = 0; r < p; ++r) {
    int c[3];
    check(MPI_Cart_coords(g.comm(), r, 3, c), "MPI_Cart_coords");
    long long cnt = 1;
    for (int d = 0; d < 3; ++d) {
      box[r][d] = dec.offset(static_cast<Direction>(d), c[d]);
      box[r][3 + d] = dec.count(static_cast<Direction>(d), c[d]);
      cnt *= box[r][3 + d];
    }
    counts[r] = static_cast<int>(cnt);
    displs[r] = r ? displs[r - 1] + counts[r - 1] : 0;
  }
  Kokkos::View<T***, Kokkos::LayoutLeft, Kokkos::HostSpace> mine("kband::mpi::gather_local", f.local_extent(Direction::X),
                                                                 f.local_extent(Direction::Y),
                                                                 f.local_extent(Direction::Z));
  {
    auto h = Kokkos::create_mirror_view(f.local());
    Kokkos::deep_copy(h, f.local());
    Kokkos::deep_copy(mine, h);
  }
  const bool all = root < 0, here = all || g.rank() == root;
  std::vector<T> buf(here ? static_cast<size_t>(displs[p - 1]) + counts[p - 1] : 0);
  if (all)
    check(MPI_Allgatherv(mine.data(), counts[g.rank()], datatype<T>(), buf.data(), counts.data(), displs.data(),
                         datatype<T>(), g.comm()),
          "MPI_Allgatherv");
  else
    check(MPI_Gatherv(mine.data(), counts[g.rank()], datatype<T>(), buf.data(), counts.data(), displs.data(),
                      datatype<T>(), root, g.comm()),
          "MPI_Gatherv");
  Kokkos::View<T***, Kokkos::LayoutLeft, Kokkos::HostSpace> out("kband::mpi::gather", here ? dec.global[0] : 0,
                                                                here ? dec.global[1] : 0, here ? dec.global[2] : 0);
  if (!here) return out;
  for (int r = 0; r < p; ++r) {
    const auto& b = box[r];
    size_t q = displs[r];
    for (int k = 0; k < b[5]; ++k)
      for (int j = 0; j < b[4]; ++j)
        for (int i = 0; i < b[3]; ++i) out(b[0] + i, b[1] + j, b[2] + k) = buf[q++];
  }
  return out;
}

}  // namespace mpi
}  // namespace kband
