// Kernel of the batched tridiagonal LU with partial pivoting (kband::gtsv),
// LAPACK dgtsv's elimination streamed row by row so that every input row is
// read once: row i (possibly modified by the previous step) is carried in
// registers, row i+1 is read, the larger of |b_i| and |a_{i+1}| pivots, and the
// finished row of U (1/pivot, first and second super-diagonal) plus its RHS is
// stored for the back substitution.
#pragma once

#include "kband_Thomas_impl.hpp"

namespace kband {
namespace impl {

template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info, int W, int U>
struct GTSVPerSystem : ThomasBase<Exec, BX, batch_value_t<BX>, W> {
  using T = batch_value_t<BX>;
  using Base = ThomasBase<Exec, BX, T, W>;
  using typename Base::member_type;
  static constexpr int nbuf_scratch = 4;  // 1/p, u1, u2, y
  BA a;
  BB b;
  BC c;
  BD d;
  BX x;
  Info info;

  GTSVPerSystem(const Base& base, BA a_, BB b_, BC c_, BD d_, BX x_, Info info_)
      : Base(base), a(a_), b(b_), c(c_), d(d_), x(x_), info(info_) {}

  KOKKOS_INLINE_FUNCTION static T mag(const T v) { return v < T(0) ? -v : v; }

  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    int nl;
    const int s0 = this->first_system(m, nl);
    if (nl == 0) return;
    const int nlc = W == 1 ? 1 : nl;
    const int n = this->n;
    const LaneStore<T> st = this->store(m, s0, nbuf_scratch);
    const size_t als = batch_traits<BA>::lane_stride(a), bls = batch_traits<BB>::lane_stride(b);
    const size_t cls = batch_traits<BC>::lane_stride(c), dls = batch_traits<BD>::lane_stride(d);
    // buffers: 0 = 1/p, 1 = u1, 2 = u2, 3 = y (scratch only; Global keeps y in x)
    T di[W], dui[W], bi[W];
    int bad[W];
    {
      const T* b0 = &b(s0, 0);
      const T* c0 = &c(s0, 0);
      const T* d0 = &d(s0, 0);
      for (int l = 0; l < nlc; ++l) {
        di[l] = b0[l * bls];
        dui[l] = n > 1 ? c0[l * cls] : T(0);
        bi[l] = d0[l * dls];
        bad[l] = 0;
      }
    }
    for (int jb = 1; jb < n; jb += U) {
      T av[U][W], bv[U][W], cv[U][W], dv[U][W];
      for (int u = 0; u < U; ++u) {
        const int j = jb + u;
        if (j < n) {
          const T* aj = &a(s0, j);
          const T* bj = &b(s0, j);
          const T* cj = &c(s0, j);
          const T* dj = &d(s0, j);
          for (int l = 0; l < nlc; ++l) {
            av[u][l] = aj[l * als];
            bv[u][l] = bj[l * bls];
            cv[u][l] = j < n - 1 ? cj[l * cls] : T(0);
            dv[u][l] = dj[l * dls];
          }
        }
      }
      for (int u = 0; u < U; ++u) {
        const int j = jb + u;  // row i = j - 1 is finished in this step
        if (j < n) {
          for (int l = 0; l < nlc; ++l) {
            const T dl = av[u][l];
            const bool swap = mag(di[l]) < mag(dl);
            const T piv = swap ? dl : di[l];
            bad[l] = (bad[l] == 0 && !usable_pivot(piv)) ? j : bad[l];
            const T rp = T(1) / piv;
            const T fact = swap ? di[l] * rp : dl * rp;
            st(0, j - 1, l) = rp;
            st(1, j - 1, l) = swap ? bv[u][l] : dui[l];
            st(2, j - 1, l) = swap ? cv[u][l] : T(0);
            yref(st, s0, j - 1, l) = swap ? dv[u][l] : bi[l];
            const T nd = swap ? dui[l] - fact * bv[u][l] : bv[u][l] - fact * dui[l];
            const T ndu = swap ? -fact * cv[u][l] : cv[u][l];
            const T nb = swap ? bi[l] - fact * dv[u][l] : dv[u][l] - fact * bi[l];
            di[l] = nd;
            dui[l] = ndu;
            bi[l] = nb;
          }
        }
      }
    }
    // last row, then back substitution
    T x1[W], x2[W];
    for (int l = 0; l < nlc; ++l) {
      bad[l] = (bad[l] == 0 && !usable_pivot(di[l])) ? n : bad[l];
      x1[l] = bi[l] / di[l];
      x2[l] = T(0);
      x(s0 + l, n - 1) = x1[l];
    }
    for (int jb = n - 2; jb >= 0; jb -= U) {
      T rv[U][W], u1[U][W], u2[U][W], yv[U][W];
      for (int u = 0; u < U; ++u) {
        const int j = jb - u;
        if (j >= 0)
          for (int l = 0; l < nlc; ++l) {
            rv[u][l] = st(0, j, l);
            u1[u][l] = st(1, j, l);
            u2[u][l] = st(2, j, l);
            yv[u][l] = yref(st, s0, j, l);
          }
      }
      for (int u = 0; u < U; ++u) {
        const int j = jb - u;
        if (j >= 0)
          for (int l = 0; l < nlc; ++l) {
            const T xj = (yv[u][l] - u1[u][l] * x1[l] - u2[u][l] * x2[l]) * rv[u][l];
            x2[l] = x1[l];
            x1[l] = xj;
            x(s0 + l, j) = xj;
          }
      }
    }
    for (int l = 0; l < nlc; ++l) {
      info(s0 + l) = bad[l];
      if (bad[l] != 0)
        for (int j = 0; j < n; ++j) x(s0 + l, j) = this->nan;
    }
  }

  KOKKOS_INLINE_FUNCTION T& yref(const LaneStore<T>& st, int s0, int j, int l) const {
    return this->scratch ? st(3, j, l) : x(s0 + l, j);
  }
};

}  // namespace impl
}  // namespace kband
