// DistD2: compact-scheme operators on lines split into subdomains (seed 002,
// section 4.2, Algorithms 5-7). The numerical core, on one process; the MPI
// layer runs the same phases on one subdomain per rank.
//
// A line of N points is split into K subdomains of n_k >= 3 rows each (row
// offsets o_k). Data are SZ-grouped batches (GroupedBatch<T, SZ, Mem>, view
// extents (ngroups, rows, SZ)); one batch holds the same subdomain of every line.
//
// Phases, for subdomain k (all calls asynchronous on `exec`, no fences):
//
//   DistD2Plan<T> plan(exec, scheme, n_k, position);               // Algorithm 5, once
//   distd2_decouple(exec, plan, in, halo_lo, halo_hi, out, bnd, row0); // Algorithm 6
//     in       rows row0 .. row0+n_k-1 of `in` are the subdomain's input field;
//     halo_lo  (ngroups, 2, SZ): the 2 rows just below the subdomain (the previous
//              subdomain's rows n_{k-1}-2, n_{k-1}-1; periodic: wrapping around);
//     halo_hi  (ngroups, 2, SZ): the 2 rows just above (the next subdomain's rows 0, 1);
//              a halo at a closed (non-periodic) line end is not read (pass any batch);
//     out      receives the decoupled partial solution in rows row0 .. row0+n_k-1;
//     bnd      (ngroups, 2, SZ): this subdomain's boundary rows D_0 (row 0) and
//              D_{n-1} (row 1), one contiguous message for each neighbour.
//   distd2_couple(exec, plan, bnd, bnd_prev, plan_prev.coupling(),
//                 bnd_next, plan_next.coupling(), out, row0);     // 2x2 systems + Algorithm 7
//     solves the 2x2 system across the lower boundary (with the previous
//     subdomain's bnd; periodic: subdomain K-1 for k = 0) and across the upper
//     one (with the next subdomain's bnd), then substitutes in place in out.
//
// Across ranks: exchange halos (2 rows each way) before decouple, exchange the
// bnd buffers (2 rows each way) between decouple and couple, and exchange the
// neighbours' DistD2Coupling (4 scalars) once, when the plans are built.
// Two variants let the exchanges overlap or merge (kband::mpi uses them):
// distd2_decouple_interior + distd2_add_halos (decoupling with zero halos,
// their share added when they arrive) and distd2_couple_one_message (one
// message per neighbour: end rows and boundary rows together).
//
// Truncation: DistD2 drops the entries B and C (DistD2Coupling) that couple a
// subdomain's first and last unknowns; they decay like rho^(n-1) with
// rho = (1 - sqrt(1 - 4 alpha^2)) / (2 alpha). The plan computes both and
// throws kband::Error, naming the minimum subdomain length for the operator,
// when either exceeds the working precision's epsilon, unless
// DistD2Options::exact_reduced is set. Then the reduced system of all 2K
// boundary unknowns is solved exactly:
//   DistD2Reduced<T> red(exec, couplings_of_all_K_subdomains, periodic);  // once
//   (decouple every subdomain; gather every bnd into bnd_all (ngroups, 2K, SZ),
//    rows 2k, 2k+1 = subdomain k's bnd: across ranks an allgather of the bnd
//    buffers, every rank then solves redundantly)
//   distd2_reduced_solve(exec, red, bnd_all);              // bnd_all := (s_k, e_k)
//   distd2_substitute(exec, plan_k, solved_k, out, row0);   // solved_k = rows 2k, 2k+1
//
// On one rank: DistD2Line<T> line(exec, scheme, {n_0, .., n_{K-1}}); then
// distd2(exec, line, in, out) runs all of the above for lines of N = sum n_k rows.
//
// Stability: no pivoting (compact-scheme matrices are diagonally dominant);
// the plan throws kband::Error when a pivot of the operator's elimination is
// zero or not finite, couple when a 2x2 determinant is. Non-finite input
// values give non-finite outputs in their lines only.
#pragma once

#include "impl/kband_DistD2_impl.hpp"
#include "kband_Compact.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace kband {

/// Where a subdomain sits in its line. On periodic lines First, Interior and
/// Last are the same; Only (K = 1) couples the subdomain to itself and is
/// solved exactly (nothing is dropped).
enum class DistD2Position { Only, First, Interior, Last };

/// Smallest subdomain DistD2 accepts (truncation aside).
constexpr int kDistD2MinRows = 3;
/// Smallest subdomain for the split decoupling (distd2_decouple_interior).
constexpr int kDistD2SplitMinRows = 5;

struct DistD2Options {
  /// Keep the coupling entries DistD2 would drop and solve the reduced system
  /// of all boundary unknowns exactly (distd2_reduced_solve) instead of throwing.
  bool exact_reduced = false;
};

/// The decoupled first and last rows of a subdomain (s = first unknown,
/// e = last unknown, D = the boundary rows in bnd):
///   s + first_prev * e_{prev} + first_last * e         = D_0
///   e + last_first * s        + last_next  * s_{next}  = D_{n-1}
/// first_last (B) and last_first (C) are what DistD2 drops.
template <class T>
struct DistD2Coupling {
  T first_prev = 0;  // A
  T first_last = 0;  // B
  T last_first = 0;  // C
  T last_next = 0;   // E
};

namespace impl {
inline bool distd2_lo_closed(const CompactScheme& s, DistD2Position p) {
  return !s.periodic() && (p == DistD2Position::First || p == DistD2Position::Only);
}
inline bool distd2_hi_closed(const CompactScheme& s, DistD2Position p) {
  return !s.periodic() && (p == DistD2Position::Last || p == DistD2Position::Only);
}
inline long double distd2_dropped(const DistD2Pre& p) {
  const long double b = p.B < 0 ? -p.B : p.B, c = p.C < 0 ? -p.C : p.C;
  return b > c ? b : c;
}
}  // namespace impl

/// Smallest subdomain length at which DistD2 drops nothing above T's epsilon
/// for this operator and position (0 when none up to 2^20 rows). Host only.
template <class T>
int distd2_min_rows(const CompactScheme& scheme, DistD2Position pos = DistD2Position::Interior) {
  if (pos == DistD2Position::Only) return std::max(kDistD2MinRows, scheme.min_n());
  const long double eps = std::numeric_limits<T>::epsilon();
  const bool lo = impl::distd2_lo_closed(scheme, pos), hi = impl::distd2_hi_closed(scheme, pos);
  auto ok = [&](int n) {
    const impl::DistD2Pre p = impl::distd2_preprocess(scheme, n, lo, hi);
    return p.bad_row == 0 && impl::distd2_dropped(p) <= eps;
  };
  int lo_n = kDistD2MinRows, hi_n = kDistD2MinRows;
  if (ok(lo_n)) return lo_n;
  while (!ok(hi_n)) {
    lo_n = hi_n;
    hi_n *= 2;
    if (hi_n > (1 << 20)) return 0;
  }
  while (hi_n - lo_n > 1) {  // ok(hi_n), !ok(lo_n)
    const int mid = lo_n + (hi_n - lo_n) / 2;
    (ok(mid) ? hi_n : lo_n) = mid;
  }
  return hi_n;
}

