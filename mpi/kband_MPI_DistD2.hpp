// kband::mpi::DistDerivative: a compact operator (kband::CompactScheme: first
// or second derivative, mid-point interpolation, staggered derivative)
// applied along the x-, y- or z-lines of a block-distributed 3D field, by
// DistD2 (kband_DistD2.hpp) with one subdomain per rank along the direction.
// The seed's four phases:
//
//   1. halo exchange of the 2 rows next to each subdomain end
//   2. distd2_decouple: RHS stencil fused into the forward pass
//   3. exchange of the boundary rows (D_0 to the previous rank, D_{n-1} to the
//      next one; periodic pair between the last and first ranks)
//   4. distd2_couple: the 2x2 systems across both boundaries, substitution.
//
// run as follows (n = local rows):
//  * One message (default, CommConfig::one_message, when every subdomain's
//    plan has far() below epsilon -- true well above the truncation bound):
//    the decoupling runs with zero halos (distd2_decouple_interior; the halos
//    enter linearly) and its kernel stores this subdomain's two end rows and
//    its interior boundary rows straight into the neighbours' receive buffers
//    (CUDA IPC; into the send buffers for MPI otherwise); after one exchange,
//    distd2_couple_one_message adds the halos' share, forms the neighbours'
//    boundary rows from their messages, solves the 2x2 systems and
//    substitutes. Two kernels and one message each way per call.
//  * Two messages (n >= 5 otherwise): the same decoupling sends the end rows;
//    distd2_add_halos adds their share and stores the boundary rows for the
//    neighbours; distd2_couple reads theirs where they arrive.
//  * n < 5, or DistD2Options::exact_reduced: phases 1-4 as listed (with
//    pack / unpack kernels; exact reduced solve: see below).
//
// Only neighbour communication, one or two messages each way per call, through
// GPU-aware MPI, host staging or CUDA IPC (CommConfig::path). A direction
// held by one rank is solved without MPI (Position Only: exact, periodic
// wrap or closures). Periodic operators need a periodic grid direction (when
// split); closed (non-periodic) first / second derivatives use their
// boundary closures on the first and last ranks.
//
//   kband::mpi::DistDerivative<double> d(exec, grid, Direction::X, scheme, nsys, n_local);
//   d.apply(exec, in_lines, out_lines);   // SZ-grouped (nsys, n_local) batches
//   d.apply(exec, in_field, out_field);   // DistField blocks (reorders to lines)
//
// Errors are collective on grid.comm(): operators that differ across ranks,
// line counts that differ within a line of ranks, a subdomain shorter than
// DistD2's truncation bound (kband::distd2_min_rows), a periodic operator on a
// non-periodic split direction, wrong extents at apply() -- every rank throws
// the same kband::Error and nothing is left in flight.
//
// Short subdomains: with DistD2Options::exact_reduced the couplings DistD2
// would drop are kept and the reduced system of the 2P boundary unknowns of
// each line is solved exactly on every rank of the line (an MPI_Allgather of
// the boundary rows along the line replaces step 3; steps 2 and 4 as above).
#pragma once

#include "kband_DistD2.hpp"
#include "kband_MPI_Field.hpp"
#include "kband_MPI_Halo.hpp"

namespace kband {
namespace mpi {

/// Seconds per phase of one DistDerivative::apply (measured with a fence
/// after each phase when a PhaseTimes is passed; accumulated).
struct PhaseTimes {
  double reorder = 0;     // field <-> lines (field-level apply only)
  double halo = 0;        // halo exchange (communication; two-message mode: the wait and the halos' share)
  double decouple = 0;    // distd2_decouple (or distd2_decouple_interior; one rank along the direction: the whole solve)
  double boundary = 0;    // boundary-row exchange (communication)
  double substitute = 0;  // distd2_couple (2x2 systems + substitution)
  double comm() const { return halo + boundary; }
};

template <class T, int SZ = default_sz<>::value, class Mem = Kokkos::DefaultExecutionSpace::memory_space>
class DistDerivative {
 public:
  using lines_type = GroupedBatch<T, SZ, Mem>;

  DistDerivative() = default;

