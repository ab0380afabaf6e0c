// Kernels of the batched Thomas solvers (kband::thomas, kband::periodic_thomas).
//
// One kernel source serves every layout and backend. Each thread of a team owns
// W consecutive systems ("lanes"): W = 1 on GPUs (one system per thread, the
// grouped and interleaved layouts then coalesce across a warp) and W = SZ or 8
// on CPUs, where the inner lane loop is unit-stride and vectorises. Forward-pass
// intermediates live either in team scratch memory (Scratch) or in the output
// and a workspace (Global); only where they live differs.
#pragma once

#include "kband_Layouts.hpp"

namespace kband {
namespace impl {

/// Where a thread keeps the rows of its forward-pass intermediates. A slot
/// holds `nbuf` arrays of n rows for each of the thread's W lanes.
template <class T>
struct LaneStore {
  T* base = nullptr;   // lane 0, row 0, buffer 0
  size_t lane = 0;     // distance between lanes
  size_t row = 0;      // distance between rows
  size_t buf = 0;      // distance between buffers
  KOKKOS_INLINE_FUNCTION T& operator()(int b, int j, int l) const {
    return base[b * buf + j * row + l * lane];
  }
};

/// Offset of (s, row 0) and the row stride of the workspace, laid out like the batch.
template <Layout L, int SZ>
struct WorkspaceMap {
  static constexpr int G = SZ > 0 ? SZ : 1;  // group width (grouped layout only)
  KOKKOS_INLINE_FUNCTION static size_t offset(int s, int nsys, int n) {
    if (L == Layout::Contiguous) return static_cast<size_t>(s) * n;
    if (L == Layout::Interleaved) return static_cast<size_t>(s);
    (void)nsys;
    return static_cast<size_t>(s / G) * n * G + s % G;
  }
  KOKKOS_INLINE_FUNCTION static size_t row_stride(int nsys, int n) {
    if (L == Layout::Contiguous) return 1;
    if (L == Layout::Interleaved) return static_cast<size_t>(nsys);
    (void)n;
    return G;
  }
  KOKKOS_INLINE_FUNCTION static size_t extent(int nsys, int n) {
    if (L == Layout::Grouped) return static_cast<size_t>((nsys + G - 1) / G) * G * n;
    return static_cast<size_t>(nsys) * n;
  }
};

/// Launch geometry shared by the Thomas kernels.
struct ThomasGeometry {
  int nsys = 0, n = 0;
  int lanes = 1;       // W
  int team_size = 1;   // threads per team
  int league = 0;
  bool scratch = false;
  int scratch_level = 0;  // 0: on-chip team scratch; 1: the backend's larger, slower level
  int nbuf = 0;           // intermediate arrays per lane
  size_t scratch_bytes = 0;
};

template <class Exec, class BX, class T, int W>
struct ThomasBase {
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  using tr = batch_traits<BX>;
  using WMap = WorkspaceMap<tr::layout, tr::sz>;

  int nsys, n;
  bool scratch;
  int level;                                        // scratch level
  Kokkos::View<T*, typename tr::memory_space> ws;  // Global variant only
  T nan;

  /// First system of this thread, number of live lanes (0 = idle thread).
  KOKKOS_INLINE_FUNCTION int first_system(const member_type& m, int& nl) const {
    const int item = m.league_rank() * m.team_size() + m.team_rank();
    const int s0 = item * W;
    nl = s0 < nsys ? (nsys - s0 < W ? nsys - s0 : W) : 0;
    return s0;
  }

