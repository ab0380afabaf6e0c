// Batched pentadiagonal solvers.
//
//   kband::penta(exec, a, b, c, d, e, y, x, info)            per-system coefficients
//   kband::periodic_penta(exec, a, b, c, d, e, y, x, info)   cyclic systems
//   kband::PentadiagonalFactor f(exec, a, b, c, d, e[, Boundary::Periodic]);
//   kband::penta(exec, f, y, x, info)                         one matrix, many RHS
//   kband::pcr_penta(exec, a, b, c, d, e, y, x, info)         PCR, team per system
//   kband::solve_pentadiagonal(exec, a, b, c, d, e, y, x, info[, opts])  picks one
//
// a, b, c, d, e, y, x are batches of one layout (ContiguousBatch,
// InterleavedBatch or GroupedBatch) with extents (nsys, n); row j of system s:
//   a(s,j) x(s,j-2) + b(s,j) x(s,j-1) + c(s,j) x(s,j) + d(s,j) x(s,j+1)
//     + e(s,j) x(s,j+2) = y(s,j)
// (the names of the PCR-Penta paper's storage annex: a, b below the diagonal
// c, d, e above it; layouts/kband_PentaFormats.hpp imports and exports its
// two flat formats). Entries outside the matrix -- a(s,0), a(s,1), b(s,0),
// d(s,n-1), e(s,n-2), e(s,n-1) -- are ignored (never read as values, NaN is
// fine). For periodic systems (n >= 5) they are the corner entries, every
// column index taken modulo n: a(s,0) couples row 0 to x(n-2), a(s,1) and
// b(s,0) rows 1 and 0 to x(n-1), d(s,n-1) and e(s,n-2) rows n-1 and n-2 to
// x(0), e(s,n-1) row n-1 to x(1).
//
// x may be the same batch as y (in-place); it must not alias a..e.
// info(s) = 0 on success, k > 0 when the pivot of row k (1-based) was zero or
// not finite (periodic: k = 1 or 2 also when c(s,0) resp. c(s,1) is zero, k = n
// when the 2x2 Woodbury matrix is singular; PCR: k names the first row of a
// 2x2 block whose reduced diagonal block is singular); x(s,:) is then NaN.
// Bad extents, layouts or sizes throw kband::Error before anything runs. No
// call fences (PentadiagonalFactor::info() copies one int to the host).
//
// Stability: none of these solvers pivots. Elimination (penta) is backward
// stable for diagonally dominant systems (|c| >= |a|+|b|+|d|+|e| by rows or
// columns) and for symmetric positive definite ones; the periodic variant
// uses the Sherman-Morrison-Woodbury correction with G = -diag(c(s,0),
// c(s,1)) (the rank-2 analogue of periodic_thomas' gamma = -b(s,0)), suited to
// dominant cyclic systems. PCR-Penta works on the 2x2-block tridiagonal form
// and needs the diagonal 2x2 blocks it meets to stay non-singular, which
// holds for diagonally dominant and SPD systems; its reduced off-diagonal
// blocks shrink every step for dominant systems.
#pragma once

#include "impl/kband_PentaRegisters_impl.hpp"
#include "impl/kband_PentaShared_impl.hpp"
#include "impl/kband_PentaWindow_impl.hpp"
#include "kband_PCR.hpp"
#include "kband_Thomas.hpp"

#include <cstdint>
#include <limits>

