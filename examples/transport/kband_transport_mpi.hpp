// kband example, transport RHS over a 3D process grid: the compact operators
// of kband_transport.hpp applied by kband::mpi::DistDerivative (DistD2 with
// one subdomain per rank along each split direction; halo and boundary-row
// exchanges with the neighbours only). Needs the kband::mpi target.
//
//   kband::mpi::CartGrid grid(MPI_COMM_WORLD, {0, 0, 0});       // periodic 3D grid
//   kband_transport::Box box = kband_transport::mpi_box(grid, {N, N, N});
//   kband_transport::SkewTransport<double> tr(exec, box, nu, kband_transport::MPIOperator<double>::factory(grid));
//
// A direction split over ranks needs at least kband::distd2_min_rows rows
// per rank (40 for the sixth-order first derivative in double); every rank
// throws the same kband::Error otherwise.
#pragma once

#include "kband_transport.hpp"

#include <kband_MPI.hpp>

namespace kband_transport {

/// A compact operator along the d-lines of a block-distributed field.
template <class T, int SZ = kband::default_sz<Exec>::value>
class MPIOperator : public LineOperator<T, SZ> {
 public:
  MPIOperator(const Exec& exec, const kband::mpi::CartGrid& grid, Direction d, const kband::CompactScheme& scheme,
              int nsys, int n)
      : op_(exec, grid, d, scheme, nsys, n) {}

  /// Collective over the grid. With a timing counter the phases are timed
  /// by DistDerivative (fences after each); communication is its own row.
  void apply(const Exec& exec, const Lines<T, SZ>& in, const Lines<T, SZ>& out, MovementCounter* c, double fields,
             const std::string& what) override {
    kband::mpi::PhaseTimes pt;
    op_.apply(exec, in, out, c && c->timed() ? &pt : nullptr);
    if (!c) return;
    c->add("distd2 decouple, " + what, 2 * fields, pt.decouple);
    c->add("distd2 substitute, " + what, 2 * fields, pt.substitute);
    c->add("halo + boundary rows (MPI)", 0, pt.comm());
  }

  static OperatorFactory<T, SZ> factory(const kband::mpi::CartGrid& grid) {
    return [grid](const Exec& exec, Direction d, const kband::CompactScheme& scheme, int nsys, int n) {
      return std::unique_ptr<LineOperator<T, SZ>>(new MPIOperator(exec, grid, d, scheme, nsys, n));
    };
  }

 private:
  kband::mpi::DistDerivative<T, SZ, Mem> op_;
};

/// This rank's block of a balanced decomposition of the global grid.
inline Box mpi_box(const kband::mpi::CartGrid& grid, const std::array<int, 3>& global) {
  const auto dec = kband::mpi::Decomposition::balanced(grid, global);
  Box b;
  b.global = global;
  for (int d = 0; d < 3; ++d) {
    const Direction dir = static_cast<Direction>(d);
    b.local[d] = dec.count(dir, grid.coord(dir));
    b.offset[d] = dec.offset(dir, grid.coord(dir));
  }
  return b;
}

/// Sum of v over the ranks of comm.
inline double sum_all(MPI_Comm comm, double v) {
  double s = 0;
  kband::mpi::check(MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, comm), "MPI_Allreduce");
  return s;
}

}  // namespace kband_transport