  KOKKOS_INLINE_FUNCTION LaneStore<T> store(const member_type& m, int s0, int nbuf) const {
    LaneStore<T> st;
    if (scratch) {
      const size_t slots = static_cast<size_t>(m.team_size()) * W;
      T* sc = static_cast<T*>(m.team_scratch(level).get_shmem(slots * n * nbuf * sizeof(T)));
      st.base = sc + static_cast<size_t>(m.team_rank()) * W;
      st.lane = 1;
      st.row = slots;
      st.buf = slots * n;
    } else {
      st.base = ws.data() + WMap::offset(s0, nsys, n);
      st.lane = tr::layout == Layout::Contiguous ? static_cast<size_t>(n) : 1;
      st.row = WMap::row_stride(nsys, n);
      st.buf = WMap::extent(nsys, n);
    }
    return st;
  }
};

// ---------------------------------------------------------------------------
// Per-system coefficients: a (sub), b (diag), c (super), d (rhs) -> x.
// Non-periodic: a(s,0) and c(s,n-1) are not read.
// Periodic: a(s,0) couples row 0 to x(n-1), c(s,n-1) couples row n-1 to x(0);
// Sherman-Morrison with gamma = -b(s,0).
// ---------------------------------------------------------------------------
template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info, int W,
          int U, bool Periodic>
struct ThomasPerSystem : ThomasBase<Exec, BX, batch_value_t<BX>, W> {
  using T = batch_value_t<BX>;
  using Base = ThomasBase<Exec, BX, T, W>;
  using typename Base::member_type;
  BA a;
  BB b;
  BC c;
  BD d;
  BX x;
  Info info;

  ThomasPerSystem(const Base& base, BA a_, BB b_, BC c_, BD d_, BX x_, Info info_)
      : Base(base), a(a_), b(b_), c(c_), d(d_), x(x_), info(info_) {}

  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    int nl;
    const int s0 = this->first_system(m, nl);
    if (nl == 0) return;
    const int nlc = W == 1 ? 1 : nl;  // a compile-time trip count on GPUs
    const int n = this->n;
    // buffers: c' first, then y' (scratch only: Global keeps y' in x), then z'
    // (periodic only).
    const LaneStore<T> st = this->store(m, s0, Periodic ? 3 : 2);
    const int ybuf = 1, zbuf = this->scratch ? 2 : 1;

