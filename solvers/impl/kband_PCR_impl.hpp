// Kernels of batched parallel cyclic reduction (kband::pcr).
//
// A team holds P systems; each system is worked on by a sub-team of `ns`
// threads (the seed's Qt / tidx split: tidx = rank % ns, Qt = rank / ns), each
// thread owning rows tidx, tidx + ns, ... Rows live in team scratch memory,
// double-buffered; ceil(log2 n) reduction steps with stride 1, 2, 4, ...;
// rows outside [0, n) act as identity rows, so any n works.
#pragma once

#include "kband_Layouts.hpp"

namespace kband {
namespace impl {

struct PCRGeometry {
  int nsys = 0, n = 0;
  int team_size = 1;
  int per_team = 1;  // P systems per team
  int ns = 1;        // threads per system
  int league = 0;
  int steps = 0;     // ceil(log2 n)
  int scratch_level = 0;
  size_t scratch_bytes = 0;
};

inline int ceil_log2(int n) {
  int s = 0;
  while ((1 << s) < n) ++s;
  return s;
}

template <class T>
KOKKOS_INLINE_FUNCTION T* align_ptr(char* p) {
  const uintptr_t a = alignof(T) > 8 ? alignof(T) : 8;
  return reinterpret_cast<T*>((reinterpret_cast<uintptr_t>(p) + a - 1) / a * a);
}

/// Where a thread of a PCR team works: system q of the team (seed: Qt),
/// thread r within it (seed: tidx), global system s, and the system's slot of
/// team scratch (`bytes` per system).
template <class T, class Member>
struct PCRThread {
  int q, r, s;
  bool live;  // owns rows of a real system (every thread still joins the barriers)
  T* buf;
  KOKKOS_INLINE_FUNCTION PCRThread(const Member& m, const PCRGeometry& g, size_t bytes) {
    q = m.team_rank() / g.ns;
    r = m.team_rank() % g.ns;
    const bool active = q < g.per_team;
    s = m.league_rank() * g.per_team + q;
    live = active && s < g.nsys;
    char* base = static_cast<char*>(m.team_scratch(g.scratch_level).get_shmem(g.scratch_bytes));
    buf = align_ptr<T>(base + (active ? q : 0) * bytes);
  }
};

/// Per-system coefficients.
template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info>
struct PCRPerSystem {
  using T = batch_value_t<BX>;
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  BA a;
  BB b;
  BC c;
  BD d;
  BX x;
  Info info;
  PCRGeometry g;
  T nan;

