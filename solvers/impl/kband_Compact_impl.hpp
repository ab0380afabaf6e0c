// Kernels of the compact finite-difference operators (kband_Compact.hpp).
#pragma once

#include "kband_Layouts.hpp"

namespace kband {
namespace impl {

/// RHS stencils of a compact operator as a kernel sees them: the interior
/// 5-point stencil (offsets -2..2) and, on closed lines, the windows of rows
/// 0, 1 (left[k], starting at row k + left_start[k]) and n-1, n-2 (right[k],
/// row n-1-k, starting at n-1-k + right_start[k]).
template <class T>
struct CompactStencil {
  T interior[5] = {0, 0, 0, 0, 0};
  T left[2][5] = {{0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}};
  T right[2][5] = {{0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}};
  int left_start[2] = {0, 0};
  int right_start[2] = {0, 0};
  bool periodic = true;

  /// The window of row i of a line of n points: coefficients c[0..4] of the
  /// points i+o .. i+o+4. lo_closed / hi_closed: the line's rows 0, 1 /
  /// n-2, n-1 are closure rows (a closed line end lies in this line).
  KOKKOS_INLINE_FUNCTION void window(const int i, const int n, const bool lo_closed, const bool hi_closed,
                                     const T*& c, int& o) const {
    c = interior;
    o = -2;
    if (lo_closed && i < 2) {
      c = left[i];
      o = left_start[i];
    } else if (hi_closed && i >= n - 2) {
      c = right[n - 1 - i];
      o = right_start[n - 1 - i];
    }
  }

  /// Row i's right-hand side; get(p) is point p of the line (any p the
  /// window reaches: periodic rows reach i-2 .. i+2 unwrapped).
  template <class Get>
  KOKKOS_INLINE_FUNCTION T apply(const int i, const int n, const bool lo_closed, const bool hi_closed,
                                 const Get& get) const {
    const T* c;
    int o;
    window(i, n, lo_closed, hi_closed, c, o);
    T r = 0;
    for (int q = 0; q < 5; ++q)
      if (c[q] != T(0)) r += c[q] * get(i + o + q);
    return r;
  }
};

/// rhs(s, i) of every point of an SZ-grouped batch (one point per iteration).
template <class T, int SZ, class Mem>
struct CompactRhsKernel {
  CompactStencil<T> st;
  GroupedBatch<T, SZ, Mem> in, rhs;

  struct Get {
    const GroupedBatch<T, SZ, Mem>* in;
    int g, l, n;
    KOKKOS_INLINE_FUNCTION T operator()(int p) const {
      p = p < 0 ? p + n : (p >= n ? p - n : p);
      return in->view()(g, p, l);
    }
  };

  KOKKOS_INLINE_FUNCTION void operator()(const size_t k) const {
    int s, i;
    if (!batch_traits<GroupedBatch<T, SZ, Mem>>::decode(rhs, k, s, i)) return;
    const int n = in.n();
    const Get get{&in, s / SZ, s % SZ, n};
    rhs.view()(s / SZ, i, s % SZ) = st.apply(i, n, !st.periodic, !st.periodic, get);
  }
};

}  // namespace impl
}  // namespace kband