    T cprev[W], yprev[W], zprev[W], gam[W], alpha[W], beta[W];
    int bad[W];
    {
      const T* a0 = &a(s0, 0);
      const T* b0 = &b(s0, 0);
      const T* c0 = &c(s0, 0);
      const T* cn = &c(s0, n - 1);
      const T* d0 = &d(s0, 0);
      const size_t ls = lane_stride();
      for (int l = 0; l < nlc; ++l) {
        T piv = b0[l * ls];
        if (Periodic) {
          gam[l] = -piv;
          beta[l] = a0[l * ls];
          alpha[l] = cn[l * ls];
          piv = piv - gam[l];
        }
        bad[l] = usable_pivot(piv) ? 0 : 1;
        const T w = T(1) / piv;
        cprev[l] = n > 1 ? c0[l * ls] * w : T(0);
        yprev[l] = d0[l * ls] * w;
        st(0, 0, l) = cprev[l];
        ybuf_ref(st, ybuf, s0, 0, l) = yprev[l];
        if (Periodic) {
          zprev[l] = gam[l] * w;
          st(zbuf, 0, l) = zprev[l];
        }
      }
    }
    // Forward pass, U rows at a time: the loads of a block are independent of
    // the recurrence, so they are all issued before the first use.
    for (int jb = 1; jb < n; jb += U) {
      T av[U][W], bv[U][W], cv[U][W], dv[U][W];
      const size_t ls = lane_stride();
      for (int u = 0; u < U; ++u) {
        const int j = jb + u;
        if (j < n) {
          const T* aj = &a(s0, j);
          const T* bj = &b(s0, j);
          const T* cj = &c(s0, j);
          const T* dj = &d(s0, j);
          for (int l = 0; l < nlc; ++l) {
            av[u][l] = aj[l * ls];
            bv[u][l] = bj[l * ls];
            cv[u][l] = cj[l * ls];
            dv[u][l] = dj[l * ls];
          }
        }
      }
      for (int u = 0; u < U; ++u) {
        const int j = jb + u;
        if (j < n) {
          const bool last = j == n - 1;
          for (int l = 0; l < nlc; ++l) {
            const T al = av[u][l];
            T piv = bv[u][l] - al * cprev[l];
            if (Periodic && last) piv -= alpha[l] * beta[l] / gam[l];
            bad[l] = (bad[l] == 0 && !usable_pivot(piv)) ? j + 1 : bad[l];
            const T w = T(1) / piv;
            cprev[l] = last ? T(0) : cv[u][l] * w;
            yprev[l] = (dv[u][l] - al * yprev[l]) * w;
            st(0, j, l) = cprev[l];
            ybuf_ref(st, ybuf, s0, j, l) = yprev[l];
            if (Periodic) {
              zprev[l] = ((last ? alpha[l] : T(0)) - al * zprev[l]) * w;
              st(zbuf, j, l) = zprev[l];
            }
          }
        }
      }
    }
    // Backward pass: y (and z) overwrite their forward intermediates; in the
    // non-periodic case y is the solution and goes straight to x.
    for (int l = 0; l < nlc; ++l) {
      if (!Periodic) x(s0 + l, n - 1) = yprev[l];
    }
    for (int jb = n - 2; jb >= 0; jb -= U) {
      // the block's stored rows are loaded before the recurrence consumes them
      T cv[U][W], yv[U][W], zv[U][W];
      for (int u = 0; u < U; ++u) {
        const int j = jb - u;
        if (j >= 0)
          for (int l = 0; l < nlc; ++l) {
            cv[u][l] = st(0, j, l);
            yv[u][l] = ybuf_ref(st, ybuf, s0, j, l);
            if (Periodic) zv[u][l] = st(zbuf, j, l);
          }
      }
      for (int u = 0; u < U; ++u) {
        const int j = jb - u;
        if (j >= 0)
          for (int l = 0; l < nlc; ++l) {
            yprev[l] = yv[u][l] - cv[u][l] * yprev[l];
            if (Periodic) {
              zprev[l] = zv[u][l] - cv[u][l] * zprev[l];
              st(zbuf, j, l) = zprev[l];
              ybuf_ref(st, ybuf, s0, j, l) = yprev[l];
            } else {
              x(s0 + l, j) = yprev[l];
            }
          }
      }
    }
    if (Periodic) {
      // yprev/zprev now hold y_0, z_0; y_{n-1}, z_{n-1} are still stored.
      T fact[W];
      for (int l = 0; l < nlc; ++l) {
        const T r = beta[l] / gam[l];
        const T den = T(1) + zprev[l] + r * st(zbuf, n - 1, l);
        bad[l] = (bad[l] == 0 && !usable_pivot(den)) ? n : bad[l];
        fact[l] = (yprev[l] + r * ybuf_ref(st, ybuf, s0, n - 1, l)) / den;
      }
      for (int j = 0; j < n; ++j)
        for (int l = 0; l < nlc; ++l)
          x(s0 + l, j) = ybuf_ref(st, ybuf, s0, j, l) - fact[l] * st(zbuf, j, l);
    }
    for (int l = 0; l < nlc; ++l) {
      info(s0 + l) = bad[l];
      if (bad[l] != 0)
        for (int j = 0; j < n; ++j) x(s0 + l, j) = this->nan;
    }
  }

  KOKKOS_INLINE_FUNCTION static size_t lane_stride_impl(int n) {
    return batch_traits<BX>::layout == Layout::Contiguous ? static_cast<size_t>(n) : 1;
  }
  KOKKOS_INLINE_FUNCTION size_t lane_stride() const { return lane_stride_impl(this->n); }