  KOKKOS_INLINE_FUNCTION static size_t bytes_per_system(int n) {
    return static_cast<size_t>(8) * n * sizeof(T) + 16;
  }

  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    const int n = g.n, ns = g.ns;
    const PCRThread<T, member_type> th(m, g, bytes_per_system(n));
    const int r = th.r, s = th.s;
    const bool live = th.live;
    T* buf = th.buf;
    T* A[2] = {buf, buf + 4 * n};
    int* badp = reinterpret_cast<int*>(buf + 8 * n);
    if (live) {
      for (int i = r; i < n; i += ns) {
        A[0][i] = i > 0 ? a(s, i) : T(0);
        A[0][n + i] = b(s, i);
        A[0][2 * n + i] = i < n - 1 ? c(s, i) : T(0);
        A[0][3 * n + i] = d(s, i);
      }
      if (r == 0) *badp = n + 1;
    }
    m.team_barrier();
    int cur = 0;
    int bad = n + 1;
    for (int stride = 1; stride < n; stride *= 2) {
      if (live) {
        const T* Ac = A[cur];
        T* An = A[1 - cur];
        for (int i = r; i < n; i += ns) {
          const int im = i - stride, ip = i + stride;
          T an = T(0), bn = Ac[n + i], cn = T(0), dn = Ac[3 * n + i];
          if (im >= 0) {
            const T bm = Ac[n + im];
            if (!usable_pivot(bm) && im + 1 < bad) bad = im + 1;
            const T k1 = Ac[i] / bm;
            an = -Ac[im] * k1;
            bn -= Ac[2 * n + im] * k1;
            dn -= Ac[3 * n + im] * k1;
          }
          if (ip < n) {
            const T bp = Ac[n + ip];
            if (!usable_pivot(bp) && ip + 1 < bad) bad = ip + 1;
            const T k2 = Ac[2 * n + i] / bp;
            cn = -Ac[2 * n + ip] * k2;
            bn -= Ac[ip] * k2;
            dn -= Ac[3 * n + ip] * k2;
          }
          An[i] = an;
          An[n + i] = bn;
          An[2 * n + i] = cn;
          An[3 * n + i] = dn;
        }
      }
      cur = 1 - cur;
      m.team_barrier();
    }
    if (live) {
      for (int i = r; i < n; i += ns)
        if (!usable_pivot(A[cur][n + i]) && i + 1 < bad) bad = i + 1;
      if (bad <= n) Kokkos::atomic_fetch_min(badp, bad);
    }
    m.team_barrier();
    if (live) {
      const int sb = *badp;
      for (int i = r; i < n; i += ns) x(s, i) = sb <= n ? nan : A[cur][3 * n + i] / A[cur][n + i];
      if (r == 0) info(s) = sb <= n ? sb : 0;
    }
  }
};

/// Shared coefficients: the multipliers of every step are factored once.
template <class T, class Mem>
struct PCRFactorData {
  Kokkos::View<T**, Kokkos::LayoutRight, Mem> k1, k2;  // (steps, n)
  Kokkos::View<T*, Mem> rb;                              // 1 / final diagonal
  Kokkos::View<T*, Mem> a, b, c;                         // the matrix (the Registers variant's input)
  Kokkos::View<int, Mem> info;
  int n = 0, steps = 0;
};

template <class T, class Mem, class VA, class VB, class VC>
struct PCRFactorKernel {
  PCRFactorData<T, Mem> f;
  Kokkos::View<T**, Kokkos::LayoutRight, Mem> work;  // (2, 3n) a, b, c double buffer
  VA a;
  VB b;
  VC c;
  KOKKOS_INLINE_FUNCTION void operator()(const int) const {
    const int n = f.n;
    int bad = 0;
    for (int i = 0; i < n; ++i) {
      f.a(i) = i > 0 ? a(i) : T(0);
      f.b(i) = b(i);
      f.c(i) = i < n - 1 ? c(i) : T(0);
      work(0, i) = i > 0 ? a(i) : T(0);
      work(0, n + i) = b(i);
      work(0, 2 * n + i) = i < n - 1 ? c(i) : T(0);
    }
    int cur = 0, step = 0;
    for (int stride = 1; stride < n; stride *= 2, ++step) {
      for (int i = 0; i < n; ++i) {
        const int im = i - stride, ip = i + stride;
        T an = T(0), bn = work(cur, n + i), cn = T(0), k1 = T(0), k2 = T(0);
        if (im >= 0) {
          const T bm = work(cur, n + im);
          if (bad == 0 && !usable_pivot(bm)) bad = im + 1;
          k1 = work(cur, i) / bm;
          an = -work(cur, im) * k1;
          bn -= work(cur, 2 * n + im) * k1;
        }
        if (ip < n) {
          const T bp = work(cur, n + ip);
          if (bad == 0 && !usable_pivot(bp)) bad = ip + 1;
          k2 = work(cur, 2 * n + i) / bp;
          cn = -work(cur, 2 * n + ip) * k2;
          bn -= work(cur, ip) * k2;
        }
        f.k1(step, i) = k1;
        f.k2(step, i) = k2;
        work(1 - cur, i) = an;
        work(1 - cur, n + i) = bn;
        work(1 - cur, 2 * n + i) = cn;
      }
      cur = 1 - cur;
    }
    for (int i = 0; i < n; ++i) {
      const T bi = work(cur, n + i);
      if (bad == 0 && !usable_pivot(bi)) bad = i + 1;
      f.rb(i) = T(1) / bi;
    }
    f.info() = bad;
  }
};

template <class Exec, class T, class Mem, class BD, class BX, class Info>
struct PCRShared {
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  PCRFactorData<T, Mem> f;
  BD d;
  BX x;
  Info info;
  PCRGeometry g;
  T nan;

  KOKKOS_INLINE_FUNCTION static size_t bytes_per_system(int n) {
    return static_cast<size_t>(2) * n * sizeof(T) + 16;
  }

  KOKKOS_FUNCTION void operator()(const member_type& m) const {
    const int n = g.n, ns = g.ns;
    const PCRThread<T, member_type> th(m, g, bytes_per_system(n));
    const int r = th.r, s = th.s;
    const bool live = th.live;
    const int finfo = f.info();
    T* D[2] = {th.buf, th.buf + n};
    if (live)
      for (int i = r; i < n; i += ns) D[0][i] = d(s, i);
    m.team_barrier();
    int cur = 0, step = 0;
    for (int stride = 1; stride < n; stride *= 2, ++step) {
      if (live) {
        for (int i = r; i < n; i += ns) {
          T dn = D[cur][i];
          if (i - stride >= 0) dn -= D[cur][i - stride] * f.k1(step, i);
          if (i + stride < n) dn -= D[cur][i + stride] * f.k2(step, i);
          D[1 - cur][i] = dn;
        }
      }
      cur = 1 - cur;
      m.team_barrier();
    }
    if (live) {
      for (int i = r; i < n; i += ns) x(s, i) = finfo != 0 ? nan : D[cur][i] * f.rb(i);
      if (r == 0) info(s) = finfo;
    }
  }
};

}  // namespace impl
}  // namespace kband