  /// The plan for `nsys` lines of `n` local rows along `dir` on `grid`
  /// (collective on grid.comm(); fences exec). Builds the DistD2 plan of this
  /// rank's subdomain, exchanges the boundary couplings with the neighbours
  /// and allocates the message buffers (GPU-aware, staged or CUDA IPC: `cfg`).
  /// opt.exact_reduced: accept subdomains below the truncation bound and
  /// solve each line's reduced system exactly (see the top of this file).
  template <class Exec>
  DistDerivative(const Exec& exec, const CartGrid& grid, Direction dir, const CompactScheme& scheme, int nsys,
                 int n, const CommConfig& cfg = {}, const DistD2Options& opt = {})
      : grid_(grid), dir_(dir), nsys_(nsys), n_(n) {
    const char* fn = "kband::mpi::DistDerivative";
    kband::impl::ProfilingRegion region(fn);
    MPI_Comm comm = grid.comm();
    require_same_bits(comm, fn, "the operators (kind, boundary, alpha, a, b, h)",
                      {static_cast<double>(scheme.op()), scheme.periodic() ? 1.0 : 0.0, scheme.alpha(), scheme.a(),
                       scheme.b(), scheme.h()});
    require_all(comm, nsys >= 0 && n >= 1,
                kband::impl::concat(fn, ": nsys=", nsys, " and n=", n, " must be >= 0 and >= 1"));
    impl::require_line_uniform(grid, dir, fn, "the number of lines (nsys)", nsys);
    const int P = grid.dims(dir), c = grid.coord(dir);
    require_all(comm, !scheme.periodic() || P == 1 || grid.periodic(dir),
                kband::impl::concat(fn, ": the ", compact_operator_name(scheme.op()),
                                    " is periodic but the grid direction ", static_cast<int>(dir), " split over ", P,
                                    " ranks is not periodic"));
    const DistD2Position pos =
        P == 1 ? DistD2Position::Only
               : (scheme.periodic() ? DistD2Position::Interior
                                    : (c == 0 ? DistD2Position::First
                                              : (c == P - 1 ? DistD2Position::Last : DistD2Position::Interior)));
    require_same(comm, fn, "DistD2Options::exact_reduced", opt.exact_reduced ? 1 : 0);
    collective(comm, [&] { plan_ = DistD2Plan<T, Mem>(exec, scheme, n, pos, opt); });
    lo_ = lines_type("kband::mpi::halo_lo", nsys, 2);
    hi_ = lines_type("kband::mpi::halo_hi", nsys, 2);
    bnd_ = lines_type("kband::mpi::bnd", nsys, 2);
    hc_ = lines_type("kband::mpi::halo_share", nsys, 1);
    direct_ = direct_path<Mem>(cfg);
    if (P > 1 && opt.exact_reduced) {
      setup_reduced(exec, scheme, cfg);
      return;
    }
    if (P > 1) {
      exchange_couplings(comm, cfg.tag_base + 18);
      // one message each way where every subdomain allows it (collective)
      int ok = cfg.one_message && n >= kDistD2SplitMinRows && plan_.far() <= std::numeric_limits<T>::epsilon();
      int all = 0;
      check(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
      one_message_ = all == 1;
      if (one_message_) {
        exchange_edges(comm, cfg.tag_base + 20);
        msg_ = HaloExchange<T, SZ, Mem>(grid, dir, 3, nsys, 3, cfg, impl::kDistD2Channel);
        return;
      }
      bnd_prev_ = lines_type("kband::mpi::bnd_prev", nsys, 2);
      bnd_next_ = lines_type("kband::mpi::bnd_next", nsys, 2);
      halo_ = HaloExchange<T, SZ, Mem>(grid, dir, 2, nsys, n, cfg, impl::kHaloChannel);
      bx_ = HaloExchange<T, SZ, Mem>(grid, dir, 1, nsys, 2, cfg, impl::kDistD2Channel);
    }
  }

  /// The plan for the `dir`-lines of the blocks of `f` (nsys = f.nlines(dir),
  /// n = f.local_extent(dir)).
  template <class Exec, class L>
  DistDerivative(const Exec& exec, const DistField<T, L, Mem>& f, Direction dir, const CompactScheme& scheme,
                 const CommConfig& cfg = {}, const DistD2Options& opt = {})
      : DistDerivative(exec, f.grid(), dir, scheme, f.nlines(dir), f.local_extent(dir), cfg, opt) {}

  /// out = the operator applied along the distributed lines of `in`; in and
  /// out are SZ-grouped batches of extents (nsys, n) holding this rank's
  /// subdomain of every line; out must not alias in. Collective (every rank
  /// of the grid calls it). Asynchronous on exec except where MPI needs the
  /// data: exec is fenced before each send (not with CUDA IPC, where the
  /// devices wait for each other on events). `times` (optional): adds the
  /// seconds of each phase, fencing after each.
  template <class Exec>
  void apply(const Exec& exec, const lines_type& in, const lines_type& out, PhaseTimes* times = nullptr) {
    const char* fn = "kband::mpi::DistDerivative::apply";
    kband::impl::ProfilingRegion region(fn);
    std::string msg;
    if (plan_.n() == 0) msg = kband::impl::concat(fn, ": the plan is empty (default-constructed)");
    else if (in.nsys() != nsys_ || in.n() != n_ || out.nsys() != nsys_ || out.n() != n_)
      msg = kband::impl::concat(fn, ": arguments 'in' (", in.label(), ", nsys=", in.nsys(), ", n=", in.n(),
                                ") and 'out' (", out.label(), ", nsys=", out.nsys(), ", n=", out.n(),
                                ") must have the plan's extents (nsys=", nsys_, ", n=", n_, ")");
    else if (in.view().data() == out.view().data() && nsys_ > 0)
      msg = kband::impl::concat(fn, ": out must not alias in");
    require_all(grid_.comm(), msg.empty(), msg);
    Stopwatch<Exec> sw(exec, times);
    if (grid_.dims(dir_) == 1) {
      // the whole line is here: halos from the line itself, then decoupling,
      // the line's own 2x2 system and the substitution in one kernel (as kband::distd2)
      if (!plan_.data().lo_closed) distd2_copy_rows(exec, in, n_ - 2, lo_, 0, 2);
      if (!plan_.data().hi_closed) distd2_copy_rows(exec, in, 0, hi_, 0, 2);
      sw.lap(times ? &times->halo : nullptr);
      T P = 0, Q = 0, det_inv = 1;
      kband::impl::distd2_own_system(fn, plan_, P, Q, det_inv);
      kband::impl::distd2_decouple_impl<true>(fn, exec, plan_, in, lo_, hi_, out, bnd_, 0, P, Q, det_inv);
      sw.lap(times ? &times->decouple : nullptr);
      return;
    } else if (one_message_) {
      apply_one_message(exec, in, out, times);
      return;
    } else if (n_ >= kDistD2SplitMinRows && reduced_.subdomains() < 2) {
      apply_two_messages(exec, in, out, times);
      return;
    } else {  // n < 5 or the exact reduced solve: the phases in turn
      halo_.start(exec, in);
      halo_.finish(exec, lo_, hi_);
      sw.lap(times ? &times->halo : nullptr);
      distd2_decouple(exec, plan_, in, lo_, hi_, out, bnd_);
      sw.lap(times ? &times->decouple : nullptr);
    }
    if (reduced_.subdomains() >= 2) {  // exact: every boundary row of the line, reduced solve, substitution
      gather_boundary_rows(exec);
      sw.lap(times ? &times->boundary : nullptr);
      distd2_reduced_solve(exec, reduced_, bnd_all_);
      distd2_copy_rows(exec, bnd_all_, 2 * grid_.coord(dir_), bnd_, 0, 2);
      distd2_substitute(exec, plan_, bnd_, out);
      sw.lap(times ? &times->substitute : nullptr);
      return;
    }
    // D_0 -> previous rank's bnd_next row 0, D_{n-1} -> next rank's bnd_prev row 1
    bx_.start(exec, bnd_);
    bx_.finish(exec, bnd_prev_, bnd_next_, 1, 0);
    sw.lap(times ? &times->boundary : nullptr);
    distd2_couple(exec, plan_, bnd_, bnd_prev_, cpl_prev_, bnd_next_, cpl_next_, out);
    sw.lap(times ? &times->substitute : nullptr);
  }

  /// Field level: the `dir`-lines of in's block -> apply -> out's block (in
  /// and out may be the same field; work batches are kept between calls).
  template <class Exec, class L>
  void apply(const Exec& exec, const DistField<T, L, Mem>& in, const DistField<T, L, Mem>& out,
             PhaseTimes* times = nullptr) {
    const char* fn = "kband::mpi::DistDerivative::apply";
    kband::impl::ProfilingRegion region(fn);
    bool ok = true;
    for (const auto* f : {&in, &out}) ok = ok && f->nlines(dir_) == nsys_ && f->local_extent(dir_) == n_;
    require_all(grid_.comm(), ok,
                kband::impl::concat(fn, ": the fields' blocks (", in.nlines(dir_), " and ", out.nlines(dir_),
                                    " lines of ", in.local_extent(dir_), " and ", out.local_extent(dir_),
                                    " rows) do not match the plan (", nsys_, " lines of ", n_, " rows)"));
    if (win_.nsys() != nsys_ || win_.n() != n_) {
      win_ = lines_type("kband::mpi::lines_in", nsys_, n_);
      wout_ = lines_type("kband::mpi::lines_out", nsys_, n_);
    }
    Stopwatch<Exec> sw(exec, times);
    to_lines(exec, dir_, in, win_);
    sw.lap(times ? &times->reorder : nullptr);
    apply(exec, win_, wout_, times);
    sw.restart();
    from_lines(exec, dir_, wout_, out);
    sw.lap(times ? &times->reorder : nullptr);
  }

  Direction direction() const { return dir_; }
  int nsys() const { return nsys_; }
  int n() const { return n_; }
  const CartGrid& grid() const { return grid_; }
  const DistD2Plan<T, Mem>& plan() const { return plan_; }
  /// True when message buffers go to MPI directly (GPU-aware MPI or host memory).
  bool direct() const { return direct_; }
  /// True when apply() sends one message each way (CommConfig::one_message).
  bool one_message() const { return one_message_; }

 private:
  /// Fences and reads the time at each lap when timing is requested.
  template <class Exec>
  struct Stopwatch {
    const Exec& exec;
    bool on;
    Kokkos::Timer timer;
    Stopwatch(const Exec& e, const PhaseTimes* t) : exec(e), on(t != nullptr) { restart(); }
    void restart() {
      if (!on) return;
      exec.fence();
      timer.reset();
    }
    void lap(double* acc) {
      if (!on || !acc) return;
      exec.fence();
      *acc += timer.seconds();
      timer.reset();
    }
  };

  /// One message each way (CommConfig::one_message, when every plan's
  /// far() is below epsilon): the decoupling kernel (zero halos) stores this
  /// subdomain's two end rows and its interior boundary row into the
  /// neighbours' receive buffers (CUDA IPC; the send buffers otherwise);
  /// distd2_couple_one_message adds the halos' share, forms the neighbours'
  /// boundary rows, solves the 2x2 systems and substitutes. Two kernels, one
  /// exchange.
  template <class Exec>
  void apply_one_message(const Exec& exec, const lines_type& in, const lines_type& out, PhaseTimes* times) {
    Stopwatch<Exec> sw(exec, times);
    const auto to = msg_.targets();  // (rows 0, 1, D_0 -> prev; rows n-2, n-1, D_{n-1} -> next)
    distd2_decouple_interior(exec, plan_, in, out, bnd_, 0, &to.first, &to.second);
    sw.lap(times ? &times->decouple : nullptr);
    msg_.post(exec);
    msg_.wait(exec);
    sw.lap(times ? &times->boundary : nullptr);
    const auto from = msg_.received();
    distd2_couple_one_message(exec, plan_, in, bnd_, from.first, cpl_prev_, edges_prev_, from.second, cpl_next_,
                              edges_next_, out);
    sw.lap(times ? &times->substitute : nullptr);
  }

  /// P > 1 ranks, n >= kDistD2SplitMinRows: the messages are written by the
  /// kernels that produce them, straight into the neighbours' receive buffers
  /// under CUDA IPC (into the send buffers otherwise), and read where they
  /// arrive: the decoupling (zero halos) also stores this subdomain's end
  /// rows for the neighbours, so the halos travel during the pass that reads
  /// them; distd2_add_halos adds the received halos' share and stores the
  /// final boundary rows D_0 / D_{n-1} for the neighbours; the substitution
  /// reads theirs from the receive buffer. Four kernels, no packing.
  template <class Exec>
  void apply_two_messages(const Exec& exec, const lines_type& in, const lines_type& out, PhaseTimes* times) {
    const char* fn = "kband::mpi::DistDerivative::apply";
    Stopwatch<Exec> sw(exec, times);
    const auto ends = halo_.targets();  // (rows 0, 1 -> prev; rows n-2, n-1 -> next)
    distd2_decouple_interior(exec, plan_, in, out, bnd_, 0, &ends.first, &ends.second);
    sw.lap(times ? &times->decouple : nullptr);
    halo_.post(exec);
    halo_.wait(exec);
    const auto halos = halo_.received();  // (lo, hi)
    const auto rows = bx_.targets();      // (D_0 -> prev, D_{n-1} -> next)
    distd2_add_halos(exec, plan_, halos.first, halos.second, out, bnd_, hc_, 0, &rows.first, &rows.second);
    sw.lap(times ? &times->halo : nullptr);
    bx_.post(exec);
    bx_.wait(exec);
    sw.lap(times ? &times->boundary : nullptr);
    const auto theirs = bx_.received();  // (prev's D_{n-1}, next's D_0)
    kband::impl::distd2_couple_rows(fn, exec, plan_, bnd_, theirs.first, 0, "D_{n-1} of the previous rank", cpl_prev_,
                                    theirs.second, 0, "D_0 of the next rank", cpl_next_, out, 0, &hc_);
    sw.lap(times ? &times->substitute : nullptr);
  }

  /// exact_reduced on P > 1 ranks: every rank's coupling along the line, the
  /// reduced system (collective), the halo exchange and the gather buffers.
  template <class Exec>
  void setup_reduced(const Exec& exec, const CompactScheme& scheme, const CommConfig& cfg) {
    const int P = grid_.dims(dir_);
    const DistD2Coupling<T> c = plan_.coupling();
    T mine[4] = {c.first_prev, c.first_last, c.last_first, c.last_next};
    std::vector<T> all(4 * static_cast<size_t>(P));
    check(MPI_Allgather(mine, 4, datatype<T>(), all.data(), 4, datatype<T>(), grid_.line_comm(dir_)),
          "MPI_Allgather");
    std::vector<DistD2Coupling<T>> cpl(P);
    for (int k = 0; k < P; ++k) cpl[k] = DistD2Coupling<T>{all[4 * k], all[4 * k + 1], all[4 * k + 2], all[4 * k + 3]};
    collective(grid_.comm(), [&] { reduced_ = DistD2Reduced<T, Mem>(exec, cpl, scheme.periodic()); });
    halo_ = HaloExchange<T, SZ, Mem>(grid_, dir_, 2, nsys_, n_, cfg, impl::kHaloChannel);
    bnd_all_ = lines_type("kband::mpi::bnd_all", nsys_, 2 * P);
    gathered_ = Kokkos::View<T*, Mem>("kband::mpi::bnd_gathered", bnd_.view().span() * P);
    gather_direct_ = direct_ && cfg.path != BufferPath::CudaIPC;  // IPC: the allgather is staged
    if (!gather_direct_) {
      bnd_h_ = Kokkos::View<T*, impl::StagingSpace>("kband::mpi::bnd_h", bnd_.view().span());
      gathered_h_ = Kokkos::View<T*, impl::StagingSpace>("kband::mpi::bnd_gathered_h", gathered_.extent(0));
    }
  }

  /// bnd_all_ rows 2k, 2k+1 := rank k's bnd rows 0, 1 (MPI_Allgather along the line; fences exec).
  template <class Exec>
  void gather_boundary_rows(const Exec& exec) {
    const int P = grid_.dims(dir_);
    const size_t cnt = bnd_.view().span();
    Kokkos::View<T*, Mem> mine(bnd_.view().data(), cnt);
    if (!gather_direct_) Kokkos::deep_copy(exec, bnd_h_, mine);
    exec.fence();
    check(MPI_Allgather(gather_direct_ ? mine.data() : bnd_h_.data(), static_cast<int>(cnt), datatype<T>(),
                        gather_direct_ ? gathered_.data() : gathered_h_.data(), static_cast<int>(cnt), datatype<T>(),
                        grid_.line_comm(dir_)),
          "MPI_Allgather");
    if (!gather_direct_) Kokkos::deep_copy(exec, gathered_, gathered_h_);
    for (int k = 0; k < P; ++k) {
      const typename lines_type::view_type part(gathered_.data() + k * cnt, bnd_.ngroups(), 2);
      distd2_copy_rows(exec, lines_type(part, nsys_), 0, bnd_all_, 2 * k, 2);
    }
  }

  /// count scalars each way with the previous and next rank along the
  /// direction (blocking; tags tag, tag + 1).
  void swap_with_neighbours(MPI_Comm comm, int tag, const T* to_prev, const T* to_next, T* from_prev, T* from_next,
                            int count) {
    check(MPI_Sendrecv(to_next, count, datatype<T>(), grid_.next(dir_), tag, from_prev, count, datatype<T>(),
                       grid_.prev(dir_), tag, comm, MPI_STATUS_IGNORE),
          "MPI_Sendrecv");
    check(MPI_Sendrecv(to_prev, count, datatype<T>(), grid_.prev(dir_), tag + 1, from_next, count, datatype<T>(),
                       grid_.next(dir_), tag + 1, comm, MPI_STATUS_IGNORE),
          "MPI_Sendrecv");
  }

  /// The neighbours' plan entries facing this subdomain (one-message mode):
  /// the previous rank's last_edges(), the next rank's first_edges().
  void exchange_edges(MPI_Comm comm, int tag) {
    const kband::impl::DistD2Edges<T> f = plan_.first_edges(), l = plan_.last_edges();
    const T first[5] = {f.a, f.b, f.c, f.d, f.far}, last[5] = {l.a, l.b, l.c, l.d, l.far};
    T p[5] = {0, 0, 0, 0, 0}, q[5] = {0, 0, 0, 0, 0};
    swap_with_neighbours(comm, tag, first, last, p, q, 5);
    edges_prev_ = {p[0], p[1], p[2], p[3], p[4]};
    edges_next_ = {q[0], q[1], q[2], q[3], q[4]};
  }

  /// The neighbours' DistD2Couplings (4 scalars each way), once per plan.
  void exchange_couplings(MPI_Comm comm, int tag) {
    const DistD2Coupling<T> c = plan_.coupling();
    const T mine[4] = {c.first_prev, c.first_last, c.last_first, c.last_next};
    T p[4] = {0, 0, 0, 0}, q[4] = {0, 0, 0, 0};
    swap_with_neighbours(comm, tag, mine, mine, p, q, 4);
    cpl_prev_ = DistD2Coupling<T>{p[0], p[1], p[2], p[3]};
    cpl_next_ = DistD2Coupling<T>{q[0], q[1], q[2], q[3]};
  }

  CartGrid grid_;
  Direction dir_ = Direction::X;
  int nsys_ = 0, n_ = 0;
  bool direct_ = true;
  DistD2Plan<T, Mem> plan_;
  DistD2Coupling<T> cpl_prev_, cpl_next_;
  kband::impl::DistD2Edges<T> edges_prev_, edges_next_;
  bool one_message_ = false;
  HaloExchange<T, SZ, Mem> msg_;
  lines_type lo_, hi_, hc_, bnd_, bnd_prev_, bnd_next_, win_, wout_, bnd_all_;
  HaloExchange<T, SZ, Mem> halo_, bx_;
  DistD2Reduced<T, Mem> reduced_;
  Kokkos::View<T*, Mem> gathered_;
  Kokkos::View<T*, impl::StagingSpace> bnd_h_, gathered_h_;
  bool gather_direct_ = true;
};

}  // namespace mpi
}  // namespace kband