  /// y' lives in the scratch buffer `ybuf`, or in x itself for the Global variant.
  KOKKOS_INLINE_FUNCTION T& ybuf_ref(const LaneStore<T>& st, int ybuf, int s0, int j, int l) const {
    return this->scratch ? st(ybuf, j, l) : x(s0 + l, j);
  }
};

// ---------------------------------------------------------------------------
// Shared coefficients (a factored TridiagonalFactor): only d is read per system.
// ---------------------------------------------------------------------------
template <class T, class Mem>
struct FactorData {
  Kokkos::View<T*, Mem> a, cp, w;     // sub-diagonal, c' = c/pivot, 1/pivot
  Kokkos::View<T*, Mem> g, z;         // periodic: first row of T'^-1, correction vector
  Kokkos::View<T[2], Mem> scal;       // periodic: beta/gamma, 1/(1 + z_0 + beta/gamma z_{n-1})
  Kokkos::View<int, Mem> info;        // first bad pivot (1-based) or 0
  int n = 0;
  bool periodic = false;
};

template <class Exec, class T, class Mem, class BD, class BX, class Info, int W, int U,
          bool Periodic>
struct ThomasShared : ThomasBase<Exec, BX, T, W> {
  using Base = ThomasBase<Exec, BX, T, W>;
  using typename Base::member_type;
  FactorData<T, Mem> f;
  BD d;
  BX x;
  Info info;

  ThomasShared(const Base& base, const FactorData<T, Mem>& f_, BD d_, BX x_, Info info_)
      : Base(base), f(f_), d(d_), x(x_), info(info_) {}

  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    int nl;
    const int s0 = this->first_system(m, nl);
    if (nl == 0) return;
    const int nlc = W == 1 ? 1 : nl;  // a compile-time trip count on GPUs
    const int n = this->n;
    const int finfo = f.info();
    if (finfo != 0) {
      for (int l = 0; l < nlc; ++l) {
        info(s0 + l) = finfo;
        for (int j = 0; j < n; ++j) x(s0 + l, j) = this->nan;
      }
      return;
    }
    const LaneStore<T> st = this->store(m, s0, 1);
    const size_t ls = batch_traits<BX>::layout == Layout::Contiguous ? static_cast<size_t>(n) : 1;
    T yprev[W], dot[W];
    {
      const T w0 = f.w(0);
      const T* d0 = &d(s0, 0);
      for (int l = 0; l < nlc; ++l) {
        const T dl = d0[l * ls];
        yprev[l] = dl * w0;
        if (Periodic) dot[l] = f.g(0) * dl;
        yref(st, s0, 0, l) = yprev[l];
      }
    }
    for (int jb = 1; jb < n; jb += U) {
      T dv[U][W];
      for (int u = 0; u < U; ++u) {
        const int j = jb + u;
        if (j < n) {
          const T* dj = &d(s0, j);
          for (int l = 0; l < nlc; ++l) dv[u][l] = dj[l * ls];
        }
      }
      for (int u = 0; u < U; ++u) {
        const int j = jb + u;
        if (j < n) {
          const T aj = f.a(j), wj = f.w(j);
          const T gj = Periodic ? f.g(j) : T(0);
          for (int l = 0; l < nlc; ++l) {
            yprev[l] = (dv[u][l] - aj * yprev[l]) * wj;
            if (Periodic) dot[l] += gj * dv[u][l];
            yref(st, s0, j, l) = yprev[l];
          }
        }
      }
    }
    // y_0 = g.d and y_{n-1} are known now, so the Sherman-Morrison factor is too
    // and the backward pass writes the final solution directly.
    T fact[W];
    for (int l = 0; l < nlc; ++l) {
      fact[l] = Periodic ? (dot[l] + f.scal(0) * yprev[l]) * f.scal(1) : T(0);
      x(s0 + l, n - 1) = Periodic ? yprev[l] - fact[l] * f.z(n - 1) : yprev[l];
    }
    for (int jb = n - 2; jb >= 0; jb -= U) {
      T yv[U][W];
      for (int u = 0; u < U; ++u) {
        const int j = jb - u;
        if (j >= 0)
          for (int l = 0; l < nlc; ++l) yv[u][l] = yref(st, s0, j, l);
      }
      for (int u = 0; u < U; ++u) {
        const int j = jb - u;
        if (j >= 0) {
          const T cpj = f.cp(j);
          const T zj = Periodic ? f.z(j) : T(0);
          for (int l = 0; l < nlc; ++l) {
            yprev[l] = yv[u][l] - cpj * yprev[l];
            x(s0 + l, j) = Periodic ? yprev[l] - fact[l] * zj : yprev[l];
          }
        }
      }
    }
    for (int l = 0; l < nlc; ++l) info(s0 + l) = 0;
  }

