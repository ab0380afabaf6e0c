// Batched tridiagonal solve by LU with partial pivoting (LAPACK gtsv), for
// general systems where Thomas (no pivoting) can fail or lose accuracy.
//
//   kband::gtsv(exec, a, b, c, d, x, info[, opts[, workspace]])
//
// Same arguments and conventions as kband::thomas; info(s) = k > 0 when U(k,k)
// is exactly zero or not finite (the matrix is singular to working precision),
// x(s,:) is then NaN. The Global and Recompute variants need
// gtsv_workspace_size(x) elements of workspace (allocated per call when none
// is passed).
//
// Variants (SolveOptions::variant):
//  * Global: the finished rows of U and y go to the workspace and x, and the
//    back substitution reads them: 13 transfers a row.
//  * Scratch: those rows in team scratch (5 transfers, a thread's n rows of
//    4 values on chip, which limits residency).
//  * Recompute: only the carried row at every 8th step is kept (workspace);
//    the back substitution reloads a block's rows and redoes its
//    elimination in registers: 9 transfers and the same pivots.
//    A contiguous batch's blocks are loaded by a team together, through
//    team scratch, so that the loads coalesce on GPUs. On host backends a
//    thread's packs of 8 adjacent interleaved or grouped systems run as
//    vectors.
//  * Registers: a team of threads per system, M = 8 rows each in registers
//    (16 in float: the same registers; 5 transfers); the chunks join by
//    three scans in team scratch (impl/kband_GTSVRegisters_impl.hpp: the
//    interchanges change the carried row's scale only). Pivots and rows of
//    U are dgtsv's up to rounding where chunks join. Teams of ceil(n/M)
//    threads at least: on host backends (teams of one thread) n <= M
//    only. Its rescaled products stay in range for rows whose largest
//    coefficient lies within about 2^-250 .. 2^250 (double) or 2^-60 ..
//    2^60 (float); the other variants have no such limit. Interleaved and
//    grouped batches past 32 chunks (n = 256 in double, 512 in float) take
//    two segments of M = 16 rows a thread (teams of
//    ceil(n/32) threads a system), the first segment's rows kept in
//    registers while the second is eliminated; interleaved batches past
//    Auto's limit for two segments take four (ceil(n/64) threads a
//    system), the middle segments' rows of U in level-1 team scratch.
//  * Window: a thread per system; the rows of U, normalised to
//    x_i = z_i - p_i x_{i+1} - q_i x_{i+2}, go through penta's window
//    (impl/kband_PentaWindow_impl.hpp): each block of x is written once the
//    rows after it fix it to the unit roundoff (a bound on the system's own
//    U), the rest waits in team scratch; systems whose U does not settle
//    (interchanges, growth) go on in the workspace. 5 transfers a row where
//    it settles. Asked for only: not yet timed on a GPU.
//  Auto: on GPUs Registers for contiguous batches as far as its teams fit
//  (teams of 32-64 threads or one system: ceil(n/8) threads in double up
//  to n = 2048, ceil(n/16) to 4096 and in float, two segments of 16 rows a
//  thread beyond, to n = 8192 at least) and for interleaved and grouped
//  ones up to n = 256 in double and 512 in float (one segment), then in
//  double in two segments up to n = 1024 (impl::gtsv_segments_auto_rows);
//  otherwise Recompute, except on GPUs Scratch for contiguous batches
//  above n = 1024 whose Registers teams do not fit and for other batches
//  up to n = 32, and on host backends Global for contiguous batches.
#pragma once

#include "impl/kband_GTSVRegisters_impl.hpp"
#include "impl/kband_PentaWindow_impl.hpp"
#include "kband_Thomas.hpp"