namespace kband {

namespace impl {

/// Argument checks shared by the per-system pentadiagonal solvers.
template <class Exec, class BA, class BB, class BC, class BD, class BE, class BY, class BX, class Info>
void check_penta_args(const char* fn, const BA& a, const BB& b, const BC& c, const BD& d, const BE& e,
                      const BY& y, const BX& x, const Info& info, int min_n) {
  static const char* const names[] = {"a", "b", "c", "d", "e", "y"};
  check_banded_args<Exec>(fn, names, min_n, x, info, a, b, c, d, e, y);
}

/// The team Auto gives the non-periodic Scratch variant on GPUs
/// (interleaved and grouped batches): its threads, and whether z stays in
/// scratch with p, q (three rows a thread) or goes through x (two; the
/// solve then also writes and reads z there, 9 values a point moved against
/// 7). team = 0: no such team (Auto then takes the other variants).
struct PentaScratchPlan {
  int team = 0;
  bool z_scratch = true;
};

/// Auto's rule: a wide team (a warp's load covers 128 bytes of a row: 16
/// doubles, 32 floats) with three rows a thread while its rows fit 36 KB
/// (24 KB where the rows do not start on 128-byte lines, `aligned` false:
/// a load then touches two lines, and a wide team's loads stall), then,
/// aligned, a wide team with two rows a thread within 36 KB, then a narrow
/// team (64 bytes) with three rows within 36 KB; none past that. H100,
/// 2^27 points, pipelined forward pass, bw/copy interleaved aligned /
/// misaligned / grouped, double: n = 96 wide-3 0.89 / 0.71-0.75 / 0.94
/// against narrow-3 0.77 / 0.76 / 0.78; n = 128 wide-2 0.74 / 0.57-0.58 /
/// 0.77 against narrow-3 0.66 / 0.61-0.63 / 0.69; n = 144 wide-2 0.73 /
/// 0.56-0.59 / 0.76, narrow-3 0.65 / 0.61-0.64 / 0.69, Global 0.53 / 0.50 /
/// 0.55; n = 192 narrow-3 0.60 / 0.57-0.60 / 0.64 against Global 0.51 / 0.48-
/// 0.50 / 0.53; n = 224 Global; float the same rule in bytes (n = 128
/// wide-2 0.73 / 0.57 / 0.78 against narrow-3 0.66 / 0.62 / 0.74; n = 256
/// narrow-3 0.48 against Global 0.51). A caller's team size (requested > 0)
/// gets three rows a thread where they fit 36 KB, else two, else 0.
template <class T>
PentaScratchPlan penta_scratch_plan(int n, int requested = 0, bool aligned = true) {
  constexpr size_t cap = 36 * 1024;
  const size_t row = static_cast<size_t>(n) * sizeof(T);
  const auto fits = [&](int rows, int ts, size_t limit) { return row * rows * static_cast<size_t>(ts) <= limit; };
  if (requested > 0) {
    if (fits(3, requested, cap)) return {requested, true};
    if (fits(2, requested, cap)) return {requested, false};
    return {};
  }
  const int wide = 128 / static_cast<int>(sizeof(T)), narrow = wide / 2;
  if (fits(3, wide, aligned ? cap : 24 * 1024)) return {wide, true};
  if (aligned && fits(2, wide, cap)) return {wide, false};
  if (fits(3, narrow, cap)) return {narrow, true};
  return {};
}

/// Whether every row of the batches starts on a 128-byte line (the data
/// and the distance between rows multiples of 128 bytes: interleaved, nsys
/// a multiple of 128 / sizeof(T); grouped, SZ), so that a team of a wide
/// plan loads a row of an array as one line.
template <class... B>
bool rows_on_lines(const B&... b) {
  return ((reinterpret_cast<std::uintptr_t>(batch_traits<B>::data(b)) % 128 == 0 &&
           batch_traits<B>::row_stride(b) * sizeof(batch_value_t<B>) % 128 == 0) &&
          ...);
}

/// The Window variant of per-system, non-periodic penta (window_geometry;
/// its workspace: penta_workspace_size).
template <class Exec, class Args, class WS>
void penta_window(const char* fn, const Exec& exec, const Args& args, int nsys, int n, const SolveOptions& opt,
                  WS& ws) {
  using BX = decltype(args.x);
  using tx = batch_traits<BX>;
  using Shape = PentaWindowShape<batch_value_t<BX>>;
  using Rows = PentaWindowRows<decltype(args.a), decltype(args.b), decltype(args.c), decltype(args.d),
                               decltype(args.e), decltype(args.y), Shape::B>;
  using F = TwoTermWindow<Exec, Rows, BX, decltype(args.info), Shape::R, Shape::B>;
  const ThomasGeometry g = window_geometry<Exec>(fn, nsys, n, opt, F::scratch_per_thread());
  grow_workspace(exec, ws, 2 * WorkspaceMap<tx::layout, tx::sz>::extent(nsys, n), "kband::penta::ws");
  launch_thomas(fn, exec, g,
                F(nsys, n, Rows{args.a, args.b, args.c, args.d, args.e, args.y}, args.x, args.info, ws.data()));
}

template <bool Periodic, class Exec, class BA, class BB, class BC, class BD, class BE, class BY, class BX,
          class Info>
void penta_per_system(const char* fn, const Exec& exec, const BA& a, const BB& b, const BC& c, const BD& d,
                      const BE& e, const BY& y, const BX& x, const Info& info, const SolveOptions& opt_in,
                      Kokkos::View<batch_value_t<BX>*, typename batch_traits<BX>::memory_space> ws) {
  ProfilingRegion region(fn);
  using T = batch_value_t<BX>;
  using tx = batch_traits<BX>;
  check_penta_args<Exec>(fn, a, b, c, d, e, y, x, info, Periodic ? 5 : 1);
  const int nsys = tx::nsys(x), n = tx::n(x);
  const PentaArgs<BA, BB, BC, BD, BE, BY, BX, Info> args{a, b, c, d, e, y, x, info};
  if (!Periodic && opt_in.variant == Variant::Window) {
    penta_window(fn, exec, args, nsys, n, opt_in, ws);
    return;
  }
  SolveOptions opt = opt_in;
  bool z_scratch = true;
  if (is_device_exec<Exec>::value && !Periodic && tx::layout != Layout::Contiguous && opt.variant == Variant::Auto) {
    const PentaScratchPlan plan = penta_scratch_plan<T>(n, opt.team_size, rows_on_lines(a, b, c, d, e, y, x));
    if (plan.team > 0) {
      opt.variant = Variant::Scratch;
      opt.team_size = plan.team;
      z_scratch = plan.z_scratch;
    }
  }
  if (!Periodic && (opt.variant == Variant::Registers || opt.variant == Variant::Auto)) {
    constexpr int M = kPentaRegisterRows;
    using F = PentaPerSystemRegisters<Exec, BA, BB, BC, BD, BE, BY, BX, Info, M>;
    F f(typename F::Base{nsys, n, 1, 1, false, std::numeric_limits<T>::quiet_NaN()}, args);
    const int K = (n + M - 1) / M;
    f.Q = F::wave(K);
    f.spt = F::scratch_for(K);
    if (use_registers<Exec, tx::layout>(fn, opt, exec, nsys, n, M, f.spt, f)) return;
  }
  // contiguous batches on CPUs, Global: a thread takes a pack of
  // LanePack<T>::L systems through transposed blocks
  // (PentaPerSystem::solve_contiguous_pack)
  // (Auto and Scratch: p, q in the thread's team scratch, Global: in the
  // workspace)
  if constexpr (!is_device_exec<Exec>::value && KBAND_HOST_VECTOR_PACKS && tx::layout == Layout::Contiguous) {
    const auto launch = [&](const ThomasGeometry& g, const auto& base, auto scratch) {
      launch_thomas(fn, exec, g,
                    PentaPerSystem<Exec, BA, BB, BC, BD, BE, BY, BX, Info, LanePack<T>::L, 1, Periodic,
                                   decltype(scratch)::value, false>(base, args));
    };
    if (host_contiguous_packs<Exec, BX>(fn, exec, nsys, n, Periodic ? 4 : 2, opt, ws, "kband::penta::ws", launch))
      return;
  }
  constexpr int W = thomas_lanes<Exec, BX>::value;
  constexpr int U = thomas_unroll<Exec, BX>::value;
  constexpr bool contiguous = tx::layout == Layout::Contiguous;
  const int extra = Periodic ? 2 : 0;  // the columns of Z
  // CPUs, interleaved and grouped batches: a thread's lanes run as vector
  // packs (PentaPerSystem::solve_packed), with z in x; Auto keeps p and q in
  // team scratch (a buffer per thread that Kokkos keeps between calls and
  // that stays in cache) rather than in a workspace the size of the batch
  constexpr bool host_packs = !is_device_exec<Exec>::value && W > 1 && W % LanePack<T>::L == 0;
  if (host_packs) {
    if (opt.variant == Variant::Auto)
      opt.variant = host_rows_fit_scratch<Exec, T>(n, W, 2 + extra) ? Variant::Scratch : Variant::Global;
    z_scratch = false;
  }
  ThomasGeometry g = thomas_geometry<Exec, T>(fn, nsys, n, W, (z_scratch ? 3 : 2) + extra, opt, contiguous);
  if (g.scratch && z_scratch && g.scratch_level == 1 && !contiguous) {
    // Scratch: where a team's rows do not fit level 0 but do without z, z
    // goes through x (as in Global) and p, q stay on chip
    const ThomasGeometry g2 = thomas_geometry<Exec, T>(fn, nsys, n, W, 2 + extra, opt, contiguous);
    if (g2.scratch_level == 0) {
      g = g2;
      z_scratch = false;
    }
  }
  if (!g.scratch)
    grow_workspace(exec, ws, WorkspaceMap<tx::layout, tx::sz>::extent(nsys, n) * (Periodic ? 4 : 2), "kband::penta::ws");
  using Base = ThomasBase<Exec, BX, T, W>;
  const Base base{nsys, n, g.scratch, g.scratch_level, ws, std::numeric_limits<T>::quiet_NaN()};
  if (g.scratch && z_scratch)
    launch_thomas(fn, exec, g, PentaPerSystem<Exec, BA, BB, BC, BD, BE, BY, BX, Info, W, U, Periodic, true>(base, args));
  else if (g.scratch)
    launch_thomas(fn, exec, g,
                  PentaPerSystem<Exec, BA, BB, BC, BD, BE, BY, BX, Info, W, U, Periodic, true, false>(base, args));
  else
    launch_thomas(fn, exec, g, PentaPerSystem<Exec, BA, BB, BC, BD, BE, BY, BX, Info, W, U, Periodic, false>(base, args));
}

/// Bytes of team scratch PCR-Penta needs per system of n rows.
inline size_t pcr_penta_bytes(int n, size_t elem_bytes) {
  return static_cast<size_t>(2) * 14 * ((n + 1) / 2) * elem_bytes + 16;
}

}  // namespace impl

/// Workspace (elements) the Global variant of penta / periodic_penta uses for
/// a batch like x; pass a View this long to avoid an allocation per call.
template <class BX>
size_t penta_workspace_size(const BX& x, Boundary bc = Boundary::NonPeriodic) {
  using tx = impl::batch_traits<BX>;
  return impl::WorkspaceMap<tx::layout, tx::sz>::extent(tx::nsys(x), tx::n(x)) * (bc == Boundary::Periodic ? 4 : 2);
}

/// Pentadiagonal Gaussian elimination without pivoting, one thread per system
/// (per-system coefficients), any layout; n >= 1. opt.variant: Scratch keeps
/// the forward-pass rows in team scratch (interleaved and grouped batches:
/// on GPUs where a team's three rows a thread do not fit the on-chip level
/// but two do, and always on hosts, whose threads run their systems as
/// vector packs, z goes through x), Global in x and the workspace
/// (penta_workspace_size elements; allocated per call when too small),
/// Registers in registers (a team of threads per system, 8 rows each,
/// joined by a walk and two scans in team scratch: the solve reads a..e, y
/// once and writes x once; impl/kband_PentaRegisters_impl.hpp), Window a
/// thread per system with its latest rows in team scratch, each block of x
/// written once the rows after it fix it to the unit roundoff (any n, reads
/// a..e, y once and writes x once; systems that do not settle within the
/// ring go on in the workspace; impl/kband_PentaWindow_impl.hpp; not taken
/// by Auto: not yet timed on a GPU). Auto on
/// GPUs: Scratch in teams of 8-32 threads for interleaved and grouped
/// batches of n <= 192 (impl::penta_scratch_plan; with z in scratch such a
/// solve reads a..e, y once and writes x once), else Scratch or Global
/// (kband::Variant); on hosts Scratch (vector packs; contiguous batches
/// through transposed blocks), which needs no workspace.
template <class Exec, class BA, class BB, class BC, class BD, class BE, class BY, class BX, class Info>
void penta(const Exec& exec, const BA& a, const BB& b, const BC& c, const BD& d, const BE& e, const BY& y,
           const BX& x, const Info& info, const SolveOptions& opt = {},
           const Kokkos::View<impl::batch_value_t<BX>*, typename impl::batch_traits<BX>::memory_space>& workspace =
               {}) {
  impl::penta_per_system<false>("kband::penta", exec, a, b, c, d, e, y, x, info, opt, workspace);
}

/// Cyclic pentadiagonal systems (n >= 5; corner entries in the file comment),
/// elimination plus a rank-2 Sherman-Morrison-Woodbury correction.
template <class Exec, class BA, class BB, class BC, class BD, class BE, class BY, class BX, class Info>
void periodic_penta(const Exec& exec, const BA& a, const BB& b, const BC& c, const BD& d, const BE& e,
                    const BY& y, const BX& x, const Info& info, const SolveOptions& opt = {},
                    const Kokkos::View<impl::batch_value_t<BX>*, typename impl::batch_traits<BX>::memory_space>&
                        workspace = {}) {
  impl::penta_per_system<true>("kband::periodic_penta", exec, a, b, c, d, e, y, x, info, opt, workspace);
}

/// A pentadiagonal matrix shared by every system of a batch (rank-1 Views
/// a..e of length n, same conventions as above; periodic: n >= 5), factored
/// once on the device (one thread; no fence) and reused for any number of
/// solves, which then read only y and write x.
template <class T, class MemSpace = Kokkos::DefaultExecutionSpace::memory_space>
class PentadiagonalFactor {
 public:
  using value_type = T;
  using memory_space = MemSpace;

