// Batched tridiagonal solve by LU with partial pivoting (LAPACK gtsv), for
// general systems where Thomas (no pivoting) can fail or lose accuracy.
//
//   kband::gtsv(exec, a, b, c, d, x, info[, opts[, workspace]])
//
// Same arguments and conventions as kband::thomas; info(s) = k > 0 when U(k,k)
// is exactly zero or not finite (the matrix is singular to working precision),
// x(s,:) is then NaN. The Global variant needs gtsv_workspace_size(x) elements
// of workspace (allocated per call when none is passed).
#pragma once

#include "impl/kband_GTSV_impl.hpp"
#include "kband_Thomas.hpp"

namespace kband {

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
  constexpr int W = impl::thomas_lanes<Exec, BX>::value;
  constexpr int U = impl::thomas_unroll<Exec, BX>::value;
  using K = impl::GTSVPerSystem<Exec, BA, BB, BC, BD, BX, Info, W, U>;
  const impl::ThomasGeometry g = impl::thomas_geometry<Exec, T>(fn, nsys, n, W, K::nbuf_scratch, opt,
                                                                tx::layout == Layout::Contiguous);
  if (!g.scratch && ws.extent(0) < gtsv_workspace_size(x))
    ws = decltype(ws)(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("kband::gtsv::ws")),
                      gtsv_workspace_size(x));
  typename K::Base base{nsys, n, g.scratch, g.scratch_level, ws, std::numeric_limits<T>::quiet_NaN()};
  impl::launch_thomas(fn, exec, g, K(base, a, b, c, d, x, info));
}

}  // namespace kband
