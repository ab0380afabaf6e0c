// Thomas-PCR hybrid for long tridiagonal systems (Laszlo, Giles and
// Appleyard, ACM TOMS 2016): systems too long for PCR's team scratch, or too
// few to fill a GPU with one thread (Thomas) or one team (PCR) per system.
//
//   kband::hybrid(exec, a, b, c, d, x, info[, HybridOptions])
//
// a, b, c, d, x: batches of one layout (ContiguousBatch, InterleavedBatch or
// GroupedBatch), extents (nsys, n), n >= 1; row j of system s reads
//   a(s,j) x(s,j-1) + b(s,j) x(s,j) + c(s,j) x(s,j+1) = d(s,j),
// a(s,0) and c(s,n-1) are ignored. x may be the same batch as d; it must not
// alias a, b or c. Per-system coefficients only (for one matrix shared by all
// systems use TridiagonalFactor / PCRFactor).
//
// Algorithm: each system is cut into segments of at most
// HybridOptions::segment_rows rows (one team each, rows in team scratch) and
// each segment into chunks of about chunk_rows rows (one thread each). A
// modified Thomas pass per chunk expresses every row in terms of the chunk's
// first and last unknowns; PCR in team scratch solves the reduced system of
// two unknowns per chunk; substitution gives the rest. A system of one
// segment is solved in one kernel (reads a, b, c, d once, writes x once).
// Longer systems take three steps: a kernel reducing every segment to two
// rows, the hybrid applied to that reduced system of 2 rows per segment (in a
// workspace allocated per call), and a kernel that reloads each segment and
// substitutes: a, b, c, d are read twice.
//
// Stability: no pivoting. Like Thomas and PCR it is stable for diagonally
// dominant and symmetric positive definite systems; use kband::gtsv for
// general matrices.
//
// info(s) = 0 on success; k > 0 (a row in 1..n) when a pivot of any phase
// (chunk sweeps, the reduced PCR, the reduced solve) was zero or not finite;
// x(s,:) is then NaN. No call fences.
#pragma once

#include "impl/kband_Hybrid_impl.hpp"
#include "kband_Thomas.hpp"