namespace kband {

/// Elimination steps per block of the Recompute variant (one checkpoint of
/// 3 values per block; pass 2 holds a block's rows and its rows of U).
#ifndef KBAND_GTSV_RECOMPUTE_ROWS
#define KBAND_GTSV_RECOMPUTE_ROWS 8
#endif

/// Registers variant: teams of at most 256 threads launch with
/// Kokkos::LaunchBounds<256, this> (0: none). With 2, sm_90 keeps the double
/// kernel to 128 registers without spills (up to 138 without bounds, which
/// leaves room for one team of 256 threads a multiprocessor instead of two).
#ifndef KBAND_GTSV_REGISTERS_MIN_BLOCKS
#define KBAND_GTSV_REGISTERS_MIN_BLOCKS 2
#endif

template <class BX>
size_t gtsv_workspace_size(const BX& x) {
  using tx = impl::batch_traits<BX>;
  return impl::WorkspaceMap<tx::layout, tx::sz>::extent(tx::nsys(x), tx::n(x)) * 3;
}

template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info>
void gtsv(const Exec& exec, const BA& a, const BB& b, const BC& c, const BD& d, const BX& x, const Info& info,
          const SolveOptions& opt = {},
          Kokkos::View<impl::batch_value_t<BX>*, typename impl::batch_traits<BX>::memory_space> ws = {}) {
  const char* fn = "kband::gtsv";
  impl::ProfilingRegion region(fn);
  using T = impl::batch_value_t<BX>;
  using tx = impl::batch_traits<BX>;
  impl::check_tridiagonal_args<Exec>(fn, a, b, c, d, x, info, 1);
  const int nsys = tx::nsys(x), n = tx::n(x);
  if (opt.variant == Variant::Window) {
    // the window of kband_PentaWindow_impl.hpp on gtsv's elimination (asked
    // for only: not yet timed on a GPU)
    using Shape = impl::PentaWindowShape<T>;
    using Rows = impl::GTSVWindowRows<BA, BB, BC, BD, Shape::B>;
    using F = impl::TwoTermWindow<Exec, Rows, BX, Info, Shape::R, Shape::B>;
    const impl::ThomasGeometry g = impl::window_geometry<Exec>(fn, nsys, n, opt, F::scratch_per_thread());
    impl::grow_workspace(exec, ws, 2 * impl::WorkspaceMap<tx::layout, tx::sz>::extent(nsys, n), "kband::gtsv::ws");
    impl::launch_thomas(fn, exec, g, F(nsys, n, Rows{a, b, c, d}, x, info, ws.data()));
    return;
  }
  constexpr int W = impl::thomas_lanes<Exec, BX>::value;
  constexpr int U = impl::thomas_unroll<Exec, BX>::value;
  // Recompute: asked for, or Auto, except for contiguous batches on host
  // backends, which keep Global (one core of this project's VM, n = 64 /
  // 1024, time over the copy time: contiguous Recompute 22.4 / 23.8 against
  // Global 14.8 / 17.6; grouped 17.0 / 15.9 against 21.4 / 20.9,
  // interleaved 45.6 / 53.4 against 58.7 / 90.3). Contiguous batches get the
  // staged kernel: a thread's rows there are n apart from its neighbours',
  // so a team loads its systems' blocks together through scratch.
  constexpr bool device = impl::is_device_exec<Exec>::value;
  // Registers: asked for, or Auto on GPUs for contiguous batches and for
  // interleaved and grouped ones up to n = 256 (one segment of M = 8 rows a
  // thread; float: 512, M = 16) and beyond, to the segments' Auto limits
  // (two or four segments of M = 16), when the team fits
  constexpr int M1 = impl::gtsv_register_rows<T>();
  const bool registers =
      opt.variant == Variant::Registers ||
      (opt.variant == Variant::Auto && (tx::layout == Layout::Contiguous || n <= impl::gtsv_segments_auto_rows<T>()));
  if (registers && tx::layout != Layout::Contiguous &&
      n > impl::GTSVPerSystemRegisters<Exec, BA, BB, BC, BD, BX, Info, M1>::kAutoChunks * M1) {
    constexpr int M2 = impl::kRegisterRowsTwoSegments;
    using F2 = impl::GTSVPerSystemRegisters<Exec, BA, BB, BC, BD, BX, Info, M2, 2>;
    using F4 = impl::GTSVPerSystemRegisters<Exec, BA, BB, BC, BD, BX, Info, M2, 4>;
    const T nan = std::numeric_limits<T>::quiet_NaN();
    // up to n = 512 (16 systems a team), with systems for at least half the
    // device's threads (the league then still fills it), each team solves 4
    // blocks of systems in turn (H100, 2^27 points, time over thomas' Auto
    // time, n = 512: interleaved 1.18-1.19 against 1.27 with one block,
    // grouped 0.94-0.96 against 0.97; n = 1024: 1.43 / 1.37 against 1.28 /
    // 1.31)
    SolveOptions o2 = opt;
    if (o2.blocks_per_team <= 0 && n <= 512 && 2L * nsys >= static_cast<long>(exec.concurrency()))
      o2.blocks_per_team = 4;
    // four segments for interleaved batches past the two's Auto limit, up to
    // their own (F2, F4: kAutoChunksInterleaved)
    if (tx::layout == Layout::Interleaved && n > F2::kAutoChunksInterleaved * M2 &&
        n <= F4::kAutoChunksInterleaved * M2) {
      F4 f(typename F4::Base{nsys, n, 1, 1, false, nan}, a, b, c, d, x, info);
      if (impl::use_registers<Exec, tx::layout, 1>(fn, o2, exec, nsys, n, M2, F4::scratch_per_thread(), f, 4)) return;
    } else {
      F2 f(typename F2::Base{nsys, n, 1, 1, false, nan}, a, b, c, d, x, info);
      if (impl::use_registers<Exec, tx::layout, 1>(fn, o2, exec, nsys, n, M2, F2::scratch_per_thread(), f, 2)) return;
    }
  } else if (registers) {
    if constexpr (tx::layout == Layout::Contiguous && device) {
      // contiguous systems on GPUs: double past impl::kContiguousRows8 takes
      // 16 rows a thread (teams of ceil(n/8) threads stop fitting past n =
      // 2272 on the H100, and are slow before), launched without bounds
      // (sm_90: 208 registers, no spills; H100, n = 4096, ns a point: 0.0310
      // against Scratch's 0.0615, thomas 0.0288); both types past n = 4096
      // take two segments of 16 rows a thread
      constexpr int M16 = impl::kRegisterRowsTwoSegments;
      const T nan = std::numeric_limits<T>::quiet_NaN();
      SolveOptions ro = opt;
      if (n > impl::kGTSVContiguousOneSegmentRows) {
        using F2 = impl::GTSVPerSystemRegisters<Exec, BA, BB, BC, BD, BX, Info, M16, 2>;
        if (ro.team_size <= 0)
          ro.team_size = impl::contiguous_team(F2::kSystemsPerTeam * ((n + 2 * M16 - 1) / (2 * M16)), 32, 64);
        F2 f(typename F2::Base{nsys, n, 1, 1, false, nan}, a, b, c, d, x, info);
        if (impl::use_registers<Exec, tx::layout, 1>(fn, ro, exec, nsys, n, M16, F2::scratch_per_thread(), f, 2))
          return;
      } else if (sizeof(T) >= 8 && n > impl::kContiguousRows8) {
        using F16 = impl::GTSVPerSystemRegisters<Exec, BA, BB, BC, BD, BX, Info, M16>;
        if (ro.team_size <= 0)
          ro.team_size = impl::contiguous_team(F16::kSystemsPerTeam * ((n + M16 - 1) / M16), 32, 64);
        F16 f(typename F16::Base{nsys, n, 1, 1, false, nan}, a, b, c, d, x, info);
        if (impl::use_registers<Exec, tx::layout, 0>(fn, ro, exec, nsys, n, M16, F16::scratch_per_thread(), f))
          return;
      }
    }
    constexpr int M = M1;
    using F = impl::GTSVPerSystemRegisters<Exec, BA, BB, BC, BD, BX, Info, M>;
    F f(typename F::Base{nsys, n, 1, 1, false, std::numeric_limits<T>::quiet_NaN()}, a, b, c, d, x, info);
    // contiguous batches: teams of the kernel's 8 systems within 32-64
    // threads, then of one system (H100, double, n = 256 / 512 / 1024, ns a
    // point: 0.0167 / 0.0179 / 0.0203 with teams of 32-64 threads, 0.0179 /
    // 0.0191 / 0.0204 with 64-128, 0.0204 / 0.0218 / 0.0230 with 256)
    SolveOptions ro = opt;
    if (tx::layout == Layout::Contiguous && opt.team_size <= 0)
      ro.team_size = impl::contiguous_team(F::kSystemsPerTeam * ((n + M - 1) / M), 32, 64);
    if (impl::use_registers<Exec, tx::layout, KBAND_GTSV_REGISTERS_MIN_BLOCKS>(fn, ro, exec, nsys, n, M,
                                                                               F::scratch_per_thread(), f))
      return;
  }
  constexpr int RR = KBAND_GTSV_RECOMPUTE_ROWS;
  if constexpr (tx::layout == Layout::Contiguous) {
    // Auto on GPUs up to n = 1024; beyond, Scratch (H200, time over thomas'
    // Auto time: staged Recompute 2.11-2.68 for n = 32..1024, Scratch
    // 2.22-2.69; n = 4096: 1.33 against 1.21)
    if (opt.variant == Variant::Recompute || (device && opt.variant == Variant::Auto && n <= 1024)) {
      using R = impl::GTSVRecomputeStaged<Exec, BA, BB, BC, BD, BX, Info, RR>;
      // GPUs: a multiple of R threads, 64 by default; host backends: one
      int ts = device ? (opt.team_size > 0 ? opt.team_size : 64) : 1;
      if (device) ts = (ts + RR - 1) / RR * RR;
      if (nsys == 0) return;
      impl::grow_workspace(exec, ws, R::workspace(nsys, n), "kband::gtsv::ws");
      const typename R::Base base{nsys, n, false, 0, ws, std::numeric_limits<T>::quiet_NaN()};
      impl::Team<Exec> policy(exec, (nsys + ts - 1) / ts, ts);
      policy.set_scratch_size(0, Kokkos::PerTeam(R::scratch_bytes(ts)));
      Kokkos::parallel_for(fn, policy, R(base, a, b, c, d, x, info));
      return;
    }
  }
  // Interleaved and grouped batches of short systems (n <= 32) on GPUs: Auto
  // is Scratch, whose n rows a thread keeps on chip (H100, time over
  // thomas' Auto time, n = 16 / 32: interleaved Scratch 1.14 / 1.28 against
  // Recompute 1.38 / 1.66, grouped 1.24 / 1.35 against 1.39 / 1.63; at n =
  // 64 Recompute wins, 1.29 / 1.43 against 1.67 / 1.86).
  const bool short_scratch = device && n <= 32;
  if (opt.variant == Variant::Recompute ||
      (opt.variant == Variant::Auto && tx::layout != Layout::Contiguous && !short_scratch)) {
    using R = impl::GTSVRecompute<Exec, BA, BB, BC, BD, BX, Info, W, RR>;
    SolveOptions og = opt;
    og.variant = Variant::Global;
    og.team_size = opt.team_size > 0 ? opt.team_size : 128;
    const impl::ThomasGeometry g = impl::thomas_geometry<Exec, T>(fn, nsys, n, W, 0, og, false);
    impl::grow_workspace(exec, ws, R::workspace(nsys, n), "kband::gtsv::ws");
    const typename R::Base base{nsys, n, false, 0, ws, std::numeric_limits<T>::quiet_NaN()};
    impl::launch_thomas(fn, exec, g, R(base, a, b, c, d, x, info));
    return;
  }
  using K = impl::GTSVPerSystem<Exec, BA, BB, BC, BD, BX, Info, W, U>;
  const impl::ThomasGeometry g = impl::thomas_geometry<Exec, T>(fn, nsys, n, W, K::nbuf_scratch, opt,
                                                                tx::layout == Layout::Contiguous);
  if (!g.scratch) impl::grow_workspace(exec, ws, gtsv_workspace_size(x), "kband::gtsv::ws");
  typename K::Base base{nsys, n, g.scratch, g.scratch_level, ws, std::numeric_limits<T>::quiet_NaN()};
  impl::launch_thomas(fn, exec, g, K(base, a, b, c, d, x, info));
}

}  // namespace kband