/// Algorithm 5: the preprocessed coefficient arrays of one operator on one
/// subdomain of n_local rows at `position`, on the memory space Mem. Built on
/// the host in long double, copied once (fences exec). Throws kband::Error when
/// n_local < 3 (5 for a non-periodic Only line), when a pivot is unusable, or
/// when the dropped coupling entries exceed epsilon of T and
/// opt.exact_reduced is not set (the message names distd2_min_rows).
template <class T, class Mem = Kokkos::DefaultExecutionSpace::memory_space>
class DistD2Plan {
  static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                "kband: DistD2 supports float and double");

 public:
  using value_type = T;
  using memory_space = Mem;

  DistD2Plan() = default;

  template <class Exec>
  DistD2Plan(const Exec& exec, const CompactScheme& scheme, int n_local, DistD2Position position,
             const DistD2Options& opt = {})
      : scheme_(scheme), pos_(position), opt_(opt) {
    const char* fn = "kband::DistD2Plan";
    impl::ProfilingRegion region(fn);
    impl::require_accessible<Kokkos::View<T*, Mem>, Exec>("plan");
    const int min_n = position == DistD2Position::Only ? std::max(kDistD2MinRows, scheme.min_n()) : kDistD2MinRows;
    impl::require(n_local >= min_n, impl::concat(fn, ": n_local=", n_local, ", the minimum is ", min_n));
    impl::DistD2Data<T, Mem>& d = data_;
    d.n = n_local;
    d.lo_closed = impl::distd2_lo_closed(scheme, position);
    d.hi_closed = impl::distd2_hi_closed(scheme, position);
    d.stencil = scheme.stencil<T>();
    const impl::DistD2Pre p = impl::distd2_preprocess(scheme, n_local, d.lo_closed, d.hi_closed);
    impl::require(p.bad_row == 0, impl::concat(fn, ": the ", compact_operator_name(scheme.op()),
                                               " matrix on n_local=", n_local, " rows has an unusable pivot in row ",
                                               p.bad_row, " (DistD2 does not pivot)"));
    coupling_.first_prev = static_cast<T>(p.A);
    coupling_.first_last = static_cast<T>(p.B);
    coupling_.last_first = static_cast<T>(p.C);
    coupling_.last_next = static_cast<T>(p.E);
    dropped_ = static_cast<double>(impl::distd2_dropped(p));
    far_ = static_cast<double>(p.far);
    if (n_local >= kDistD2SplitMinRows) {
      const T far = static_cast<T>(p.far);
      first_edges_ = {static_cast<T>(p.f[0]), static_cast<T>(p.f[1]), static_cast<T>(p.g[0]), static_cast<T>(p.G), far};
      last_edges_ = {static_cast<T>(p.f[n_local - 2]), static_cast<T>(p.r[n_local - 2]),
                     static_cast<T>(p.f[n_local - 1]), static_cast<T>(p.r[n_local - 1]), far};
    }
    const double eps = std::numeric_limits<T>::epsilon();
    if (position != DistD2Position::Only && !opt.exact_reduced && dropped_ > eps) {
      const int mn = distd2_min_rows<T>(scheme, position);
      throw Error(impl::concat(fn, ": the ", compact_operator_name(scheme.op()), " (alpha=", scheme.alpha(),
                               ") on subdomains of n_local=", n_local, " rows would drop coupling entries up to ",
                               dropped_, " > epsilon ", eps, " of ", sizeof(T) == 4 ? "float" : "double",
                               "; the minimum subdomain length is ",
                               mn > 0 ? std::to_string(mn) : std::string("above 2^20"),
                               " (or set DistD2Options::exact_reduced)"));
    }
    auto upload = [&](const std::vector<long double>& v, const char* label) {
      Kokkos::View<T*, Mem> dv(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string(label)), n_local);
      auto h = Kokkos::create_mirror_view(dv);
      // entries below eps^2 cannot change a result; flushing them keeps CPUs
      // off denormal arithmetic on long subdomains
      const long double tiny = eps * eps;
      for (int j = 0; j < n_local; ++j) h(j) = (v[j] < tiny && v[j] > -tiny) ? T(0) : static_cast<T>(v[j]);
      Kokkos::deep_copy(exec, dv, h);
      exec.fence();  // h is a temporary host buffer
      return dv;
    };
    d.f = upload(p.f, "kband::distd2::f");
    d.r = upload(p.r, "kband::distd2::r");
    d.g = upload(p.g, "kband::distd2::g");
    d.sa = upload(p.sa, "kband::distd2::sa");
    d.sc = upload(p.sc, "kband::distd2::sc");
    d.w = upload(p.w, "kband::distd2::w");
    d.G = static_cast<T>(p.G);
    impl::distd2_lean_rows(p, d);
  }

  int n() const { return data_.n; }
  DistD2Position position() const { return pos_; }
  const CompactScheme& scheme() const { return scheme_; }
  bool periodic() const { return scheme_.periodic(); }
  const DistD2Options& options() const { return opt_; }
  /// Does the lower (upper) boundary couple to a neighbour (periodic: always
  /// except Only; closed lines: not at their ends)?
  bool has_prev() const { return pos_ != DistD2Position::Only && !data_.lo_closed; }
  bool has_next() const { return pos_ != DistD2Position::Only && !data_.hi_closed; }
  /// The boundary rows' entries (host values; exchange them with the neighbours).
  const DistD2Coupling<T>& coupling() const { return coupling_; }
  /// max(|B|, |C|): the largest entry DistD2 drops (0 is never reached exactly).
  double dropped() const { return dropped_; }
  /// The entries a neighbour needs to form this subdomain's boundary rows in
  /// the one-message mode (distd2_couple_one_message; n >= 5), and what that
  /// neglects: max(|w_{n-3}|, |g_{n-2}|), the far end's weight in them.
  const impl::DistD2Edges<T>& first_edges() const { return first_edges_; }
  const impl::DistD2Edges<T>& last_edges() const { return last_edges_; }
  double far() const { return far_; }
  const impl::DistD2Data<T, Mem>& data() const { return data_; }

 private:
  CompactScheme scheme_ = CompactScheme::first_derivative(1.0);
  DistD2Position pos_ = DistD2Position::Only;
  DistD2Options opt_;
  DistD2Coupling<T> coupling_;
  double dropped_ = 0, far_ = 0;
  impl::DistD2Edges<T> first_edges_, last_edges_;
  impl::DistD2Data<T, Mem> data_;
};