  PentadiagonalFactor() = default;

  template <class Exec, class VA, class VB, class VC, class VD, class VE>
  PentadiagonalFactor(const Exec& exec, const VA& a, const VB& b, const VC& c, const VD& d, const VE& e,
                      Boundary bc = Boundary::NonPeriodic) {
    const char* fn = "kband::PentadiagonalFactor";
    impl::ProfilingRegion region(fn);
    const bool periodic = bc == Boundary::Periodic;
    const int n = impl::check_factor_args<Exec>(fn, a, b, c, periodic ? 5 : 1);
    static_assert(VD::rank == 1 && VE::rank == 1, "kband: factor coefficients must be rank-1 Views");
    impl::require_accessible<VD, Exec>("d");
    impl::require_accessible<VE, Exec>("e");
    impl::require(static_cast<int>(d.extent(0)) == n && static_cast<int>(e.extent(0)) == n,
                  impl::concat(fn, ": a, b, c, d, e must have one length; got ", a.extent(0), ", ", b.extent(0),
                               ", ", c.extent(0), ", ", d.extent(0), ", ", e.extent(0)));
    auto alloc = [&](const char* l, int len) {
      return Kokkos::View<T*, MemSpace>(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string(l)), len);
    };
    const int np = periodic ? n : 0;
    f_.n = n;
    f_.periodic = periodic;
    f_.a = alloc("kband::penta_factor::a", n);
    f_.beta = alloc("kband::penta_factor::beta", n);
    f_.w = alloc("kband::penta_factor::w", n);
    f_.p = alloc("kband::penta_factor::p", n);
    f_.q = alloc("kband::penta_factor::q", n);
    f_.z1 = alloc("kband::penta_factor::z1", np);
    f_.z2 = alloc("kband::penta_factor::z2", np);
    f_.g1 = alloc("kband::penta_factor::g1", np);
    f_.g2 = alloc("kband::penta_factor::g2", np);
    f_.hinv = Kokkos::View<T[4], MemSpace>(Kokkos::view_alloc(exec, std::string("kband::penta_factor::hinv")));
    // the Registers variant's chunk maps (4 n values and a few KB; none when
    // one chunk holds the system or a team cannot hold its chunks)
    f_.tm = impl::kRegisterRowsShared;
    f_.tk = (n + f_.tm - 1) / f_.tm;
    if (f_.tk < 2 || f_.tk > impl::kPentaTableChunks) f_.tk = 0;
    while (f_.tk > (1 << f_.tr)) ++f_.tr;
    f_.tf = alloc("kband::penta_factor::tf", 4 * f_.tr * f_.tk);
    f_.tb = alloc("kband::penta_factor::tb", 4 * f_.tr * f_.tk);
    f_.hf = alloc("kband::penta_factor::hf", f_.tk > 0 ? 2 * n : 0);
    f_.hb = alloc("kband::penta_factor::hb", f_.tk > 0 ? 2 * n : 0);
    f_.info = Kokkos::View<int, MemSpace>(Kokkos::view_alloc(exec, std::string("kband::penta_factor::info")));
    Kokkos::parallel_for(fn, impl::Range<Exec>(exec, 0, 1),
                         impl::PentaFactorKernel<T, MemSpace, VA, VB, VC, VD, VE>{f_, a, b, c, d, e});
  }

