// Conjugate Gradient over CDS and dense matrices (seed 003, made fast).
//
//   kband::CGResult res = kband::cg(exec, A, b, x, opt, CGPreconditioner::Line);
//   auto solver = kband::make_cg_solver(exec, A, CGPreconditioner::Jacobi);  // reusable
//   kband::CGResult res = solver.solve(exec, b, x, opt);
//
// A is a kband::CDSMatrix<T, Mem> or a dense kband::DenseMatrix<T, Mem> (n, n),
// symmetric positive definite; b and x are Kokkos::View<T*, Mem> of extent n
// (distinct). x is the initial guess on entry and the last iterate on return.
// T is float or double. The stopping test is seed 003's: ||r_k||_2 <= tol
// ||r_0||_2 with the recursively updated residual.
//
// Status (CGResult::status): Converged; MaxIterations; NotSPD (breakdown,
// p^T A p <= 0: "matrix not SPD", x = the last iterate before it); PreconditionerNotSPD;
// NonFinite (b, x0 or A give a non-finite r_0: nothing is iterated, x is
// unchanged; or a NaN/Inf appeared later). Never a silent NaN.
//
// Dense matrices: kband reads about half of A, the upper triangle in tiles
// of 128 x 128 (the diagonal tiles whole), as BLAS symv does: A must be
// symmetric, which CG requires anyway. A LayoutLeft matrix is read as its
// transpose. One more kernel per iteration adds the tiles' partial products
// (a deterministic sum, no atomics).
//
// CDS matrices: the solver's constructor checks (one pass over the matrix,
// one fence) whether the offsets come in +-o pairs and the values are
// exactly symmetric. If so the product reads the main and upper diagonals
// only and takes A(i, i - o) from row i - o's +o entry (2D Poisson: 3 of 5
// diagonals, 1D Laplacian: 2 of 3); `upper_only()` tells. Otherwise every
// diagonal is read. When each of those diagonals also holds one value on
// all its rows (constant coefficients, as the 1D Laplacian's 2 and -1), the
// product takes those values and reads no matrix (`constant_diagonals()`;
// CGOptions::constant_diagonals = false reads it all the same). The solver
// keeps these choices: change the matrix's values and build a new solver, as
// for the line preconditioner's factors.
//
// Speed: on GPUs one kernel per iteration on a CDS matrix without a
// preconditioner or with Jacobi (CGOptions::reductions, CGReductions::One:
// residual and x update, direction, SpMV and all five sums fused; beta's
// numerator r_{k+1}.z_{k+1} comes from iteration k's sums), two elsewhere
// (fused direction + SpMV + p.Ap + the deferred x update; fused residual
// update + r.r); narrow-band CDS matrices whose vectors and read diagonals
// fit 48 MiB, and whose rows give the device enough teams, take a
// team-per-chunk kernel that forms A p again instead of storing it and
// updates r and p in place (6 vectors an iteration, not 8; narrow_band(),
// CGOptions::narrow_band). No host synchronisation inside the iteration: the host
// reads the residual history every `check_every` iterations. The kernels of
// iterations after the stop do no work (their cost is the launches), so
// iteration counts and results are those of checking every iteration. The solve returns a host value, so
// it fences at those checks and at the end.
//
// Preconditioners: Jacobi (z = r / diag A) and Line (CDS only): the
// tridiagonal part of A (offsets -1, 0, +1), split into independent lines where
// both couplings of consecutive rows are zero (2D Poisson: the grid lines),
// solved exactly each iteration by a kernel that also updates the residual
// and forms r.r and r.z (GPUs: a group of threads per line, each sweeping a
// chunk of rows, the chunks joined by a scan; CPUs: Thomas, a line per
// thread). Line setup reads the matrix to the host once and factors the
// lines there (one factor when every line has the same coefficients), in
// the solver's constructor.
//
// Zebra (CDS only): symmetric red-black line Gauss-Seidel on those lines,
// run as CG on the odd lines' Schur complement, preconditioned by their own
// line solves (impl/kband_CGZebra_impl.hpp). The lines must all have one
// length, and every other stored entry must join a line to the one before or
// after it (2D Poisson: +-nx; a 9-point stencil: +-nx, +-nx +-1); kband::Error
// otherwise. It needs about half the iterations of Line, each on half the
// unknowns with two half batches of line solves. x0's even lines are not
// used (they are solved from the odd ones); CGResult counts the reduced
// iterations, and its history is relative to the residual of x0's odd lines
// with the even lines solved. On GPUs (CGReductions::Auto) it runs two
// kernels an iteration, one reduction (ZebraBlackOne), where a black line
// fits team scratch (lines of up to about 1100 rows in double, 2200 in
// float); else three, two reductions.
#pragma once