namespace impl {

template <class Exec, class T, int SZ, class Mem>
void distd2_check_rows(const char* fn, const char* arg, const GroupedBatch<T, SZ, Mem>& b, int nsys, int rows) {
  require(b.nsys() == nsys && b.n() == rows,
          concat(fn, ": argument '", arg, "' (", b.label(), ") has extents (nsys=", b.nsys(), ", n=", b.n(),
                 "), expected (nsys=", nsys, ", n=", rows, ")"));
}

template <class Exec, class T, int SZ, class Mem>
void distd2_check_field(const char* fn, const char* arg, const GroupedBatch<T, SZ, Mem>& b, int nsys, int row0,
                        int n) {
  require(b.nsys() == nsys && row0 >= 0 && row0 + n <= b.n(),
          concat(fn, ": argument '", arg, "' (", b.label(), ") has extents (nsys=", b.nsys(), ", n=", b.n(),
                 "); the subdomain needs nsys=", nsys, " and rows ", row0, " .. ", row0 + n - 1));
}

/// Threads per system group and launch shape. GPUs: one system per thread,
/// teams of 128 (4 groups of SZ = 32); a single-subdomain line keeps its d
/// rows in level-0 team scratch while 64 threads' rows fit in 48 KiB (n <= 96
/// in double), teams then as large as 48 KiB allows up to 128. (H200, double:
/// with teams of 32 at n = 128 too few threads stay resident, 2.60x the copy
/// time against 2.2x without scratch.) CPUs: one group of SZ systems per team
/// of one thread (the lane loop vectorises).
template <class Exec, int SZ>
struct distd2_shape {
  static constexpr bool device = is_device_exec<Exec>::value;
  static constexpr int W = device ? 1 : SZ;
  static constexpr int U = device ? KBAND_DISTD2_UNROLL : 1;
  template <class T>
  static DistD2Geometry geometry(int nsys, int n, bool local) {
    DistD2Geometry g;
    const long items = device ? static_cast<long>(GroupedBatch<T, SZ>::groups_for(nsys)) * SZ
                              : GroupedBatch<T, SZ>::groups_for(nsys);
    const size_t row_bytes = static_cast<size_t>(n) * sizeof(T), budget = 48 * 1024;
    g.team_size = device ? 128 : 1;
    if (device && local && row_bytes * 64 <= budget &&
        row_bytes * 64 <= static_cast<size_t>(Kokkos::TeamPolicy<Exec>::scratch_size_max(0))) {
      g.scratch = true;
      g.team_size = 64;
      while (g.team_size < 128 && row_bytes * g.team_size * 2 <= budget) g.team_size *= 2;
      g.scratch_bytes = row_bytes * g.team_size;
    }
    g.league = static_cast<int>((items + g.team_size - 1) / g.team_size);
    return g;
  }
};

/// MinBlocks > 0: teams of 128 the compiler must keep resident per
/// multiprocessor (Kokkos::LaunchBounds), i.e. a register cap of 64K /
/// (128 MinBlocks) per thread. The substitution kernels take 4 (128
/// registers): on an H200 (double, n = 128 .. 1024) the one-message kernel
/// otherwise took 168 registers and 1.31-1.18x the copy time, capped
/// 1.19-1.14x. (Before the lean rows the decoupling kernels spilled when
/// capped and ran slower, 1.09 -> 1.19x at n = 128; they are capped now, see
/// KBAND_DISTD2_DECOUPLE_MIN_BLOCKS.) occupancy > 0: Kokkos'
/// DesiredOccupancy hint, in percent.
template <int MinBlocks = 0, class Exec, class F>
void distd2_launch(const char* fn, const Exec& exec, const DistD2Geometry& g, const F& f, int occupancy = 0) {
  if (g.league == 0) return;
  using Policy = typename std::conditional<MinBlocks == 0, impl::Team<Exec>,
                                           impl::Team<Exec, Kokkos::LaunchBounds<128, MinBlocks>>>::type;
  Policy policy(exec, g.league, g.team_size);
  if (g.scratch) policy.set_scratch_size(0, Kokkos::PerTeam(g.scratch_bytes));
  if (occupancy > 0)
    Kokkos::parallel_for(fn, Kokkos::Experimental::prefer(policy, Kokkos::Experimental::DesiredOccupancy(occupancy)), f);
  else
    Kokkos::parallel_for(fn, policy, f);
}
/// Occupancy (percent of a multiprocessor's threads, Kokkos'
/// DesiredOccupancy hint) of the single-subdomain solve on GPUs when its d
/// rows go through memory: the backward pass reads back the rows the forward
/// pass wrote last, and with fewer threads resident more of them are still
/// in L2. On an H200 (double, n = 512, 2^18 lines; 122 registers, so 4 teams
/// of 128 fit) 13 % (2 teams) took 1.089-1.095 ms, 19 % 1.109-1.111 ms and
/// no hint 1.108-1.119 ms.
#ifndef KBAND_DISTD2_LOCAL_OCCUPANCY
#define KBAND_DISTD2_LOCAL_OCCUPANCY 13
#endif

/// Register cap of the substitution kernels (see distd2_launch).
constexpr int kDistD2SweepMinBlocks = 4;
/// Register cap of the decoupling kernels (0: none). With the lean rows
/// (DistD2Data::lean) the decoupling takes 96 registers uncapped (5 teams of
/// 128 per multiprocessor) and 110 at 4: on an H200 at 2^18 lines of 256
/// rows the 5 teams leave a last wave a tenth full, and the 2-GPU 512^3
/// derivative (decoupling + substitution) took 0.6007-0.6016 ms capped
/// against 0.6031-0.6042 ms.
#ifndef KBAND_DISTD2_DECOUPLE_MIN_BLOCKS
#define KBAND_DISTD2_DECOUPLE_MIN_BLOCKS 4
#endif
constexpr int kDistD2DecoupleMinBlocks = KBAND_DISTD2_DECOUPLE_MIN_BLOCKS;

template <class Exec, class T, int SZ, class Mem>
void distd2_substitute_impl(const char* fn, const Exec& exec, const DistD2Plan<T, Mem>& plan,
                            const GroupedBatch<T, SZ, Mem>& bnd, const DistD2Ends<T, SZ, Mem>& ends,
                            const GroupedBatch<T, SZ, Mem>& out, int row0, const GroupedBatch<T, SZ, Mem>* hc) {
  using S = distd2_shape<Exec, SZ>;
  if (out.nsys() == 0) return;
  const DistD2Geometry g = S::template geometry<T>(out.nsys(), plan.n(), false);
  using Kernel = DistD2SubstituteKernel<Exec, T, SZ, Mem, S::W, S::U, true>;
  using KernelNoHc = DistD2SubstituteKernel<Exec, T, SZ, Mem, S::W, S::U, false>;
  if (hc)
    distd2_launch<kDistD2SweepMinBlocks>(
        fn, exec, g, Kernel{plan.data(), bnd.view(), out.view(), ends, row0, out.nsys(), hc->view()});
  else
    distd2_launch<kDistD2SweepMinBlocks>(
        fn, exec, g, KernelNoHc{plan.data(), bnd.view(), out.view(), ends, row0, out.nsys(), bnd.view()});
}

/// Decouple (Local = false) or the whole single-subdomain solve (Local).
template <bool Local, class Exec, class T, int SZ, class Mem>
void distd2_decouple_impl(const char* fn, const Exec& exec, const DistD2Plan<T, Mem>& plan,
                          const GroupedBatch<T, SZ, Mem>& in, const GroupedBatch<T, SZ, Mem>& halo_lo,
                          const GroupedBatch<T, SZ, Mem>& halo_hi, const GroupedBatch<T, SZ, Mem>& out,
                          const GroupedBatch<T, SZ, Mem>& bnd, int row0, T P, T Q, T det_inv,
                          bool zero_halo = false, const GroupedBatch<T, SZ, Mem>* first = nullptr,
                          const GroupedBatch<T, SZ, Mem>* last = nullptr) {
  const auto& d = plan.data();
  const int nsys = in.nsys();
  if (nsys == 0) return;
  using S = distd2_shape<Exec, SZ>;
  const DistD2Geometry g = S::template geometry<T>(nsys, plan.n(), Local);
  const auto lo = d.lo_closed ? in.view() : halo_lo.view();  // a closed end's halo is not read
  const auto hi = d.hi_closed ? in.view() : halo_hi.view();
  const bool ends = first != nullptr, ends_d = ends && first->n() == 3;
  const auto fv = ends ? first->view() : bnd.view(), lv = ends ? last->view() : bnd.view();
  const int occ = Local && S::device ? KBAND_DISTD2_LOCAL_OCCUPANCY : 0;
  if (g.scratch)
    distd2_launch<kDistD2DecoupleMinBlocks>(fn, exec, g,
                  DistD2DecoupleKernel<Exec, T, SZ, Mem, S::W, S::U, Local, true>{
                      d, in.view(), lo, hi, out.view(), bnd.view(), row0, nsys, P, Q, det_inv, zero_halo, ends, fv,
                      lv, ends_d});
  else
    distd2_launch<kDistD2DecoupleMinBlocks>(fn, exec, g,
                  DistD2DecoupleKernel<Exec, T, SZ, Mem, S::W, S::U, Local, false>{
                      d, in.view(), lo, hi, out.view(), bnd.view(), row0, nsys, P, Q, det_inv, zero_halo, ends, fv,
                      lv, ends_d}, occ);
}

/// Checks shared by the phases: a built plan, the subdomain's rows in the
/// field batch, a 2-row buffer; returns nsys.
template <class Exec, class T, int SZ, class Mem>
int distd2_check_phase(const char* fn, const DistD2Plan<T, Mem>& plan, const char* field_arg,
                       const GroupedBatch<T, SZ, Mem>& field, int row0, const char* buf_arg,
                       const GroupedBatch<T, SZ, Mem>& buf) {
  require_accessible<Kokkos::View<T*, Mem>, Exec>(field_arg);
  const int n = plan.n(), nsys = field.nsys();
  require(n >= kDistD2MinRows, concat(fn, ": the plan is empty (default-constructed)"));
  distd2_check_field<Exec>(fn, field_arg, field, nsys, row0, n);
  distd2_check_rows<Exec>(fn, buf_arg, buf, nsys, 2);
  return nsys;
}

/// The single subdomain's own 2x2 system s + P e = D_0, Q s + e = D_{n-1}
/// (nothing dropped); det_inv = 1 / (1 - PQ).
template <class T, class Mem>
void distd2_own_system(const char* fn, const DistD2Plan<T, Mem>& plan, T& P, T& Q, T& det_inv) {
  const DistD2Coupling<T>& c = plan.coupling();
  P = c.first_prev + c.first_last;
  Q = c.last_first + c.last_next;
  const T det = T(1) - P * Q;
  require(usable_pivot(det), concat(fn, ": the subdomain's own 2x2 system is singular (determinant ", det, ")"));
  det_inv = T(1) / det;
}

}  // namespace impl