  int n() const { return f_.n; }
  bool periodic() const { return f_.periodic; }
  /// 0, or the 1-based row whose pivot failed (n: singular Woodbury matrix).
  /// Copies to the host (fences).
  int info() const { return impl::read_scalar(f_.info); }
  const impl::PentaFactorData<T, MemSpace>& data() const { return f_; }

 private:
  impl::PentaFactorData<T, MemSpace> f_;
};

/// Solves A x(s,:) = y(s,:) for every system with the shared, factored A.
/// info(s) = factor.info() (x NaN when it is not 0). Variants (opt.variant,
/// see kband::Variant): Registers keeps every intermediate in registers (a
/// team of ceil(n / 16) threads per system; GPUs, or n <= 16), Recompute
/// stores none (y read twice, x written once), Scratch and Global store z.
/// Auto on GPUs: Registers for interleaved and grouped batches of n <= 128,
/// Recompute past that when the batch has systems for an eighth of the
/// device's threads, else Scratch or Global; on hosts Recompute for
/// interleaved and grouped batches, Global for contiguous ones.
template <class Exec, class T, class Mem, class BY, class BX, class Info>
void penta(const Exec& exec, const PentadiagonalFactor<T, Mem>& factor, const BY& y, const BX& x, const Info& info,
           const SolveOptions& opt = {}) {
  const char* fn = factor.periodic() ? "kband::penta(shared, periodic)" : "kband::penta(shared)";
  impl::ProfilingRegion region(fn);
  using tx = impl::batch_traits<BX>;
  static_assert(tx::is_batch, "kband: x must be a kband batch");
  static_assert(std::is_same<impl::batch_value_t<BX>, T>::value,
                "kband::penta: the factor and x must have one value type");
  impl::require_accessible<Kokkos::View<T*, Mem>, Exec>("factor");
  impl::require_accessible<Kokkos::View<T*, typename impl::batch_traits<BY>::memory_space>, Exec>("y");
  impl::require_accessible<Info, Exec>("info");
  impl::check_same_layout<BX, BY>(fn, "y");
  const int nsys = tx::nsys(x), n = tx::n(x);
  impl::require(factor.n() >= 1, impl::concat(fn, ": the factor is empty (default-constructed)"));
  impl::require(n == factor.n(),
                impl::concat(fn, ": x has n=", n, " rows but the factor was built for n=", factor.n()));
  impl::check_batch(fn, "y", y, nsys, n);
  impl::check_info(fn, info, nsys);
  const auto& fd = factor.data();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  if (opt.variant == Variant::Registers || opt.variant == Variant::Auto) {
    constexpr int M = impl::kRegisterRowsShared;
    const int K = (n + M - 1) / M;
    impl::require(K < 2 || K > impl::kPentaTableChunks || (fd.tk == K && fd.tm == M),
                  impl::concat(fn, ": the factor holds no chunk tables for n=", n));
    const impl::RegisterBase<Exec, T, M> rb{nsys, n, 1, 1, false, nan};
    if (factor.periodic()) {
      impl::PentaSharedRegisters<Exec, T, Mem, BY, BX, Info, M, true> f(rb, fd, y, x, info);
      if (impl::use_registers<Exec, tx::layout>(fn, opt, exec, nsys, n, M, f.scratch_per_thread(), f)) return;
    } else {
      impl::PentaSharedRegisters<Exec, T, Mem, BY, BX, Info, M, false> f(rb, fd, y, x, info);
      if (impl::use_registers<Exec, tx::layout>(fn, opt, exec, nsys, n, M, f.scratch_per_thread(), f)) return;
    }
  }
  constexpr int W = impl::thomas_lanes<Exec, BX, 1>::value;
  using Base = impl::ThomasBase<Exec, BX, T, W>;
  // Recompute: asked for, or Auto on interleaved and grouped batches: on GPUs
  // past Registers' sizes with systems for an eighth of the device's threads
  // (H100, 2^27 points, n = 256..2048: 1.56-2.02x the copy time against
  // 1.91-2.25x for Global; at n = 4096, 32768 systems, Global's 2.07-2.13x
  // against 2.44-2.49x), on hosts where the lanes do not pack
  // (grouped SZ not a multiple of 8; one core of an AMD EPYC, 2^20
  // points, n = 64..4096: 1.0-1.7x faster than Global lane by lane;
  // contiguous batches within 7 %, so they keep Global). Hosts take the
  // Global solve in vector packs where a thread's lanes are packs of 8
  // systems side by side (PentaShared::kPacks, periodic factors too; one
  // core of a Xeon, n = 64..4096: grouped 0.66-0.79 ns a point against
  // Recompute's 2.6-2.7)
  const bool device = impl::is_device_exec<Exec>::value;
  constexpr bool host_packs = !impl::is_device_exec<Exec>::value && W > 1 && W % impl::LanePack<T>::L == 0;
  const bool packs = host_packs;
  if (opt.variant == Variant::Recompute ||
      (opt.variant == Variant::Auto && tx::layout != Layout::Contiguous && !packs &&
       (!device || static_cast<long>(nsys) * 8 >= static_cast<long>(exec.concurrency())))) {
    const impl::ThomasGeometry g = impl::recompute_geometry<Exec, T>(fn, nsys, n, W, opt);
    const Base base{nsys, n, false, 0, {}, nan};
    constexpr int RB = KBAND_RECOMPUTE_ROWS;
    // at most 128 registers (4 teams of 128 per multiprocessor on GPUs): with
    // Thomas's 96 the double kernels spill (two states, two checkpoints)
    using Bounds = Kokkos::LaunchBounds<128, 4>;
    if (factor.periodic())
      impl::launch_thomas(fn, exec, g, impl::PentaSharedRecompute<Exec, T, Mem, BY, BX, Info, W, RB, true>(base, fd, y, x, info), Bounds());
    else
      impl::launch_thomas(fn, exec, g, impl::PentaSharedRecompute<Exec, T, Mem, BY, BX, Info, W, RB, false>(base, fd, y, x, info), Bounds());
    return;
  }
  constexpr int U = impl::thomas_unroll<Exec, BX, 1>::value;
  const impl::ThomasGeometry g =
      impl::thomas_geometry<Exec, T>(fn, nsys, n, W, 1, opt, tx::layout == Layout::Contiguous);
  const Base base{nsys, n, g.scratch, g.scratch_level, {}, nan};
  using impl::PentaShared;
  constexpr int WP = impl::shared_pack_lanes<Exec, BX, W>::value;
  if constexpr (WP != W) {
    if (!g.scratch) {
      // two packs a thread (PentaShared::solve_packed)
      const impl::ThomasGeometry gp = impl::thomas_geometry<Exec, T>(fn, nsys, n, WP, 1, opt, false);
      const impl::ThomasBase<Exec, BX, T, WP> bp{nsys, n, false, 0, {}, nan};
      if (factor.periodic())
        impl::launch_thomas(fn, exec, gp, PentaShared<Exec, T, Mem, BY, BX, Info, WP, U, true, false>(bp, fd, y, x, info));
      else
        impl::launch_thomas(fn, exec, gp, PentaShared<Exec, T, Mem, BY, BX, Info, WP, U, false, false>(bp, fd, y, x, info));
      return;
    }
  }
  if (factor.periodic() && g.scratch)
    impl::launch_thomas(fn, exec, g, PentaShared<Exec, T, Mem, BY, BX, Info, W, U, true, true>(base, fd, y, x, info));
  else if (factor.periodic())
    impl::launch_thomas(fn, exec, g, PentaShared<Exec, T, Mem, BY, BX, Info, W, U, true, false>(base, fd, y, x, info));
  else if (g.scratch)
    impl::launch_thomas(fn, exec, g, PentaShared<Exec, T, Mem, BY, BX, Info, W, U, false, true>(base, fd, y, x, info));
  else
    impl::launch_thomas(fn, exec, g,
                        PentaShared<Exec, T, Mem, BY, BX, Info, W, U, false, false>(base, fd, y, x, info));
}