namespace kband {

struct HybridOptions {
  int chunk_rows = 0;    // rows per thread (>= 2); 0 = kband's choice (16-32 on GPUs, 64 on CPUs)
  int segment_rows = 0;  // rows per team (>= 4); 0 = kband's choice (on GPUs the most that fit on chip)
  int team_size = 0;     // threads per team on GPUs; 0 = kband's choice
};

namespace impl {

/// The launch geometry for a backend with (device) or without GPU-style
/// teams and the given level-0 / level-1 team scratch limits.
template <class T, Layout L>
HybridGeometry hybrid_shape(const char* fn, int nsys, int n, const HybridOptions& opt, bool device, size_t max0,
                            size_t max1) {
  require(opt.chunk_rows == 0 || opt.chunk_rows >= 2,
          concat(fn, ": HybridOptions::chunk_rows=", opt.chunk_rows, ", must be 0 (automatic) or >= 2"));
  require(opt.segment_rows == 0 || opt.segment_rows >= 4,
          concat(fn, ": HybridOptions::segment_rows=", opt.segment_rows, ", must be 0 (automatic) or >= 4"));
  require(opt.team_size >= 0, concat(fn, ": HybridOptions::team_size=", opt.team_size, " is negative"));
  HybridGeometry g;
  g.nsys = nsys;
  g.n = n;
  // lanes: consecutive systems of one team (a power of two, dividing a
  // warp), so that the interleaved and grouped layouts load whole 32-byte
  // sectors; contiguous systems one a team
  const int wmax = L == Layout::Contiguous ? 1 : (device ? static_cast<int>(32 / sizeof(T)) : 1);
  g.W = 1;
  while (2 * g.W <= wmax && 2 * g.W <= nsys) g.W *= 2;
  // n split into segments of at most S rows, chunks of about M rows
  const auto shape = [&](int S, int M) {
    g.M = M;
    g.G = n <= S ? 1 : static_cast<int>((static_cast<long>(n) + S - 1) / S);
    g.Smax = static_cast<int>((static_cast<long>(n) + g.G - 1) / g.G);
    g.P = (g.Smax + M - 1) / M;
    if (g.P > g.Smax / 2) g.P = g.Smax / 2;
    if (g.P < 1) g.P = 1;
    g.R = 2 * g.P;
    g.Sp = g.Smax + g.Smax / 16 + 1;
    // PCR carries three right-hand sides in the Reduce kernel, one otherwise
    const int nrhs = g.G == 1 ? 1 : 3;
    // a multiple of 16 bytes: Kokkos places level-1 team scratch of consecutive
    // teams back to back, so an odd size misaligns every other team's T rows
    const size_t bytes = HybridGeometry::scratch_elems(g.W, g.Sp, g.R, nrhs) * sizeof(T) + g.W * sizeof(int) + 16;
    g.scratch_bytes = (bytes + 15) / 16 * 16;
    return g.scratch_bytes <= max0;
  };
  /// The longest segment (>= 4 rows) of chunks of M rows that fits on chip.
  const auto largest_segment = [&](int M) {
    int lo = 4, hi = n > 4 ? n : 4;
    if (shape(hi, M)) return hi;
    while (hi - lo > 1) {
      const int mid = lo + (hi - lo) / 2;
      (shape(mid, M) ? lo : hi) = mid;
    }
    return lo;
  };
  if (opt.segment_rows > 0) {
    shape(opt.segment_rows, opt.chunk_rows > 0 ? opt.chunk_rows : (device ? 16 : 64));
  } else if (!device) {
    // host: a thread walks long chunks; segments in the (large) level-1 scratch
    shape(8192, opt.chunk_rows > 0 ? opt.chunk_rows : 64);
  } else if (opt.chunk_rows > 0) {
    shape(largest_segment(opt.chunk_rows), opt.chunk_rows);
  } else {
    // GPU: chunks of 16 rows; when a whole system fits on chip with chunks of
    // up to 32 rows (fewer reduced rows), one segment (one kernel) instead
    int M = 16;
    while (M < 32 && !shape(n, M)) M += 4;
    if (!shape(n, M)) shape(largest_segment(16), 16);
  }
  g.scratch_level = g.scratch_bytes <= max0 ? 0 : 1;
  require(g.scratch_bytes <= (g.scratch_level == 0 ? max0 : max1),
          concat(fn, ": segments of ", g.Smax, " rows need ", g.scratch_bytes,
                 " bytes of team scratch but the backend offers ", max1, "; use a smaller HybridOptions::segment_rows"));
  // a multiple of W: every thread serves one lane
  if (device) {
    int ts = opt.team_size > 0 ? opt.team_size : g.W * g.P;
    if (opt.team_size == 0) {
      ts = (ts + 31) / 32 * 32;
      if (ts > 256) ts = 256;
    }
    g.team_size = (ts + g.W - 1) / g.W * g.W;
  } else {
    g.team_size = g.W;
  }
  g.league = static_cast<int>((static_cast<long>(nsys) + g.W - 1) / g.W) * g.G;
  return g;
}

template <class Exec, class T, Layout L>
HybridGeometry hybrid_geometry(const char* fn, int nsys, int n, const HybridOptions& opt) {
  return hybrid_shape<T, L>(fn, nsys, n, opt, is_device_exec<Exec>::value,
                            Kokkos::TeamPolicy<Exec>::scratch_size_max(0), Kokkos::TeamPolicy<Exec>::scratch_size_max(1));
}

template <HybridMode Mode, class Exec, class BA, class BB, class BC, class BD, class BX, class Info, class Red>
void launch_hybrid(const char* label, const Exec& exec, const HybridGeometry& g, const BA& a, const BB& b,
                   const BC& c, const BD& d, const BX& x, const Info& info, const Red& red) {
  using K = HybridKernel<Exec, BA, BB, BC, BD, BX, Info, Mode>;
  impl::Team<Exec> policy(exec, g.league, g.team_size);
  policy.set_scratch_size(g.scratch_level, Kokkos::PerTeam(g.scratch_bytes));
  Kokkos::parallel_for(label, policy,
                       K{a, b, c, d, x, info, red, g, std::numeric_limits<batch_value_t<BX>>::quiet_NaN()});
}

/// The hybrid on checked arguments; recursive on the reduced system.
template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info>
void hybrid_solve(const char* fn, const Exec& exec, const BA& a, const BB& b, const BC& c, const BD& d,
                  const BX& x, const Info& info, const HybridOptions& opt) {
  using T = batch_value_t<BX>;
  using tx = batch_traits<BX>;
  using Mem = typename tx::memory_space;
  const int nsys = tx::nsys(x), n = tx::n(x);
  if (nsys == 0) return;
  const HybridGeometry g = hybrid_geometry<Exec, T, tx::layout>(fn, nsys, n, opt);
  HybridReduced<T, Mem> red;
  if (g.G == 1) {
    launch_hybrid<HybridMode::Full>(fn, exec, g, a, b, c, d, x, info, red);
    return;
  }
  const auto noinit = [&](const char* l) { return Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string(l)); };
  using V = typename HybridReduced<T, Mem>::V;
  red.a = V(noinit("kband::hybrid::ra"), nsys, 2 * g.G);
  red.b = V(noinit("kband::hybrid::rb"), nsys, 2 * g.G);
  red.c = V(noinit("kband::hybrid::rc"), nsys, 2 * g.G);
  red.d = V(noinit("kband::hybrid::rd"), nsys, 2 * g.G);
  red.x = V(noinit("kband::hybrid::rx"), nsys, 2 * g.G);
  red.bad = Kokkos::View<int*, Mem>(Kokkos::view_alloc(exec, std::string("kband::hybrid::bad")), nsys);
  red.info = Kokkos::View<int*, Mem>(noinit("kband::hybrid::rinfo"), nsys);
  launch_hybrid<HybridMode::Reduce>(fn, exec, g, a, b, c, d, x, info, red);
  hybrid_solve(fn, exec, red.a, red.b, red.c, red.d, red.x, red.info, opt);
  launch_hybrid<HybridMode::Substitute>(fn, exec, g, a, b, c, d, x, info, red);
}

}  // namespace impl

/// Solves every system of the batch with the Thomas-PCR hybrid (see the top
/// of this file for layouts, extents, stability and info codes).
template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info>
void hybrid(const Exec& exec, const BA& a, const BB& b, const BC& c, const BD& d, const BX& x, const Info& info,
            const HybridOptions& opt = {}) {
  const char* fn = "kband::hybrid";
  impl::ProfilingRegion region(fn);
  impl::check_tridiagonal_args<Exec>(fn, a, b, c, d, x, info, 1);
  using tx = impl::batch_traits<BX>;
  // geometry errors (bad options, scratch) before any kernel runs
  (void)impl::hybrid_geometry<Exec, impl::batch_value_t<BX>, tx::layout>(fn, tx::nsys(x), tx::n(x), opt);
  impl::hybrid_solve(fn, exec, a, b, c, d, x, info, opt);
}

}  // namespace kband