/// dst rows dst_row .. dst_row+count-1 := src rows src_row .. (taken mod
/// src.n(), so a periodic line's halo wraps). Packs and unpacks halos and
/// boundary rows. Same nsys; no fence.
template <class Exec, class T, int SZ, class Mem>
void distd2_copy_rows(const Exec& exec, const GroupedBatch<T, SZ, Mem>& src, int src_row,
                      const GroupedBatch<T, SZ, Mem>& dst, int dst_row, int count) {
  const char* fn = "kband::distd2_copy_rows";
  impl::ProfilingRegion region(fn);
  impl::require(src.nsys() == dst.nsys() && count >= 0 && count <= src.n() && dst_row >= 0 &&
                    dst_row + count <= dst.n(),
                impl::concat(fn, ": cannot copy ", count, " rows from '", src.label(), "' (nsys=", src.nsys(),
                             ", n=", src.n(), ") into rows ", dst_row, ".. of '", dst.label(), "' (nsys=",
                             dst.nsys(), ", n=", dst.n(), ")"));
  if (count == 0 || src.nsys() == 0) return;
  Kokkos::parallel_for(fn,
                       impl::Range<Exec, Kokkos::IndexType<size_t>>(
                           exec, 0, static_cast<size_t>(src.ngroups()) * count * SZ),
                       impl::DistD2CopyRows<T, SZ, Mem>{src.view(), dst.view(), src_row, dst_row, count, src.nsys()});
}

/// Algorithm 6: the decoupling phase of one subdomain with the RHS stencil
/// fused into the forward pass (the input rows are read once). Batches as in
/// the header comment: in/out hold the subdomain in rows row0 .. row0+n-1
/// (n = plan.n(); out must not alias in), halo_lo/halo_hi/bnd have n = 2.
/// One GPU thread per system (SZ consecutive threads per group), one CPU
/// thread per group of SZ systems. No fence.
template <class Exec, class T, int SZ, class Mem>
void distd2_decouple(const Exec& exec, const DistD2Plan<T, Mem>& plan, const GroupedBatch<T, SZ, Mem>& in,
                     const GroupedBatch<T, SZ, Mem>& halo_lo, const GroupedBatch<T, SZ, Mem>& halo_hi,
                     const GroupedBatch<T, SZ, Mem>& out, const GroupedBatch<T, SZ, Mem>& bnd, int row0 = 0) {
  const char* fn = "kband::distd2_decouple";
  impl::ProfilingRegion region(fn);
  const int nsys = impl::distd2_check_phase<Exec>(fn, plan, "in", in, row0, "bnd", bnd);
  impl::distd2_check_field<Exec>(fn, "out", out, nsys, row0, plan.n());
  impl::require(out.view().data() != in.view().data(), impl::concat(fn, ": out must not alias in"));
  const auto& d = plan.data();
  // a halo at a closed line end is not read: any batch (even an empty one) will do
  if (!d.lo_closed) impl::distd2_check_rows<Exec>(fn, "halo_lo", halo_lo, nsys, 2);
  if (!d.hi_closed) impl::distd2_check_rows<Exec>(fn, "halo_hi", halo_hi, nsys, 2);
  impl::distd2_decouple_impl<false>(fn, exec, plan, in, halo_lo, halo_hi, out, bnd, row0, T(0), T(0), T(1));
}