/// PCR-Penta: parallel cyclic reduction, one team per system (several short
/// systems per team), the system's rows in team scratch (level 0, or the
/// backend's level 1 when they do not fit; kband::Error when even that is too
/// small). Any n >= 1. Works on the 2x2-block tridiagonal form of the matrix
/// (block row I = rows 2I, 2I+1; an odd n gets one identity row), so it takes
/// ceil(log2(ceil(n/2))) = ceil(log2 n) - 1 reduction steps for n >= 2 (block
/// rows beyond the system act as identity rows). Designed for the contiguous
/// layout (PCR-Penta's format); the others work, with uncoalesced loads.
/// opt.team_size: threads per team on GPUs (0 = kband's choice).
template <class Exec, class BA, class BB, class BC, class BD, class BE, class BY, class BX, class Info>
void pcr_penta(const Exec& exec, const BA& a, const BB& b, const BC& c, const BD& d, const BE& e, const BY& y,
               const BX& x, const Info& info, const SolveOptions& opt = {}) {
  const char* fn = "kband::pcr_penta";
  impl::ProfilingRegion region(fn);
  using T = impl::batch_value_t<BX>;
  using tx = impl::batch_traits<BX>;
  impl::check_penta_args<Exec>(fn, a, b, c, d, e, y, x, info, 1);
  const int nsys = tx::nsys(x), n = tx::n(x), m = (n + 1) / 2;
  using K = impl::PCRPentaKernel<Exec, BA, BB, BC, BD, BE, BY, BX, Info>;
  const size_t bytes = K::bytes_per_system(m);
  const size_t max1 = Kokkos::TeamPolicy<Exec>::scratch_size_max(1);
  impl::require(bytes <= max1, impl::concat(fn, ": n=", n, " needs ", bytes,
                                             " bytes of team scratch but the backend offers ", max1,
                                             "; use kband::penta (or solve_pentadiagonal) for systems this long"));
  const impl::PCRGeometry g = impl::pcr_geometry<Exec>(fn, nsys, m, bytes, opt);
  impl::launch_pcr(fn, exec, g, K({a, b, c, d, e, y, x, info}, g, n, std::numeric_limits<T>::quiet_NaN()));
}

