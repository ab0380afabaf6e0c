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

}  // namespace mpi
}  // namespace kband