/// distd2_decouple with the halos taken as zero: the first half of a
/// decoupling that overlaps the halo exchange. The decoupling is linear in the
/// input and the halos enter only the RHS of rows 0, 1, n-2 and n-1, so
///   halo exchange posted;  distd2_decouple_interior(exec, plan, in, out, bnd, row0);
///   halo exchange done;    distd2_add_halos(exec, plan, halo_lo, halo_hi, out, bnd, hc, row0);
///   distd2_couple(..., out, row0, &hc)
/// gives the result of distd2_decouple + distd2_couple up to rounding. Needs
/// n = plan.n() >= 5 (kDistD2SplitMinRows). With first / last (extents
/// (nsys, 2) or (nsys, 3), both or neither) the kernel also copies the
/// subdomain's rows 0, 1 into first and rows n-2, n-1 into last: the
/// neighbours' halos, sent by the same pass that reads them; with 3 rows, row
/// 2 takes the boundary rows D_0 (first) and D_{n-1} (last) of the zero-halo
/// decoupling (the one-message mode, distd2_couple_one_message). No fence.
template <class Exec, class T, int SZ, class Mem>
void distd2_decouple_interior(const Exec& exec, const DistD2Plan<T, Mem>& plan, const GroupedBatch<T, SZ, Mem>& in,
                              const GroupedBatch<T, SZ, Mem>& out, const GroupedBatch<T, SZ, Mem>& bnd, int row0 = 0,
                              const GroupedBatch<T, SZ, Mem>* first = nullptr,
                              const GroupedBatch<T, SZ, Mem>* last = nullptr) {
  const char* fn = "kband::distd2_decouple_interior";
  impl::ProfilingRegion region(fn);
  const int nsys = impl::distd2_check_phase<Exec>(fn, plan, "in", in, row0, "bnd", bnd);
  impl::distd2_check_field<Exec>(fn, "out", out, nsys, row0, plan.n());
  impl::require(out.view().data() != in.view().data(), impl::concat(fn, ": out must not alias in"));
  impl::require(plan.n() >= kDistD2SplitMinRows, impl::concat(fn, ": n_local=", plan.n(), " < ", kDistD2SplitMinRows,
                                                              " (use distd2_decouple)"));
  impl::require((first == nullptr) == (last == nullptr), impl::concat(fn, ": give both 'first' and 'last' or neither"));
  if (first) {
    const int rows = first->n() == 3 ? 3 : 2;
    impl::distd2_check_rows<Exec>(fn, "first", *first, nsys, rows);
    impl::distd2_check_rows<Exec>(fn, "last", *last, nsys, rows);
  }
  impl::distd2_decouple_impl<false>(fn, exec, plan, in, in, in, out, bnd, row0, T(0), T(0), T(1), true, first, last);
}

/// The second half (see distd2_decouple_interior): adds the halos' share to
/// bnd and to out's row row0+n-2, and writes hc (extents (nsys, 1)), which
/// distd2_couple spreads over rows 1 .. n-3. Halos as for
/// distd2_decouple (not read at a closed line end). With d_first / d_last
/// (extents (nsys, 1), both or neither) it also writes the final D_0 into
/// d_first and D_{n-1} into d_last: the messages for the previous and next
/// subdomain. O(1) work per system. No fence.
template <class Exec, class T, int SZ, class Mem>
void distd2_add_halos(const Exec& exec, const DistD2Plan<T, Mem>& plan, const GroupedBatch<T, SZ, Mem>& halo_lo,
                      const GroupedBatch<T, SZ, Mem>& halo_hi, const GroupedBatch<T, SZ, Mem>& out,
                      const GroupedBatch<T, SZ, Mem>& bnd, const GroupedBatch<T, SZ, Mem>& hc, int row0 = 0,
                      const GroupedBatch<T, SZ, Mem>* d_first = nullptr,
                      const GroupedBatch<T, SZ, Mem>* d_last = nullptr) {
  const char* fn = "kband::distd2_add_halos";
  impl::ProfilingRegion region(fn);
  const int nsys = impl::distd2_check_phase<Exec>(fn, plan, "out", out, row0, "bnd", bnd);
  impl::require(plan.n() >= kDistD2SplitMinRows, impl::concat(fn, ": n_local=", plan.n(), " < ", kDistD2SplitMinRows,
                                                              " (use distd2_decouple)"));
  impl::distd2_check_rows<Exec>(fn, "hc", hc, nsys, 1);
  const auto& d = plan.data();
  if (!d.lo_closed) impl::distd2_check_rows<Exec>(fn, "halo_lo", halo_lo, nsys, 2);
  if (!d.hi_closed) impl::distd2_check_rows<Exec>(fn, "halo_hi", halo_hi, nsys, 2);
  impl::require((d_first == nullptr) == (d_last == nullptr),
                impl::concat(fn, ": give both 'd_first' and 'd_last' or neither"));
  if (d_first) {
    impl::distd2_check_rows<Exec>(fn, "d_first", *d_first, nsys, 1);
    impl::distd2_check_rows<Exec>(fn, "d_last", *d_last, nsys, 1);
  }
  if (nsys == 0) return;
  Kokkos::parallel_for(fn,
                       impl::Range<Exec, Kokkos::IndexType<size_t>>(
                           exec, 0, static_cast<size_t>(out.ngroups()) * SZ),
                       impl::DistD2AddHalosKernel<T, SZ, Mem>{d,
                                                              d.lo_closed ? bnd.view() : halo_lo.view(),
                                                              d.hi_closed ? bnd.view() : halo_hi.view(),
                                                              out.view(),
                                                              bnd.view(),
                                                              hc.view(),
                                                              row0,
                                                              nsys,
                                                              d_first != nullptr,
                                                              d_first ? d_first->view() : bnd.view(),
                                                              d_last ? d_last->view() : bnd.view()});
}