  KOKKOS_INLINE_FUNCTION T& yref(const LaneStore<T>& st, int s0, int j, int l) const {
    return this->scratch ? st(0, j, l) : x(s0 + l, j);
  }
};

/// Factorisation of a shared tridiagonal matrix, run by one device thread.
template <class T, class Mem, class VA, class VB, class VC>
struct FactorKernel {
  FactorData<T, Mem> f;
  VA a;
  VB b;
  VC c;
  KOKKOS_INLINE_FUNCTION void operator()(const int) const {
    const int n = f.n;
    int bad = 0;
    T gam = 0, beta = 0, alpha = 0;
    T b0 = b(0);
    if (f.periodic) {
      gam = -b0;
      beta = a(0);
      alpha = c(n - 1);
      b0 -= gam;
    }
    // forward elimination of T' (modified diagonal in the periodic case)
    bad = usable_pivot(b0) ? 0 : 1;
    f.w(0) = T(1) / b0;
    f.a(0) = T(0);
    f.cp(0) = n > 1 ? c(0) * f.w(0) : T(0);
    for (int j = 1; j < n; ++j) {
      T piv = b(j) - a(j) * f.cp(j - 1);
      if (f.periodic && j == n - 1) piv -= alpha * beta / gam;
      if (bad == 0 && !usable_pivot(piv)) bad = j + 1;
      f.w(j) = T(1) / piv;
      f.a(j) = a(j);
      f.cp(j) = j < n - 1 ? c(j) * f.w(j) : T(0);
    }
    if (f.periodic && bad == 0) {
      // z = T'^-1 u, u = (gamma, 0, ..., 0, alpha)
      T zp = gam * f.w(0);
      f.z(0) = zp;
      for (int j = 1; j < n; ++j) {
        zp = ((j == n - 1 ? alpha : T(0)) - f.a(j) * zp) * f.w(j);
        f.z(j) = zp;
      }
      for (int j = n - 2; j >= 0; --j) f.z(j) = f.z(j) - f.cp(j) * f.z(j + 1);
      // g = T'^-T e_0: with T' = L U (L unit lower with l_j = a_j w_{j-1}...),
      // solve U^T L^T g = e_0 directly: forward on U^T, backward on L^T.
      // U has diagonal piv_j = 1/w_j and super-diagonal c_j; L has sub-diagonal a_j / piv_{j-1}.
      T h = f.w(0);  // (U^T h = e_0): h_0 = 1/piv_0, h_j = -c_{j-1} h_{j-1} / piv_j
      f.g(0) = h;
      for (int j = 1; j < n; ++j) {
        h = -(f.cp(j - 1) / f.w(j - 1)) * h * f.w(j);
        f.g(j) = h;
      }
      // L^T g = h: g_{n-1} = h_{n-1}, g_j = h_j - (a_{j+1} w_j) g_{j+1}
      for (int j = n - 2; j >= 0; --j) f.g(j) = f.g(j) - f.a(j + 1) * f.w(j) * f.g(j + 1);
      const T r = beta / gam;
      const T den = T(1) + f.z(0) + r * f.z(n - 1);
      if (!usable_pivot(den)) bad = n;
      f.scal(0) = r;
      f.scal(1) = T(1) / den;
    }
    f.info() = bad;
  }
};

}  // namespace impl
}  // namespace kband
