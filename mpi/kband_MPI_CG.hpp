// Distributed CG over MPI: a CDS matrix split into contiguous row blocks.
//
//   auto Ad = kband::mpi::distribute(exec, comm, A);         // every rank keeps its rows of A
//   kband::CGResult res = kband::mpi::cg(exec, Ad, b, x, opt, kband::CGPreconditioner::Jacobi);
//
// Rank r owns the global rows [first, first + rows) (block_rows: the first
// n % size ranks hold one row more); b and x are its rows (Views of extent
// rows). Each iteration exchanges a halo of w = max |offset| entries of the
// search direction with the previous and next rank (MPI_Sendrecv, staged
// through host buffers, so any MPI works) and completes every reduction with
// MPI_Allreduce; the stop decision is agreed by all ranks. The kernels,
// stopping rule, statuses and result are those of kband::cg (solvers/kband_CG.hpp);
// the answers equal the single-rank solve up to the order of the sums
// (iteration counts equal in the tests on 1..4 ranks). Preconditioners: None
// and Jacobi (the line and zebra preconditioners are not distributed). Every
// rank needs at least w rows; argument errors throw the same kband::Error on
// every rank.
// An exactly symmetric matrix (as kband::cg decides it) is multiplied from
// its main and upper diagonals only: distribute() keeps the previous block's
// last w rows of those beside the block, once, for the rows near its start.
#pragma once

#include "kband_MPI.hpp"

#include <kband_CG.hpp>

#include <mpi.h>

#include <vector>

namespace kband {
namespace mpi {

/// First row and row count of `rank`'s block of n rows over `size` ranks.
inline void block_rows(long long n, int size, int rank, int& first, int& rows) {
  const long long base = n / size, extra = n % size;
  rows = static_cast<int>(base + (rank < extra ? 1 : 0));
  first = static_cast<int>(rank * base + (rank < extra ? rank : extra));
}

/// This rank's row block of a global CDS matrix: data(i, d) = A(first + i,
/// first + i + offsets[d]) for i < rows, LayoutLeft (rows, ndiag), zero
/// where the column is outside the global matrix.
template <class T, class Mem = Kokkos::DefaultExecutionSpace::memory_space>
struct DistCDSMatrix {
  using data_view = typename CDSMatrix<T, Mem>::data_view;
  MPI_Comm comm = MPI_COMM_NULL;
  int global_n = 0, first = 0, rows = 0, halo = 0;
  std::vector<int> host_offsets;
  Kokkos::View<int*, Mem> offsets;
  data_view data;
  /// Symmetric matrices: the upper half's columns, and rows first - halo ..
  /// first - 1 of the global matrix (zero above row 0), extent (halo, ndiag).
  bool symmetric = false;
  kband::impl::CDSUpper up;
  data_view lower;
};

namespace impl {

template <class T>
MPI_Datatype cg_datatype() {
  return std::is_same<T, double>::value ? MPI_DOUBLE : MPI_FLOAT;
}

/// Global sums of the history slots and the agreed stop decision.
template <class T>
struct MPIComm {
  MPI_Comm comm;
  template <class Exec, class Slot>
  void sum(const Exec& exec, const Slot& slot) const {
    using V = typename Slot::non_const_value_type;
    static_assert(sizeof(V) % sizeof(T) == 0, "kband::mpi::cg: a history slot holds values of T");
    V v;
    exec.fence();
    Kokkos::deep_copy(v, slot);
    check(MPI_Allreduce(MPI_IN_PLACE, reinterpret_cast<T*>(&v), static_cast<int>(sizeof(V) / sizeof(T)), cg_datatype<T>(),
                        MPI_SUM, comm),
          "MPI_Allreduce");
    Kokkos::deep_copy(slot, v);
  }
  bool agree(bool stop) const { return !all_ok(!stop, comm); }
};

template <class Row, class T, class Mem>
struct HaloSpmv {
  Row row;
  Kokkos::View<const T*, Mem> p;
  Kokkos::View<T*, Mem> q;
  int h, lo, hi;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    q(i) = row.apply(i, kband::impl::CGShifted<T, Mem>{p, h}, lo, hi);
  }
};

template <class T, class Mem>
struct CopyIn {
  Kokkos::View<const T*, Mem> x;
  Kokkos::View<T*, Mem> ext;
  int h;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const { ext(i + h) = x(i); }
};

/// The distributed operator for kband::impl::CGDriver: split K1 (direction,
/// halo exchange, q = A p and p.Ap on the block).
template <class Exec, class T, class Mem>
struct DistCDSOperator {
  using Row = kband::impl::CDSRow<false, typename DistCDSMatrix<T, Mem>::data_view, Kokkos::View<int*, Mem>>;
  using SymRow = kband::impl::CDSSymRow<typename DistCDSMatrix<T, Mem>::data_view, true>;
  DistCDSMatrix<T, Mem> A;
  int prev = MPI_PROC_NULL, next = MPI_PROC_NULL;
  std::shared_ptr<std::vector<T>> buf;  // 4 h: send lo, send hi, recv lo, recv hi