namespace impl {
/// The scalars of the 2x2 systems (DistD2Ends without its views): across
/// the lower boundary s = (D_0 - ps x_s) ws, across the upper one
/// e = (D_{n-1} - pe x_e) we (x_s, x_e: the neighbours' boundary rows); the
/// subdomain's own system for Only.
template <class T, int SZ, class Mem>
DistD2Ends<T, SZ, Mem> distd2_ends(const char* fn, const DistD2Plan<T, Mem>& plan, const DistD2Coupling<T>& prev,
                                   const DistD2Coupling<T>& next) {
  const double eps = std::numeric_limits<T>::epsilon();
  require(plan.position() == DistD2Position::Only || plan.dropped() <= eps,
          concat(fn, ": the plan drops coupling entries up to ", plan.dropped(),
                 " > epsilon; solve the reduced system (distd2_reduced_solve, distd2_substitute)"));
  const DistD2Coupling<T>& c = plan.coupling();
  DistD2Ends<T, SZ, Mem> ends;
  auto det = [&](T v, const char* where) {
    require(usable_pivot(v),
            concat(fn, ": the 2x2 system across the ", where, " boundary is singular (determinant ", v, ")"));
    return T(1) / v;
  };
  if (plan.position() == DistD2Position::Only) {
    distd2_own_system(fn, plan, ends.ps, ends.pe, ends.ws);
    ends.we = ends.ws;
    return ends;
  }
  if (plan.has_prev()) {
    ends.ps = c.first_prev;
    ends.ws = det(T(1) - c.first_prev * prev.last_next, "lower");
  }
  if (plan.has_next()) {
    ends.pe = c.last_next;
    ends.we = det(T(1) - next.first_prev * c.last_next, "upper");
  }
  return ends;
}

/// distd2_couple with the neighbours' boundary rows anywhere: D_{n-1} of the
/// previous subdomain in row is of xs, D_0 of the next one in row ie of xe.
template <class Exec, class T, int SZ, class Mem>
void distd2_couple_rows(const char* fn, const Exec& exec, const DistD2Plan<T, Mem>& plan,
                        const GroupedBatch<T, SZ, Mem>& bnd, const GroupedBatch<T, SZ, Mem>& xs, int is,
                        const char* xs_arg, const DistD2Coupling<T>& prev, const GroupedBatch<T, SZ, Mem>& xe, int ie,
                        const char* xe_arg, const DistD2Coupling<T>& next, const GroupedBatch<T, SZ, Mem>& out,
                        int row0, const GroupedBatch<T, SZ, Mem>* hc) {
  const int nsys = distd2_check_phase<Exec>(fn, plan, "out", out, row0, "bnd", bnd);
  DistD2Ends<T, SZ, Mem> ends = distd2_ends<T, SZ, Mem>(fn, plan, prev, next);
  ends.xs = ends.xe = bnd.view();
  auto check_row = [&](const GroupedBatch<T, SZ, Mem>& b, int row, const char* arg) {
    require(b.nsys() == nsys && row >= 0 && row < b.n(),
            concat(fn, ": argument '", arg, "' (", b.label(), ") has extents (nsys=", b.nsys(), ", n=", b.n(),
                   "), expected nsys=", nsys, " and row ", row));
  };
  if (plan.position() == DistD2Position::Only) {
    ends.is = 1;
    ends.ie = 0;
  } else {
    if (plan.has_prev()) {
      check_row(xs, is, xs_arg);
      ends.xs = xs.view();
      ends.is = is;
    }
    if (plan.has_next()) {
      check_row(xe, ie, xe_arg);
      ends.xe = xe.view();
      ends.ie = ie;
    }
  }
  if (hc) distd2_check_rows<Exec>(fn, "hc", *hc, nsys, 1);
  distd2_substitute_impl(fn, exec, plan, bnd, ends, out, row0, hc);
}
}  // namespace impl

/// The 2x2 systems across both boundaries of one subdomain, then Algorithm 7
/// (substitution) in place in out rows row0 .. row0+n-1. bnd is this
/// subdomain's boundary buffer from distd2_decouple; bnd_prev / bnd_next and
/// prev / next are the neighbours' buffers and couplings (periodic K = 2:
/// both the same neighbour; closed line ends and Only: not read, pass any
/// batch). hc: the halos' share from distd2_add_halos (split decoupling).
/// Throws kband::Error for a plan whose dropped entries exceed epsilon
/// (built with exact_reduced: use distd2_reduced_solve) or an unusable 2x2
/// determinant. No fence.
template <class Exec, class T, int SZ, class Mem>
void distd2_couple(const Exec& exec, const DistD2Plan<T, Mem>& plan, const GroupedBatch<T, SZ, Mem>& bnd,
                   const GroupedBatch<T, SZ, Mem>& bnd_prev, const DistD2Coupling<T>& prev,
                   const GroupedBatch<T, SZ, Mem>& bnd_next, const DistD2Coupling<T>& next,
                   const GroupedBatch<T, SZ, Mem>& out, int row0 = 0,
                   const GroupedBatch<T, SZ, Mem>* hc = nullptr) {
  const char* fn = "kband::distd2_couple";
  impl::ProfilingRegion region(fn);
  const int nsys = out.nsys();
  if (plan.has_prev()) impl::distd2_check_rows<Exec>(fn, "bnd_prev", bnd_prev, nsys, 2);
  if (plan.has_next()) impl::distd2_check_rows<Exec>(fn, "bnd_next", bnd_next, nsys, 2);
  impl::distd2_couple_rows(fn, exec, plan, bnd, bnd_prev, 1, "bnd_prev", prev, bnd_next, 0, "bnd_next", next, out,
                           row0, hc);
}

