// kband::solve_tridiagonal -- one entry point that picks the algorithm.
//
// On GPUs: Thomas (a team of threads per contiguous system, a thread per
// interleaved or grouped one, O(n) work) when the batch has a system for
// about every 64 device threads, except contiguous double systems of 1025 to
// 8192 rows, which go to PCR (its Registers variant: a team per system,
// chunks of rows in registers, inputs read once). With fewer systems PCR up
// to n = 8192 and beyond that, contiguous systems PCR in segments, the
// others the Thomas-PCR hybrid (several teams per system). Host backends use
// Thomas. The choice can be forced through TridiagonalOptions::algorithm and
// queried with choose_tridiagonal.
#pragma once

#include "kband_Hybrid.hpp"
#include "kband_PCR.hpp"
#include "kband_Thomas.hpp"

namespace kband {

enum class TridiagonalAlgorithm { Auto, Thomas, PCR, Hybrid };

inline const char* algorithm_name(TridiagonalAlgorithm a) {
  switch (a) {
    case TridiagonalAlgorithm::Thomas: return "thomas";
    case TridiagonalAlgorithm::PCR: return "pcr";
    case TridiagonalAlgorithm::Hybrid: return "hybrid";
    default: return "auto";
  }
}

struct TridiagonalOptions {
  TridiagonalAlgorithm algorithm = TridiagonalAlgorithm::Auto;
  SolveOptions solve = {};    // Thomas and PCR
  HybridOptions hybrid = {};  // the hybrid
};

/// The algorithm solve_tridiagonal would use on `exec` for nsys systems of n
/// rows in layout `layout` of element size `elem_bytes`.
template <class Exec>
TridiagonalAlgorithm choose_tridiagonal(const Exec& exec, Layout layout, int nsys, int n,
                                        size_t elem_bytes = sizeof(double)) {
  if (!impl::is_device_exec<Exec>::value) return TridiagonalAlgorithm::Thomas;
  // H100, 2^27 rows, time over the copy time, Auto variants (kband-bench,
  // 2026-11-27). Contiguous double: Thomas 2.48 / 2.56 / 2.71 at n = 64 /
  // 512 / 1024, PCR 2.50 / 2.90 / 3.19; n = 2048 / 4096 Thomas 3.54 / 5.15,
  // PCR 3.26 / 4.70. Contiguous float: Thomas 2.27-2.46 for n = 64..2048,
  // 3.24 / 3.80 at 4096 / 8192, PCR 2.48-3.42 and 5.12 / 6.16. Interleaved,
  // n = 64 / 128 / 256: double Thomas 2.41 / 2.57 / 2.75, PCR 2.49 / 2.55 /
  // 2.79; float Thomas 2.75 / 2.91 / 2.97, PCR 2.72 / 3.83 / 4.42. H200,
  // the same command: contiguous double n = 256 / 512 / 1024 Thomas 3.27 /
  // 3.44 / 3.62, PCR 3.04 / 3.18 / 3.57 (PCR ahead by 1-8 %, Thomas by up to
  // 15 % on the H100: Thomas kept), 2048 / 4096 / 8192 Thomas 4.97 / 7.28 /
  // 9.79 (Scratch, before its two segments), PCR 4.61 / 6.46 / 6.00; float Thomas 2.49-3.33 for n = 128..2048,
  // PCR 3.28-4.66; interleaved double n = 256 Thomas 3.42, PCR 3.67.
  const bool pcr_ok = n <= 8192;
  const long threads = static_cast<long>(exec.concurrency());
  const bool few = static_cast<long>(nsys) * 64 < threads;
  // Longer contiguous double systems, up to 8192 rows (H100, Thomas in two
  // register segments past 4096, n = 6000 / 8192: PCR 4.92 / 5.17, Thomas
  // 5.87 / 5.19), and longer contiguous systems of either type when few:
  // PCR (in segments past 8192 rows; 16 x 2^20: 7.5x, the hybrid 37x,
  // gtsv2StridedBatch 17.6x).
  if (layout == Layout::Contiguous && (few || (pcr_ok && elem_bytes >= 8 && n > 1024)))
    return TridiagonalAlgorithm::PCR;
  // Enough systems: a team or a thread per system (16384 x 8192
  // interleaved: Thomas 5.4x, PCR 17.8x). Fewer: PCR (4096 x 1024
  // interleaved: 11.7x against 15.9x), and beyond n = 8192 the hybrid
  // (16 x 2^20: Thomas would have 16 threads).
  if (!few) return TridiagonalAlgorithm::Thomas;
  return pcr_ok ? TridiagonalAlgorithm::PCR : TridiagonalAlgorithm::Hybrid;
}

/// Solves every system of the batch; returns the algorithm it used. The
/// workspace is used by Thomas' Global variant (see thomas_workspace_size)
/// and by PCR's segments (see pcr_workspace_size).
/// Layouts, extents and info codes as for kband::thomas; no pivoting (every
/// choice is stable for diagonally dominant and SPD systems).
template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info>
TridiagonalAlgorithm solve_tridiagonal(
    const Exec& exec, const BA& a, const BB& b, const BC& c, const BD& d, const BX& x, const Info& info,
    const TridiagonalOptions& opt = {},
    const Kokkos::View<impl::batch_value_t<BX>*, typename impl::batch_traits<BX>::memory_space>& workspace = {}) {
  impl::ProfilingRegion region("kband::solve_tridiagonal");
  using tx = impl::batch_traits<BX>;
  static_assert(tx::is_batch, "kband: x must be a kband batch");
  TridiagonalAlgorithm alg = opt.algorithm;
  if (alg == TridiagonalAlgorithm::Auto)
    alg = choose_tridiagonal(exec, tx::layout, tx::nsys(x), tx::n(x), sizeof(impl::batch_value_t<BX>));
  if (alg == TridiagonalAlgorithm::PCR)
    pcr(exec, a, b, c, d, x, info, opt.solve, workspace);
  else if (alg == TridiagonalAlgorithm::Hybrid)
    hybrid(exec, a, b, c, d, x, info, opt.hybrid);
  else
    thomas(exec, a, b, c, d, x, info, opt.solve, workspace);
  return alg;
}

}  // namespace kband