#include "impl/kband_CGZebra_impl.hpp"

#include <cmath>
#include <memory>

namespace kband {

namespace impl {
template <class Exec, class Matrix>
struct cg_operator;
template <class Exec, class T, class Mem>
struct cg_operator<Exec, CDSMatrix<T, Mem>> {
  using type = CDSOperator<Exec, T, Mem>;
  using value_type = T;
  static type make(const Exec& exec, const CDSMatrix<T, Mem>& A) {
    check_matrix("kband::cg", A);
    return type(exec, A);
  }
};
template <class Exec, class T, class... P>
struct cg_operator<Exec, Kokkos::View<T**, P...>> {
  using VA = Kokkos::View<T**, P...>;
  using type = DenseOperator<Exec, typename VA::non_const_value_type, typename Exec::memory_space, VA>;
  using value_type = typename VA::non_const_value_type;
  static type make(const Exec& exec, const VA& A) {
    dense_n("kband::cg", A);
    return type(exec, A);
  }
};
}  // namespace impl

/// A CG solver bound to one matrix and preconditioner; holds its work vectors
/// (4 n plus n for a preconditioner, plus 2 n once a solve has run the
/// one-reduction form, and the narrow-band kernel's halo buffers) and the
/// line factorisation, so repeated solves allocate nothing after the first. Matrix: CDSMatrix<T, Mem> or
/// DenseMatrix<T, Mem>.
template <class Exec, class Matrix>
class CGSolver {
  using traits = impl::cg_operator<Exec, Matrix>;

 public:
  using value_type = typename traits::value_type;
  using memory_space = typename Exec::memory_space;
  using vector_type = Kokkos::View<value_type*, memory_space>;

  CGSolver(const Exec& exec, const Matrix& A, CGPreconditioner prec = CGPreconditioner::None)
      : op_(traits::make(exec, A)),
        prec_(prec),
        line_(make_line(exec, A, prec)),
        zebra_(make_zebra(exec, A, prec)),
        driver_(zebra_ ? nullptr : std::make_shared<Driver>(exec, op_, prec, line_.get())) {
    static_assert(std::is_same<value_type, float>::value || std::is_same<value_type, double>::value,
                  "kband::CGSolver: float and double are supported");
  }

  /// Solves A x = b from the initial guess in x (see the file comment). Fences.
  CGResult solve(const Exec& exec, const vector_type& b, const vector_type& x, const CGOptions& opt = {}) {
    impl::ProfilingRegion region("kband::cg");
    const char* fn = "kband::cg";
    impl::check_vector<Exec>(fn, "b", b, op_.n());
    impl::check_vector<Exec>(fn, "x", x, op_.n());
    impl::require(b.data() != x.data(), impl::concat(fn, ": x must not alias b"));
    impl::require(opt.tol >= 0 && std::isfinite(opt.tol), impl::concat(fn, ": tol=", opt.tol, " must be finite and >= 0"));
    impl::require(opt.max_iterations >= 0, impl::concat(fn, ": max_iterations=", opt.max_iterations, " must be >= 0"));
    impl::require(opt.check_every >= 1, impl::concat(fn, ": check_every=", opt.check_every, " must be >= 1"));
    if (zebra_) return zebra_->solve(exec, b, x, opt);
    return driver_->solve(exec, b, x, opt, impl::LocalComm{});
  }