/// The one-message mode of DistD2 across subdomains (what kband::mpi uses):
///   distd2_decouple_interior(exec, plan, in, out, bnd, row0, &to_prev, &to_next);  // (nsys, 3) messages
///   (to_prev reaches the previous subdomain as its from_next, to_next the next one as its from_prev)
///   distd2_couple_one_message(exec, plan, in, bnd, from_prev, cpl_prev, edges_prev,
///                             from_next, cpl_next, edges_next, out, row0);
/// edges_prev = the previous plan's last_edges(), edges_next = the next
/// plan's first_edges(). Each side adds the halos' share to its own boundary
/// rows and forms its neighbours' from their messages and its own end rows,
/// neglecting their far-end shares: valid when the plans' far() (this one's,
/// and the neighbours' in their edges) are below epsilon; throws kband::Error
/// otherwise. One exchange per call instead of two. No fence.
template <class Exec, class T, int SZ, class Mem>
void distd2_couple_one_message(const Exec& exec, const DistD2Plan<T, Mem>& plan, const GroupedBatch<T, SZ, Mem>& in,
                               const GroupedBatch<T, SZ, Mem>& bnd, const GroupedBatch<T, SZ, Mem>& from_prev,
                               const DistD2Coupling<T>& cpl_prev, const impl::DistD2Edges<T>& edges_prev,
                               const GroupedBatch<T, SZ, Mem>& from_next, const DistD2Coupling<T>& cpl_next,
                               const impl::DistD2Edges<T>& edges_next, const GroupedBatch<T, SZ, Mem>& out,
                               int row0 = 0) {
  const char* fn = "kband::distd2_couple_one_message";
  impl::ProfilingRegion region(fn);
  const int nsys = impl::distd2_check_phase<Exec>(fn, plan, "out", out, row0, "bnd", bnd);
  impl::distd2_check_field<Exec>(fn, "in", in, nsys, row0, plan.n());
  impl::require(plan.n() >= kDistD2SplitMinRows && plan.position() != DistD2Position::Only,
                impl::concat(fn, ": needs a subdomain of a split line with n_local >= ", kDistD2SplitMinRows));
  const double eps = std::numeric_limits<T>::epsilon();
  const double far = std::max({plan.far(), plan.has_prev() ? static_cast<double>(edges_prev.far) : 0.0,
                                plan.has_next() ? static_cast<double>(edges_next.far) : 0.0});
  impl::require(far <= eps, impl::concat(fn, ": the far-end weight ", far, " of this or a neighbouring plan exceeds ",
                                         "epsilon ", eps, " (use distd2_add_halos and distd2_couple)"));
  if (plan.has_prev()) impl::distd2_check_rows<Exec>(fn, "from_prev", from_prev, nsys, 3);
  if (plan.has_next()) impl::distd2_check_rows<Exec>(fn, "from_next", from_next, nsys, 3);
  const impl::DistD2Ends<T, SZ, Mem> ends = impl::distd2_ends<T, SZ, Mem>(fn, plan, cpl_prev, cpl_next);
  if (nsys == 0) return;
  using S = impl::distd2_shape<Exec, SZ>;
  impl::distd2_launch<impl::kDistD2SweepMinBlocks>(
      fn, exec, S::template geometry<T>(nsys, plan.n(), false),
      impl::DistD2OneMessageKernel<Exec, T, SZ, Mem, S::W, S::U>{plan.data(), in.view(), bnd.view(), out.view(),
                                                                 from_prev.view(), from_next.view(), edges_prev,
                                                                 edges_next, ends, plan.has_prev(), plan.has_next(),
                                                                 row0, nsys});
}

/// Algorithm 7 with the boundary unknowns already solved: solved(s, 0) = x_0,
/// solved(s, 1) = x_{n-1} of each system (from distd2_reduced_solve), in
/// place in out rows row0 .. row0+n-1. No fence.
template <class Exec, class T, int SZ, class Mem>
void distd2_substitute(const Exec& exec, const DistD2Plan<T, Mem>& plan, const GroupedBatch<T, SZ, Mem>& solved,
                       const GroupedBatch<T, SZ, Mem>& out, int row0 = 0) {
  const char* fn = "kband::distd2_substitute";
  impl::ProfilingRegion region(fn);
  impl::distd2_check_phase<Exec>(fn, plan, "out", out, row0, "solved", solved);
  impl::DistD2Ends<T, SZ, Mem> ends;
  ends.xs = ends.xe = solved.view();
  impl::distd2_substitute_impl(fn, exec, plan, solved, ends, out, row0,
                               static_cast<const GroupedBatch<T, SZ, Mem>*>(nullptr));
}

/// The exact reduced system of a line's 2K boundary unknowns (s_0, e_0, ..,
/// s_{K-1}, e_{K-1}), K >= 2, built from every subdomain's coupling (in line
/// order) and factored once (shared-coefficient Thomas; periodic Thomas for
/// periodic lines). Throws kband::Error when K < 2 or a pivot fails (fences).
template <class T, class Mem = Kokkos::DefaultExecutionSpace::memory_space>
class DistD2Reduced {
 public:
  DistD2Reduced() = default;

  template <class Exec>
  DistD2Reduced(const Exec& exec, const std::vector<DistD2Coupling<T>>& couplings, bool periodic) {
    const char* fn = "kband::DistD2Reduced";
    impl::ProfilingRegion region(fn);
    const int K = static_cast<int>(couplings.size());
    impl::require(K >= 2, impl::concat(fn, ": ", K, " subdomains; the reduced system needs at least 2"));
    const int m = 2 * K;
    Kokkos::View<T*, Mem> a("kband::distd2::red_a", m), b("kband::distd2::red_b", m), c("kband::distd2::red_c", m);
    auto ha = Kokkos::create_mirror_view(a), hb = Kokkos::create_mirror_view(b), hc = Kokkos::create_mirror_view(c);
    for (int k = 0; k < K; ++k) {
      const DistD2Coupling<T>& q = couplings[k];
      ha(2 * k) = q.first_prev;  // row 0 corner when periodic
      hb(2 * k) = 1;
      hc(2 * k) = q.first_last;
      ha(2 * k + 1) = q.last_first;
      hb(2 * k + 1) = 1;
      hc(2 * k + 1) = q.last_next;  // row m-1 corner when periodic
    }
    Kokkos::deep_copy(exec, a, ha);
    Kokkos::deep_copy(exec, b, hb);
    Kokkos::deep_copy(exec, c, hc);
    factor_ = TridiagonalFactor<T, Mem>(exec, a, b, c, periodic ? Boundary::Periodic : Boundary::NonPeriodic);
    impl::require(factor_.info() == 0, impl::concat(fn, ": the reduced system has an unusable pivot in row ",
                                                    factor_.info()));
  }

  int subdomains() const { return factor_.n() / 2; }
  const TridiagonalFactor<T, Mem>& factor() const { return factor_; }

 private:
  TridiagonalFactor<T, Mem> factor_;
};

/// Solves the reduced system in place: bnd_all (nsys, 2K rows) holds every
/// subdomain's bnd (rows 2k, 2k+1) and receives (s_k, e_k). No fence.
template <class Exec, class T, int SZ, class Mem>
void distd2_reduced_solve(const Exec& exec, const DistD2Reduced<T, Mem>& red, const GroupedBatch<T, SZ, Mem>& bnd_all) {
  const char* fn = "kband::distd2_reduced_solve";
  impl::ProfilingRegion region(fn);
  impl::require(red.subdomains() >= 2, impl::concat(fn, ": the reduced system is empty (default-constructed)"));
  impl::distd2_check_rows<Exec>(fn, "bnd_all", bnd_all, bnd_all.nsys(), 2 * red.subdomains());
  Kokkos::View<int*, Mem> info(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("kband::distd2::info")),
                               bnd_all.nsys());
  thomas(exec, red.factor(), bnd_all, bnd_all, info);
}

