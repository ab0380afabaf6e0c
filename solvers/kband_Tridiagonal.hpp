// kband::solve_tridiagonal -- one entry point that picks the algorithm.
//
// On GPUs: contiguous batches go to PCR (its Registers variant: a team per
// system, chunks of 8 rows in registers, inputs read once) up to n = 8192,
// and beyond when the systems are few (PCR then splits them over teams),
// and so do interleaved batches up to n = 256 (32 systems per team, loads
// coalesced across them). Otherwise Thomas (one thread per system, O(n)
// work) when the batch has a system for about every 64 device threads; with
// fewer systems PCR up to n = 8192 and beyond that the Thomas-PCR hybrid
// (several teams per system). Host backends use Thomas. The choice can be
// forced through TridiagonalOptions::algorithm and queried with
// choose_tridiagonal.
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
  (void)elem_bytes;
  // H200, double, time over the copy time. Contiguous: PCR 3.2-3.7 for n =
  // 32..1024 at 2^27 rows, Thomas 3.4-5.4; 16384 x 8192: PCR 7.1 (512-row
  // segments), Thomas 9.9; 4096 x 1024: PCR 5.1-5.4, Thomas 6.8.
  const bool pcr_ok = n <= 8192;
  const long threads = static_cast<long>(exec.concurrency());
  const bool few = static_cast<long>(nsys) * 64 < threads;
  // Longer contiguous systems, when few: PCR in segments (16 x 2^20: 7.5x,
  // the hybrid 37x, gtsv2StridedBatch 17.6x).
  if (layout == Layout::Contiguous && (pcr_ok || few)) return TridiagonalAlgorithm::PCR;
  // Interleaved, 2^27 rows: PCR 2.5-3.4x the copy time for n = 32..256,
  // Thomas 2.9-4.1x; from n = 512 on a team holds fewer than 32 systems and
  // PCR's loads no longer coalesce (6.0x against 4.3x).
  if (layout == Layout::Interleaved && n <= 256) return TridiagonalAlgorithm::PCR;
  // Enough systems: a thread per system (16384 x 8192 interleaved: Thomas
  // 5.4x, PCR 17.8x). Fewer: PCR (4096 x 1024 interleaved: 11.7x against
  // 15.9x), and beyond n = 8192 the hybrid (16 x 2^20: Thomas would have 16
  // threads).
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