// ---------------------------------------------------------------------------
// One entry point
// ---------------------------------------------------------------------------
enum class PentadiagonalAlgorithm { Auto, Elimination, PCR };

inline const char* algorithm_name(PentadiagonalAlgorithm a) {
  return a == PentadiagonalAlgorithm::Elimination ? "elimination"
                                                  : (a == PentadiagonalAlgorithm::PCR ? "pcr" : "auto");
}

struct PentadiagonalOptions {
  PentadiagonalAlgorithm algorithm = PentadiagonalAlgorithm::Auto;
  Boundary boundary = Boundary::NonPeriodic;  // Periodic: elimination only
  SolveOptions solve = {};
};

/// The algorithm solve_pentadiagonal would use on `exec` for nsys systems of
/// n rows in `layout`, element size `elem_bytes`: elimination (a thread per
/// system) on CPUs, for periodic systems and whenever the batch gives every
/// GPU thread slot a system; PCR-Penta when the systems are too few to occupy
/// a GPU that way and a system's rows fit on-chip team scratch.
template <class Exec>
PentadiagonalAlgorithm choose_pentadiagonal(const Exec& exec, Layout layout, int nsys, int n,
                                            size_t elem_bytes = sizeof(double),
                                            Boundary bc = Boundary::NonPeriodic) {
  (void)layout;
  if (!impl::is_device_exec<Exec>::value || bc == Boundary::Periodic) return PentadiagonalAlgorithm::Elimination;
  if (impl::pcr_penta_bytes(n, elem_bytes) > static_cast<size_t>(Kokkos::TeamPolicy<Exec>::scratch_size_max(0)))
    return PentadiagonalAlgorithm::Elimination;
  const long threads = static_cast<long>(exec.concurrency());
  return static_cast<long>(nsys) * 4 < threads ? PentadiagonalAlgorithm::PCR : PentadiagonalAlgorithm::Elimination;
}