/// A line of N = sum n_k rows split into K subdomains on one rank: the plans
/// (Only for K = 1; First/Interior/Last otherwise) and, with
/// opt.exact_reduced and K >= 2, the reduced system. Subdomains may differ
/// in length. Throws as DistD2Plan does.
template <class T, class Mem = Kokkos::DefaultExecutionSpace::memory_space>
class DistD2Line {
 public:
  template <class Exec>
  DistD2Line(const Exec& exec, const CompactScheme& scheme, const std::vector<int>& lengths,
             const DistD2Options& opt = {})
      : opt_(opt) {
    const int K = static_cast<int>(lengths.size());
    impl::require(K >= 1, "kband::DistD2Line: no subdomains");
    std::vector<DistD2Coupling<T>> cpl;
    int off = 0;
    for (int k = 0; k < K; ++k) {
      const DistD2Position pos = K == 1 ? DistD2Position::Only
                                        : (k == 0 ? DistD2Position::First
                                                  : (k == K - 1 ? DistD2Position::Last : DistD2Position::Interior));
      plans_.emplace_back(exec, scheme, lengths[k], pos, opt);
      offsets_.push_back(off);
      off += lengths[k];
      cpl.push_back(plans_.back().coupling());
    }
    n_ = off;
    if (opt.exact_reduced && K >= 2) reduced_ = DistD2Reduced<T, Mem>(exec, cpl, scheme.periodic());
  }
  /// Equal splits (the first N % K subdomains one row longer).
  template <class Exec>
  static DistD2Line split(const Exec& exec, const CompactScheme& scheme, int N, int K, const DistD2Options& opt = {}) {
    impl::require(K >= 1 && N >= K, impl::concat("kband::DistD2Line::split: N=", N, ", K=", K));
    std::vector<int> len(K, N / K);
    for (int k = 0; k < N % K; ++k) ++len[k];
    return DistD2Line(exec, scheme, len, opt);
  }

  int n() const { return n_; }
  int subdomains() const { return static_cast<int>(plans_.size()); }
  const DistD2Plan<T, Mem>& plan(int k) const { return plans_[k]; }
  int offset(int k) const { return offsets_[k]; }
  bool exact_reduced() const { return opt_.exact_reduced && subdomains() >= 2; }
  const DistD2Reduced<T, Mem>& reduced() const { return reduced_; }

 private:
  DistD2Options opt_;
  int n_ = 0;
  std::vector<DistD2Plan<T, Mem>> plans_;
  std::vector<int> offsets_;
  DistD2Reduced<T, Mem> reduced_;
};

/// Buffers of the single-rank distd2 for nsys lines (allocate once, reuse).
template <class T, int SZ, class Mem = Kokkos::DefaultExecutionSpace::memory_space>
struct DistD2Workspace {
  std::vector<GroupedBatch<T, SZ, Mem>> halo_lo, halo_hi, bnd;  // one per subdomain, n = 2
  GroupedBatch<T, SZ, Mem> bnd_all;                             // n = 2K (exact reduced solve)
  int nsys = -1;

  DistD2Workspace() = default;
  DistD2Workspace(int nsys_, int K) : nsys(nsys_) {
    for (int k = 0; k < K; ++k) {
      halo_lo.emplace_back("kband::distd2::halo_lo", nsys_, 2);
      halo_hi.emplace_back("kband::distd2::halo_hi", nsys_, 2);
      bnd.emplace_back("kband::distd2::bnd", nsys_, 2);
    }
    bnd_all = GroupedBatch<T, SZ, Mem>("kband::distd2::bnd_all", nsys_, 2 * K);
  }
};

/// out = the operator applied to every line of in (nsys, line.n() rows) by
/// DistD2 over the line's subdomains: halos filled from the neighbouring
/// subdomains, decouple, then the 2x2 systems and substitution (or the exact
/// reduced solve). With one subdomain the three phases run as one kernel. out must not alias in. ws: buffers from a previous call
/// or DistD2Workspace(nsys, K); allocated here when empty. No fence.
template <class Exec, class T, int SZ, class Mem>
void distd2(const Exec& exec, const DistD2Line<T, Mem>& line, const GroupedBatch<T, SZ, Mem>& in,
            const GroupedBatch<T, SZ, Mem>& out, DistD2Workspace<T, SZ, Mem> ws = {}) {
  const char* fn = "kband::distd2";
  impl::ProfilingRegion region(fn);
  const int K = line.subdomains(), N = line.n(), nsys = in.nsys();
  impl::distd2_check_rows<Exec>(fn, "in", in, nsys, N);
  impl::distd2_check_rows<Exec>(fn, "out", out, nsys, N);
  if (ws.nsys != nsys || static_cast<int>(ws.bnd.size()) != K) ws = DistD2Workspace<T, SZ, Mem>(nsys, K);
  if (K == 1) {
    // one subdomain: decoupling, its own 2x2 system and the substitution in
    // one kernel (the decoupled rows stay in team scratch where they fit)
    const auto& p = line.plan(0);
    if (!p.data().lo_closed) distd2_copy_rows(exec, in, N - 2, ws.halo_lo[0], 0, 2);
    if (!p.data().hi_closed) distd2_copy_rows(exec, in, 0, ws.halo_hi[0], 0, 2);
    T P, Q, det_inv;
    impl::distd2_own_system(fn, p, P, Q, det_inv);
    impl::distd2_decouple_impl<true>(fn, exec, p, in, ws.halo_lo[0], ws.halo_hi[0], out, ws.bnd[0], 0, P, Q, det_inv);
    return;
  }
  for (int k = 0; k < K; ++k) {
    const auto& p = line.plan(k);
    const int o = line.offset(k);
    if (!p.data().lo_closed) distd2_copy_rows(exec, in, o - 2 + N, ws.halo_lo[k], 0, 2);
    if (!p.data().hi_closed) distd2_copy_rows(exec, in, o + p.n(), ws.halo_hi[k], 0, 2);
    distd2_decouple(exec, p, in, ws.halo_lo[k], ws.halo_hi[k], out, ws.bnd[k], o);
  }
  if (line.exact_reduced()) {
    for (int k = 0; k < K; ++k) distd2_copy_rows(exec, ws.bnd[k], 0, ws.bnd_all, 2 * k, 2);
    distd2_reduced_solve(exec, line.reduced(), ws.bnd_all);
    for (int k = 0; k < K; ++k) {
      distd2_copy_rows(exec, ws.bnd_all, 2 * k, ws.bnd[k], 0, 2);
      distd2_substitute(exec, line.plan(k), ws.bnd[k], out, line.offset(k));
    }
    return;
  }
  for (int k = 0; k < K; ++k) {
    const int kp = (k + K - 1) % K, kn = (k + 1) % K;
    distd2_couple(exec, line.plan(k), ws.bnd[k], ws.bnd[kp], line.plan(kp).coupling(), ws.bnd[kn],
                  line.plan(kn).coupling(), out, line.offset(k));
  }
}

}  // namespace kband