  CGPreconditioner preconditioner() const { return prec_; }
  /// True when the product reads only the matrix's main and upper diagonals
  /// (dense: its upper triangle): always for dense matrices, and for CDS
  /// matrices whose offsets come in +-o pairs and whose values were exactly
  /// symmetric when the solver was built. Other CDS matrices, and every
  /// matrix under the zebra preconditioner, are read whole.
  bool upper_only() const { return !zebra_ && op_.upper_only(); }
  /// True when the one-reduction form (CGReductions::One, no preconditioner
  /// or Jacobi; CGOptions::work_items 0) runs the narrow-band kernel: CDS
  /// matrices whose half bandwidth is at most a quarter of a team's rows
  /// (GPUs 2048, hosts 512), and whose x, r, p and read diagonals take at
  /// most KBAND_CG_BAND_MAX_MIB (48 MiB; `constant_diagonals`: the value of
  /// CGOptions::constant_diagonals the solve runs with).
  /// It moves the matrix and 6 vectors an iteration (r and p updated in
  /// place, A p formed again from p), against 8. `mode`: the value of
  /// CGOptions::narrow_band (Auto also asks for enough rows to fill the
  /// device; CGBand).
  bool narrow_band(const bool constant_diagonals = true, const CGBand mode = CGBand::Auto) const {
    return !zebra_ && !line_ && mode != CGBand::Never &&
           impl::cg_narrow_band(op_, constant_diagonals, mode == CGBand::Always, 0);
  }
  /// True when the matrix was found symmetric with each main and upper
  /// diagonal one value on all its rows (a constant-coefficient stencil such
  /// as the 1D Laplacian) when the solver was built: the product then uses
  /// those values and reads no matrix at all (unless
  /// CGOptions::constant_diagonals is false). Not under the zebra
  /// preconditioner.
  bool constant_diagonals() const { return !zebra_ && impl::cg_constant(op_, 0); }
  /// Line and zebra preconditioners: number and length of the lines (0 without them).
  int lines() const { return line_ ? line_->lines() : (zebra_ ? zebra_->lines() : 0); }
  int line_length() const { return line_ ? line_->line_length() : (zebra_ ? zebra_->line_length() : 0); }

 private:
  using Op = typename traits::type;
  using Line = impl::LineSolver<value_type, memory_space>;
  template <class M>
  static std::shared_ptr<Line> make_line(const Exec& exec, const M& A, CGPreconditioner prec) {
    if (prec != CGPreconditioner::Line) return nullptr;
    return line_of(exec, A);
  }
  static std::shared_ptr<Line> line_of(const Exec& exec, const CDSMatrix<value_type, memory_space>& A) {
    return std::make_shared<Line>(exec, A);
  }
  template <class M>
  static std::shared_ptr<Line> line_of(const Exec&, const M&) {
    throw Error("kband::cg: the line preconditioner needs a CDSMatrix (dense matrices: None or Jacobi)");
  }
  using Zebra = impl::ZebraSolver<Exec, value_type, memory_space>;
  template <class M>
  static std::shared_ptr<Zebra> make_zebra(const Exec& exec, const M& A, CGPreconditioner prec) {
    if (prec != CGPreconditioner::Zebra) return nullptr;
    return zebra_of(exec, A);
  }
  static std::shared_ptr<Zebra> zebra_of(const Exec& exec, const CDSMatrix<value_type, memory_space>& A) {
    return std::make_shared<Zebra>(exec, A);
  }
  template <class M>
  static std::shared_ptr<Zebra> zebra_of(const Exec&, const M&) {
    throw Error("kband::cg: the zebra preconditioner needs a CDSMatrix (dense matrices: None or Jacobi)");
  }
  using Driver = impl::CGDriver<Exec, value_type, Op, impl::LocalComm>;

  Op op_;
  CGPreconditioner prec_;
  std::shared_ptr<Line> line_;
  std::shared_ptr<Zebra> zebra_;
  std::shared_ptr<Driver> driver_;  // all but Zebra
};

template <class Exec, class Matrix>
CGSolver<Exec, Matrix> make_cg_solver(const Exec& exec, const Matrix& A, CGPreconditioner prec = CGPreconditioner::None) {
  return CGSolver<Exec, Matrix>(exec, A, prec);
}

/// One-shot CG: builds a CGSolver (work vectors, line factorisation) and solves.
template <class Exec, class Matrix, class VB, class VX>
CGResult cg(const Exec& exec, const Matrix& A, const VB& b, const VX& x, const CGOptions& opt = {},
            CGPreconditioner prec = CGPreconditioner::None) {
  CGSolver<Exec, Matrix> s(exec, A, prec);
  return s.solve(exec, b, x, opt);
}

}  // namespace kband