/// Solves every system of the batch with the algorithm choose_pentadiagonal
/// picks (or opt.algorithm when not Auto); returns the algorithm used. PCR
/// with opt.boundary == Periodic throws kband::Error. The workspace serves
/// the elimination's Global variant (penta_workspace_size).
template <class Exec, class BA, class BB, class BC, class BD, class BE, class BY, class BX, class Info>
PentadiagonalAlgorithm solve_pentadiagonal(
    const Exec& exec, const BA& a, const BB& b, const BC& c, const BD& d, const BE& e, const BY& y, const BX& x,
    const Info& info, const PentadiagonalOptions& opt = {},
    const Kokkos::View<impl::batch_value_t<BX>*, typename impl::batch_traits<BX>::memory_space>& workspace = {}) {
  impl::ProfilingRegion region("kband::solve_pentadiagonal");
  using tx = impl::batch_traits<BX>;
  static_assert(tx::is_batch, "kband: x must be a kband batch");
  const bool periodic = opt.boundary == Boundary::Periodic;
  PentadiagonalAlgorithm alg = opt.algorithm;
  impl::require(!(periodic && alg == PentadiagonalAlgorithm::PCR),
                "kband::solve_pentadiagonal: PCR-Penta does not solve periodic systems; use Elimination or Auto");
  if (alg == PentadiagonalAlgorithm::Auto)
    alg = choose_pentadiagonal(exec, tx::layout, tx::nsys(x), tx::n(x), sizeof(impl::batch_value_t<BX>),
                               opt.boundary);
  if (alg == PentadiagonalAlgorithm::PCR)
    pcr_penta(exec, a, b, c, d, e, y, x, info, opt.solve);
  else if (periodic)
    periodic_penta(exec, a, b, c, d, e, y, x, info, opt.solve, workspace);
  else
    penta(exec, a, b, c, d, e, y, x, info, opt.solve, workspace);
  return alg;
}

}  // namespace kband
