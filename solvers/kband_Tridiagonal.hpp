// kband::solve_tridiagonal -- one entry point that picks the algorithm.
//
// Thomas (one thread per system, O(n) work) when the batch alone fills the
// machine or when running on a CPU; when the systems are too few to occupy a
// GPU with a thread each: PCR (one team per system, rows on chip) while a
// system fits PCR's team scratch, else, for very few systems, the Thomas-PCR
// hybrid (several threads and, for very long systems, several teams per
// system), else Thomas. The choice can be forced through
// TridiagonalOptions::algorithm and queried with choose_tridiagonal.
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
  // A thread per system needs several threads per core to hide memory latency;
  // with enough systems Thomas wins on every layout (H200, contiguous, 2^20
  // systems of 128 rows: Thomas 8.3x, PCR 12.5x the copy time).
  (void)layout;
  const long threads = static_cast<long>(exec.concurrency());
  if (static_cast<long>(nsys) * 4 >= threads) return TridiagonalAlgorithm::Thomas;
  // Too few systems: PCR while its rows fit on chip, the hybrid beyond
  // (several threads per system, several teams for very long systems) once
  // the systems are very few. In between Thomas still wins (H200, double:
  // 16384 x 8192 contiguous, Thomas 9.9x the copy time, hybrid 35x; 4096 x
  // 1024: 20.9x and 19.3x; 16 x 2^20: Thomas has 16 threads, hybrid 35x).
  const size_t pcr_bytes = static_cast<size_t>(8) * n * elem_bytes + 16;
  const bool pcr_fits = pcr_bytes <= static_cast<size_t>(Kokkos::TeamPolicy<Exec>::scratch_size_max(0));
  if (pcr_fits) return TridiagonalAlgorithm::PCR;
  return static_cast<long>(nsys) * 32 < threads ? TridiagonalAlgorithm::Hybrid : TridiagonalAlgorithm::Thomas;
}

/// Solves every system of the batch; returns the algorithm it used. The
/// workspace is used by Thomas' Global variant (see thomas_workspace_size).
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
    pcr(exec, a, b, c, d, x, info, opt.solve);
  else if (alg == TridiagonalAlgorithm::Hybrid)
    hybrid(exec, a, b, c, d, x, info, opt.hybrid);
  else
    thomas(exec, a, b, c, d, x, info, opt.solve, workspace);
  return alg;
}

}  // namespace kband