  int n() const { return A.rows; }
  int global_n() const { return A.global_n; }
  int halo() const { return A.halo; }
  Row row() const { return Row{A.data, A.offsets, kband::impl::CDSOffsets{}, A.rows}; }
  SymRow sym_row() const { return SymRow{A.data, A.up, A.rows, A.lower, A.halo}; }
  bool upper_only() const { return A.symmetric; }
  int lo() const { return -std::min(A.halo, A.first); }
  int hi() const { return A.rows + std::min(A.halo, A.global_n - A.first - A.rows); }

  void diagonal(const Exec& exec, const Kokkos::View<T*, Mem>& out) const {
    int d0 = -1;
    for (size_t d = 0; d < A.host_offsets.size(); ++d)
      if (A.host_offsets[d] == 0) d0 = static_cast<int>(d);
    Kokkos::parallel_for("kband::mpi::cg::diagonal", kband::impl::Range<Exec>(exec, 0, n()),
                         kband::impl::CDSDiagonal<typename DistCDSMatrix<T, Mem>::data_view, T, Mem>{A.data, d0, out});
  }

  /// Fills the halo entries of p (extent rows + 2h) from the neighbours.
  void exchange(const Exec& exec, const Kokkos::View<T*, Mem>& p) const {
    const int h = A.halo;
    if (h == 0) return;
    using HostView = Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    T* b = buf->data();
    exec.fence();
    Kokkos::deep_copy(HostView(b, h), Kokkos::subview(p, Kokkos::make_pair(h, 2 * h)));
    Kokkos::deep_copy(HostView(b + h, h), Kokkos::subview(p, Kokkos::make_pair(A.rows, A.rows + h)));
    const MPI_Datatype t = cg_datatype<T>();
    check(MPI_Sendrecv(b, h, t, prev, 801, b + 3 * h, h, t, next, 801, A.comm, MPI_STATUS_IGNORE), "MPI_Sendrecv");
    check(MPI_Sendrecv(b + h, h, t, next, 802, b + 2 * h, h, t, prev, 802, A.comm, MPI_STATUS_IGNORE), "MPI_Sendrecv");
    if (prev != MPI_PROC_NULL) Kokkos::deep_copy(Kokkos::subview(p, Kokkos::make_pair(0, h)), HostView(b + 2 * h, h));
    if (next != MPI_PROC_NULL)
      Kokkos::deep_copy(Kokkos::subview(p, Kokkos::make_pair(A.rows + h, A.rows + 2 * h)), HostView(b + 3 * h, h));
  }

  template <class VX>
  void start(const Exec& exec, const VX& x, const Kokkos::View<T*, Mem>& ext, const Kokkos::View<T*, Mem>& q) const {
    Kokkos::parallel_for("kband::mpi::cg::copy_x", kband::impl::Range<Exec>(exec, 0, n()), CopyIn<T, Mem>{x, ext, A.halo});
    exchange(exec, ext);
    Kokkos::parallel_for("kband::mpi::cg::spmv", kband::impl::Range<Exec>(exec, 0, n()),
                         HaloSpmv<Row, T, Mem>{row(), ext, q, A.halo, lo(), hi()});
  }
  template <class Step, class Slot>
  void step(const Exec& exec, const Step& s, const Kokkos::View<T*, Mem>& q, const Slot& pap) const {
    Kokkos::parallel_for("kband::mpi::cg::direction", kband::impl::CGPolicy<Exec>(exec, 0, s.st.chunks()),
                         kband::impl::CGDirection<T, Mem, Step::prec>{s});
    exchange(exec, s.pnew);
    constexpr bool blocks = !kband::impl::is_device_exec<Exec>::value;
    if (A.symmetric)
      Kokkos::parallel_reduce("kband::mpi::cg::apply", kband::impl::CGPolicy<Exec>(exec, 0, s.st.chunks()),
                              kband::impl::CGHaloApply<SymRow, T, Mem, blocks>{s.st, sym_row(), s.pnew, q, A.halo, lo(), hi()},
                              pap);
    else
      Kokkos::parallel_reduce("kband::mpi::cg::apply", kband::impl::CGPolicy<Exec>(exec, 0, s.st.chunks()),
                              kband::impl::CGHaloApply<Row, T, Mem, blocks>{s.st, row(), s.pnew, q, A.halo, lo(), hi()},
                              pap);
  }
  template <class K>
  void finish(const Exec& exec, const K& k) const {
    Kokkos::parallel_for("kband::mpi::cg::finish", kband::impl::CGPolicy<Exec>(exec, 0, k.s.st.chunks()), k);
  }
};

}  // namespace impl

/// Every rank takes its row block of the global matrix A (held by every
/// rank, same on all). Collective; throws on every rank when a block would
/// have fewer rows than the half bandwidth (or none).
template <class Exec, class T, class Mem>
DistCDSMatrix<T, Mem> distribute(const Exec& exec, MPI_Comm comm, const CDSMatrix<T, Mem>& A) {
  kband::impl::ProfilingRegion region("kband::mpi::distribute");
  int size = 1, rank = 0;
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  DistCDSMatrix<T, Mem> D;
  D.comm = comm;
  D.global_n = A.n();
  D.halo = A.half_bandwidth();
  block_rows(A.n(), size, rank, D.first, D.rows);
  const bool ok = A.n() >= 1 && D.rows >= std::max(1, D.halo);
  if (!all_ok(ok, comm))
    throw Error(kband::impl::concat("kband::mpi::distribute: n=", A.n(), " rows over ", size,
                                    " ranks leaves a block with fewer rows than max(1, half bandwidth ", D.halo, ")"));
  D.host_offsets = A.host_offsets();
  D.offsets = A.offsets();
  D.data = typename DistCDSMatrix<T, Mem>::data_view(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("kband::mpi::cds_block")), D.rows, A.ndiag());
  exec.fence();
  Kokkos::deep_copy(D.data, Kokkos::subview(A.data(), Kokkos::make_pair(D.first, D.first + D.rows), Kokkos::ALL));
  // the same global matrix on every rank: the same decision everywhere
  D.symmetric = kband::impl::cds_symmetric(exec, A, D.up);
  if (D.symmetric && D.halo > 0) {
    D.lower = typename DistCDSMatrix<T, Mem>::data_view("kband::mpi::cds_lower", D.halo, A.ndiag());
    const int from = std::max(0, D.first - D.halo);
    Kokkos::deep_copy(Kokkos::subview(D.lower, Kokkos::make_pair(D.halo - (D.first - from), D.halo), Kokkos::ALL),
                      Kokkos::subview(A.data(), Kokkos::make_pair(from, D.first), Kokkos::ALL));
  }
  return D;
}

/// Distributed CG solver bound to one row-block matrix (work vectors reused).
template <class Exec, class T, class Mem = typename Exec::memory_space>
class DistCGSolver {
  using Op = impl::DistCDSOperator<Exec, T, Mem>;

 public:
  using vector_type = Kokkos::View<T*, Mem>;

  DistCGSolver(const Exec& exec, const DistCDSMatrix<T, Mem>& A, CGPreconditioner prec = CGPreconditioner::None)
      : op_(make_op(A, prec)), comm_{A.comm}, driver_(exec, op_, prec, nullptr) {}

  /// b, x: this rank's rows. Collective. Fences.
  CGResult solve(const Exec& exec, const vector_type& b, const vector_type& x, const CGOptions& opt = {}) {
    kband::impl::ProfilingRegion region("kband::mpi::cg");
    const bool ok = static_cast<int>(b.extent(0)) == op_.n() && static_cast<int>(x.extent(0)) == op_.n() &&
                    b.data() != x.data() && opt.tol >= 0 && opt.max_iterations >= 0 && opt.check_every >= 1;
    if (!all_ok(ok, comm_.comm))
      throw Error(kband::impl::concat("kband::mpi::cg: bad arguments on some rank (this rank: b has ", b.extent(0),
                                      ", x has ", x.extent(0), " entries for ", op_.n(),
                                      " rows; x must not alias b; tol >= 0, max_iterations >= 0, check_every >= 1)"));
    return driver_.solve(exec, b, x, opt, comm_);
  }
  /// True when the product reads only the matrix's main and upper diagonals
  /// (as kband::CGSolver::upper_only()).
  bool upper_only() const { return op_.upper_only(); }

 private:
  static Op make_op(const DistCDSMatrix<T, Mem>& A, CGPreconditioner prec) {
    if (!all_ok((prec == CGPreconditioner::None || prec == CGPreconditioner::Jacobi) && A.rows >= 1, A.comm))
      throw Error(
          "kband::mpi::cg: the line and zebra preconditioners are not distributed (use None or Jacobi), or the matrix "
          "is empty");
    int size = 1, rank = 0;
    check(MPI_Comm_size(A.comm, &size), "MPI_Comm_size");
    check(MPI_Comm_rank(A.comm, &rank), "MPI_Comm_rank");
    Op op;
    op.A = A;
    op.prev = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    op.next = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
    op.buf = std::make_shared<std::vector<T>>(4 * static_cast<size_t>(A.halo));
    return op;
  }

  Op op_;
  impl::MPIComm<T> comm_;
  kband::impl::CGDriver<Exec, T, Op, impl::MPIComm<T>> driver_;
};

/// One-shot distributed CG (see the file comment).
template <class Exec, class T, class Mem, class VB, class VX>
CGResult cg(const Exec& exec, const DistCDSMatrix<T, Mem>& A, const VB& b, const VX& x, const CGOptions& opt = {},
            CGPreconditioner prec = CGPreconditioner::None) {
  DistCGSolver<Exec, T, Mem> s(exec, A, prec);
  return s.solve(exec, b, x, opt);
}

}  // namespace mpi
}  // namespace kband
