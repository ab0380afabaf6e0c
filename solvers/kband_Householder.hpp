// Batched Householder tridiagonalisation of dense symmetric matrices, and the
// symmetric solver built on it (seed 001, second half):
//
//   kband::tridiagonalize(exec, A, diag, offdiag, V, tau)
//       A (nmat, d, d) symmetric (only read); on return, for each matrix m,
//       A = Q T Q^T with T = tridiag(offdiag, diag, offdiag),
//       offdiag(m, j) = T(j+1, j) (j < d-1), Q = P_0 P_1 ... P_{d-3},
//       P_k = I - tau(m,k) v_k v_k^T, v_k = V(m, k, :) (zero in entries 0..k;
//       each vector is contiguous in a LayoutRight V).
//   kband::solve_symmetric(exec, A, b, x, info[, tsolve, opt])
//       x = Q T^-1 Q^T b, with T y = Q^T b solved by LU with partial
//       pivoting (one fused kernel) or, on request, by PCR.
//
// One team per matrix; the working copy of A lives in team scratch (on chip
// when it fits, else the backend's level-1 scratch), or for solve_symmetric's
// Variant::Registers (d <= 128; the default on GPUs for most such d) a row
// per thread (of one or more vector lanes) in registers. Step k: u = x -
// alpha e1 with alpha = -sign(x_0)|x| (x = A(k+1:, k)), H = |u|^2 / 2,
// p = A u / H, K = u.p / (2H), q = p - K u, A <- A - q u^T - u q^T.
#pragma once

#include "kband_GTSV.hpp"
#include "kband_PCR.hpp"


namespace kband {
namespace impl {

/// The Householder reflector of x (x_0 its first entry, |x|^2 = nrm2):
/// u = x - alpha e1 with alpha = -sign(x_0)|x|, so u_0 = x_0 - alpha;
/// rH = 2 / |u|^2, or 0 with skip when x is already a multiple of e1.
template <class T>
struct Reflector {
  T alpha, u0, rH;
  bool skip;
};
template <class T>
KOKKOS_INLINE_FUNCTION Reflector<T> reflector(const T x0, const T nrm2) {
  Reflector<T> r;
  const T nrm = sqrt_(nrm2);
  r.alpha = x0 >= T(0) ? -nrm : nrm;
  r.u0 = x0 - r.alpha;
  const T H = (nrm2 - x0 * x0 + r.u0 * r.u0) / T(2);  // |u|^2 / 2
  r.skip = !(H > T(0));
  r.rH = r.skip ? T(0) : T(1) / H;
  return r;
}

/// Householder step k on the symmetric working copy W (d x d, team scratch):
/// x = W(k, k+1:) (row k; W is symmetric, and rows are conflict-free in
/// shared memory), u = x - alpha e1, p = W22 u / H, q = p - K u, W22 <- W22 -
/// q u^T - u q^T. Unless tau = 0 (x already a multiple of e1), v_k = u is
/// left in row k of W, which later steps no longer read; with y != nullptr,
/// y(k+1:) <- P_k y(k+1:) too. Every thread gets T(k,k), T(k+1,k) and tau.
/// Ends with a team barrier.
template <class T, class Member>
KOKKOS_INLINE_FUNCTION void householder_step(const Member& team, T* W, const int d, const int k, T* u, T* p,
                                             T* y, T& t_kk, T& t_k1k, T& tau_k) {
  const int k1 = k + 1, len = d - k1;
  T* row = W + static_cast<size_t>(k) * d;
  T nrm2 = 0;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, len), [&](const int i, T& s) { s += row[k1 + i] * row[k1 + i]; }, nrm2);
  const T x0 = row[k1];
  const Reflector<T> ref = reflector(x0, nrm2);
  const T alpha = ref.alpha, u0 = ref.u0, rH = ref.rH;
  const bool skip = ref.skip;
  t_kk = row[k];
  t_k1k = skip ? x0 : alpha;
  tau_k = rH;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, len),
                       [&](const int i) { u[k1 + i] = skip ? T(0) : (i == 0 ? u0 : row[k1 + i]); });
  team.team_barrier();
  if (skip) return;
  // p = W22 u / H (thread i walks column k1+i: neighbouring words)
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, len), [&](const int i) {
    T s0 = 0, s1 = 0;  // two chains of FMAs
    int j = k1;
    for (; j + 1 < d; j += 2) {
      s0 += W[static_cast<size_t>(j) * d + k1 + i] * u[j];
      s1 += W[static_cast<size_t>(j + 1) * d + k1 + i] * u[j + 1];
    }
    if (j < d) s0 += W[static_cast<size_t>(j) * d + k1 + i] * u[j];
    p[k1 + i] = (s0 + s1) * rH;
  });
  T uy = 0;
  if (y != nullptr)
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, len), [&](const int i, T& s) { s += u[k1 + i] * y[k1 + i]; }, uy);
  team.team_barrier();
  T up = 0;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, len), [&](const int i, T& s) { s += u[k1 + i] * p[k1 + i]; }, up);
  const T K = up * rH / T(2);
  const T g = uy * rH;
  // q = p - K u; y <- P_k y; v_k into row k
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, len), [&](const int i) {
    p[k1 + i] -= K * u[k1 + i];
    if (y != nullptr) y[k1 + i] -= g * u[k1 + i];
    row[k1 + i] = u[k1 + i];
  });
  team.team_barrier();
  // W22 <- W22 - q u^T - u q^T: thread t takes column j = t % len of the
  // rows r0 = t / len, r0 + ng, ... (ng = max(1, team size / len) row
  // groups), so that a warp updates neighbouring words and no element needs
  // a division of its own
  const int ts = team.team_size(), ng = ts / len > 1 ? ts / len : 1;
  for (int c = team.team_rank(); c < ng * len; c += ts) {
    const int j = k1 + c % len, r0 = c / len;
    const T uj = u[j], qj = p[j];
    for (int i = k1 + r0; i < d; i += ng) W[i * d + j] -= p[i] * uj + u[i] * qj;
  }
  team.team_barrier();
}

template <class Exec, class VA, class VD, class VE, class VV, class VT>
struct HouseholderKernel {
  using T = typename VD::non_const_value_type;
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  VA A;
  VD diag;
  VE off;
  VV V;
  VT tau;
  int d;
  int level;

  KOKKOS_INLINE_FUNCTION static size_t scratch_bytes(int d) {
    return (static_cast<size_t>(d) * d + 3 * static_cast<size_t>(d) + 8) * sizeof(T);
  }

  KOKKOS_FUNCTION void operator()(const member_type& team) const {
    const int m = team.league_rank();
    T* W = static_cast<T*>(team.team_scratch(level).get_shmem(scratch_bytes(d)));
    T* u = W + static_cast<size_t>(d) * d;  // Householder vector (rows k+1..d-1)
    T* p = u + d;                           // p, then q
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, d * d), [&](const int ij) {
      W[ij] = A(m, ij / d, ij % d);
    });
    team.team_barrier();
    for (int k = 0; k + 2 < d; ++k) {
      T tkk, tk1k, tk;
      householder_step(team, W, d, k, u, p, static_cast<T*>(nullptr), tkk, tk1k, tk);
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        diag(m, k) = tkk;
        off(m, k) = tk1k;
        tau(m, k) = tk;
      });
      const T* v = W + static_cast<size_t>(k) * d;  // v_k; later steps leave row k alone
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, d), [&](const int i) {
        V(m, k, i) = (i <= k || tk == T(0)) ? T(0) : v[i];
      });
    }
    // last two rows (or the only one)
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      if (d >= 2) {
        diag(m, d - 2) = W[(d - 2) * d + d - 2];
        off(m, d - 2) = W[(d - 1) * d + d - 2];
        tau(m, d - 2) = T(0);
      }
      diag(m, d - 1) = W[(d - 1) * d + d - 1];
      off(m, d - 1) = T(0);
      tau(m, d - 1) = T(0);
    });
    for (int k = (d >= 2 ? d - 2 : 0); k < d; ++k)
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, d), [&](const int i) { V(m, k, i) = T(0); });
  }
};

/// y <- P_k y for k in order (Transpose: Q^T y, k = 0..d-3) or reverse (Q y).
template <class Exec, class VV, class VT, class VY>
struct ApplyQKernel {
  using T = typename VT::non_const_value_type;
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  VV V;
  VT tau;
  VY y;
  int d;
  bool transpose;
  KOKKOS_FUNCTION void operator()(const member_type& team) const {
    const int m = team.league_rank();
    for (int t = 0; t + 2 < d; ++t) {
      const int k = transpose ? t : d - 3 - t;
      const T tk = tau(m, k);
      T s = 0;
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(team, k + 1, d), [&](const int i, T& acc) { acc += V(m, k, i) * y(m, i); }, s);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k + 1, d),
                           [&](const int i) { y(m, i) -= tk * s * V(m, k, i); });
      team.team_barrier();
    }
  }
};

/// Solves T z = y in place (T = tridiag(od, dg, od), d rows) on one thread by
/// LU with partial pivoting: kband::gtsv's elimination (impl::gtsv_step),
/// pivots and info. ur, u1, u2 (d values each) take U's rows. Returns 0, or
/// the 1-based row of the first zero or non-finite pivot.
template <class T>
KOKKOS_INLINE_FUNCTION int tridiagonal_lu_solve(const int d, const T* dg, const T* od, T* y, T* ur, T* u1, T* u2) {
  T di = dg[0], dui = d > 1 ? od[0] : T(0), bi = y[0];
  int bad = 0;
  for (int j = 1; j < d; ++j) {
    const GTSVRow<T> r = gtsv_step(di, dui, bi, od[j - 1], dg[j], j < d - 1 ? od[j] : T(0), y[j]);
    bad = (bad == 0 && !usable_pivot(r.piv)) ? j : bad;
    ur[j - 1] = r.rp;
    u1[j - 1] = r.u1;
    u2[j - 1] = r.u2;
    y[j - 1] = r.y;
  }
  bad = (bad == 0 && !usable_pivot(di)) ? d : bad;
  T x1 = bi / di, x2 = T(0);
  y[d - 1] = x1;
  for (int j = d - 2; j >= 0; --j) {
    const T xj = (y[j] - u1[j] * x1 - u2[j] * x2) * ur[j];
    x2 = x1;
    x1 = xj;
    y[j] = xj;
  }
  return bad;
}

/// solve_symmetric in one kernel (the Pivoted T solve). A team per matrix
/// reduces A to T in team scratch with householder_step, as tridiagonalize
/// does, and applies each reflector to b as it is formed (Q^T b); v_k stays
/// in row k of the working copy. One thread then solves T z = Q^T b by LU with
/// partial pivoting (kband::gtsv's elimination, pivots and info), and the
/// team applies Q to z. A matrix and its b are read once and x is written
/// once: no workspace and no other launch.
template <class Exec, class VA, class VB, class VX, class Info>
struct SymmetricSolveKernel {
  using T = typename VX::non_const_value_type;
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  VA A;
  VB b;
  VX x;
  Info info;
  int d;
  int level;
  T nan;

  /// the working copy of A, then u, p, y, tau, diag, offdiag and three
  /// arrays of U (1/pivot, u1, u2), and a flag
  KOKKOS_INLINE_FUNCTION static size_t scratch_bytes(int d) {
    return (static_cast<size_t>(d) * d + 10 * static_cast<size_t>(d) + 8) * sizeof(T);
  }

  KOKKOS_FUNCTION void operator()(const member_type& team) const {
    const int m = team.league_rank();
    T* W = static_cast<T*>(team.team_scratch(level).get_shmem(scratch_bytes(d)));
    T* u = W + static_cast<size_t>(d) * d;
    T* p = u + d;
    T* y = p + d;
    T* tau = y + d;
    T* dg = tau + d;
    T* od = dg + d;
    T* ur = od + d;  // 1/pivot
    T* u1 = ur + d;
    T* u2 = u1 + d;
    T* flag = u2 + d;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, d * d), [&](const int ij) {
      W[ij] = A(m, ij / d, ij % d);
    });
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, d), [&](const int i) { y[i] = b(m, i); });
    team.team_barrier();
    for (int k = 0; k + 2 < d; ++k) {
      T tkk, tk1k, tk;
      householder_step(team, W, d, k, u, p, y, tkk, tk1k, tk);
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        dg[k] = tkk;
        od[k] = tk1k;
        tau[k] = tk;
      });
    }
    team.team_barrier();
    // the last two rows of T, then T z = y by LU with partial pivoting
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      if (d >= 2) {
        dg[d - 2] = W[(d - 2) * d + d - 2];
        od[d - 2] = W[(d - 1) * d + d - 2];
      }
      dg[d - 1] = W[(d - 1) * d + d - 1];
      const int bad = tridiagonal_lu_solve(d, dg, od, y, ur, u1, u2);
      info(m) = bad;
      flag[0] = bad != 0 ? T(1) : T(0);
    });
    team.team_barrier();
    // x = Q z = P_0 (P_1 (... P_{d-3} z))
    for (int k = d - 3; k >= 0; --k) {
      const T t = tau[k];
      if (t == T(0)) continue;
      const int k1 = k + 1, len = d - k1;
      const T* v = W + static_cast<size_t>(k) * d;
      T vz = 0;
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(team, len), [&](const int i, T& s) { s += v[k1 + i] * y[k1 + i]; }, vz);
      const T g = vz * t;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, len), [&](const int i) { y[k1 + i] -= g * v[k1 + i]; });
      team.team_barrier();
    }
    const bool failed = flag[0] != T(0);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, d), [&](const int i) { x(m, i) = failed ? nan : y[i]; });
  }
};

/// A compile-time int that converts to int on every backend.
template <int K>
struct IntC {
  static constexpr int value = K;
  KOKKOS_INLINE_FUNCTION constexpr operator int() const { return K; }
};

/// Calls f(j) for j = J0..N-1: with Unroll, j is an IntC<j>, so that f may
/// index register arrays with it; else a plain loop of ints.
template <int J0, bool Unroll, class F, int... K>
KOKKOS_FORCEINLINE_FUNCTION void static_for_impl(F& f, std::integer_sequence<int, K...>) {
  (f(IntC<J0 + K>{}), ...);
}
template <int N, bool Unroll, int J0 = 0, class F>
KOKKOS_FORCEINLINE_FUNCTION void static_for(F&& f) {
  if constexpr (Unroll) {
    static_for_impl<J0, Unroll>(f, std::make_integer_sequence<int, N - J0>{});
  } else {
    for (int j = J0; j < N; ++j) f(j);
  }
}

/// solve_symmetric with the matrix in registers (Variant::Registers; d <= D).
/// A team of D / R threads of G vector lanes per matrix. Thread t holds rows
/// t, t + D/R, ... of the working copy (R rows; on GPUs R = 1), and its lane
/// c the columns c, c + G, c + 2G, ... of them: C = D / G values a row a
/// lane, in registers (on hosts G = 1 and R = D: a team of one thread holds
/// the matrix). Rows and columns d..D-1 are the identity, which no reflector
/// touches. Step k is householder_step's, led by row k (the pivot row): as
/// the trailing block is symmetric, x = A(k+1:, k) is row k past k, so row
/// k's thread alone forms |x|^2 (a lane sum) and the reflector, puts u and
/// 1/H in team scratch (barrier), each row forms p from its lanes' partial
/// sums and puts p_i in team scratch, u.p and u.y are summed over the team
/// (team_pair_sum: on GPUs warp shuffles and a barrier), and each row below k
/// updates its columns as W22 - (p - 2K u) u^T - u p^T (K = u.p / 2H). u and
/// p have two buffers each, alternating with k, so a step takes two
/// barriers, and no thread picks a column out of its registers; a lane reads
/// u and p in pairs of columns.
/// Row k is not touched again: it keeps v_k (u past k but for u_{k+1}, which
/// its thread keeps). The T solve is SymmetricSolveKernel's
/// (tridiagonal_lu_solve, one thread). Q is applied to z (z_i on row i) by
/// blocks of NB reflectors, with no team reduction: the block's pivot rows
/// put their v_k and every row its z_i in team scratch (barrier), the team
/// forms v.z for each reflector and v.v for each pair of them, a thread each
/// (barrier), and every row runs the block's recurrence for its z_i. Reads A
/// once (column i for row i, the same for a symmetric A, coalesced for
/// LayoutRight) and writes x once. The loop over k runs at run time and the
/// loops over a lane's C columns are unrolled on GPUs, in four phases whose
/// column loops start at the lane's first column past D/4, D/2 and 3D/4 (and
/// test against k only their first D/4 columns). (With k unrolled too, D = 32
/// ran no faster than the Scratch kernel; its PTX took 0.9 MB.) H100, double,
/// ns a matrix element, d = 16 / 32 / 64 / 96 / 128: 0.030 / 0.026 / 0.043 /
/// 0.064 / 0.105 (D = 16 / 32 / 64 / 96 / 128); with a Kokkos team reduction
/// a step, Kokkos' vector reductions and d = 96 on D = 128: 0.047 / 0.032 /
/// 0.053 / 0.256 / 0.191 (8859e36), and with one a reflector in the Q pass
/// too and no pairs 0.062 / 0.043 / 0.068 / 0.319 / 0.236 (a3d5069; without
/// its Q pass 0.040 / 0.028 / 0.045 / 0.264 / 0.192). Tried and slower
/// (97cccb2, with the Kokkos reductions): the next pivot row putting its x
/// in team scratch and forming |x|^2 as it updates its row, so that a step
/// starts with the reflector (d = 16 / 64 / 96 / 128: 0.051 / 0.058 / 0.277
/// / 0.204; every row's update then carries the pivot's stores and sums).
template <class Exec, class VA, class VB, class VX, class Info, int D, int G, int R>
struct SymmetricSolveRegisters {
  using T = typename VX::non_const_value_type;
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  static constexpr bool unroll = is_device_exec<Exec>::value;
  static constexpr int team_size = D / R;
  static constexpr int lanes = G;
  static constexpr int C = D / G;  // columns a lane holds of each of its rows
  static_assert(D % (4 * G) == 0, "SymmetricSolveRegisters: a lane's columns split into four phases");
  VA A;
  VB b;
  VX x;
  Info info;
  int d;
  T nan;

  /// row[s] for a slot s known at run time: a select per slot on GPUs, so
  /// that the row stays in registers
  KOKKOS_FORCEINLINE_FUNCTION static T slot(const T (&row)[C], const int s) {
    T v = 0;
    static_for<C, unroll>([&](auto sc) {
      if (static_cast<int>(sc) == s) v = row[static_cast<int>(sc)];
    });
    return v;
  }

  /// The sum over a row's G lanes of each lane's v, on every lane.
  KOKKOS_FORCEINLINE_FUNCTION static T lane_sum(const member_type& team, const T v) {
    return impl::lane_sum<G>(team, v);
  }

  /// Entry (row, j) of a row this lane (c) holds: column j from the lane that
  /// holds it, on every lane of the row.
  KOKKOS_FORCEINLINE_FUNCTION static T entry(const member_type& team, const T (&row)[C], const int c, const int j) {
    const T v = slot(row, j / G);
    return lane_sum(team, c == j % G ? v : T(0));
  }

  /// Reflectors a block of the Q z pass
  static constexpr int NB = 8;

  /// u and q are kept lane by lane: column j at pos(j) = (j % G) CP + j / G,
  /// so that a lane reads its columns in pairs (CP = C, padded by two values
  /// for G > 1 so that the lanes' pairs fall in different banks)
  static constexpr int CP = C + (G > 1 ? 2 : 0);
  static constexpr int BU = G * CP;  // values of a u or q buffer
  KOKKOS_FORCEINLINE_FUNCTION static int pos(const int j) { return G == 1 ? j : (j % G) * CP + j / G; }
  using Pair = impl::Pair<T>;
  /// Row stride of a Q block's buffer (NB reflectors and z): even, and rows
  /// in different banks
  static constexpr int DS = D + 2;
  /// Dot products of a Q block: NB a_q and NB (NB - 1) / 2 G_qp
  static constexpr int NG = NB * (NB + 1) / 2;
  /// Values of team_pair_sum's buffer
  static constexpr int NS = team_pair_sum_scratch(D / R * G);

  /// u and p (two buffers each), diag, offdiag, z, U's three rows, tau, two
  /// Q blocks, their dot products, the step's 1/H (two buffers), flag (two,
  /// to keep pairs aligned), team_pair_sum's buffer, and room to align the
  /// start to a pair
  KOKKOS_INLINE_FUNCTION static constexpr size_t scratch_bytes() {
    return (4 * BU + 7 * D + 2 * (NB + 1) * DS + NG + 4 + NS + 2) * sizeof(T);
  }

  KOKKOS_FUNCTION void operator()(const member_type& team) const {
    const int m = team.league_rank(), t = team.team_rank();
    // this thread's vector lane: each lane runs the range once on GPUs, and
    // hosts have one lane (G = 1)
    int c = 0;
    if constexpr (G > 1) Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, G), [&](const int l) { c = l; });
    T* us = static_cast<T*>(team.team_scratch(0).get_shmem_aligned(scratch_bytes(), 2 * sizeof(T)));
    T* qs = us + 2 * BU;
    T* dg = qs + 2 * BU;
    T* od = dg + D;
    T* zs = od + D;
    T* ur = zs + D;
    T* u1 = ur + D;
    T* u2 = u1 + D;
    T* tau = u2 + D;
    T* vb = tau + D;
    T* rhs = vb + 2 * (NB + 1) * DS + NG;  // two entries, after the Q blocks' dot products
    T* flag = rhs + 2;
    T* ls = flag + 2;  // team_pair_sum's buffer
    T w[R][C];
    T y[R], myu0[R];  // u_{k+1} of the step k whose pivot row a row is
    for (int r = 0; r < R; ++r) {
      const int i = t + r * team_size;
      static_for<C, unroll>([&](auto sc) {
        const int s = sc, j = c + G * s;
        w[r][s] = (i < d && j < d) ? T(A(m, j, i)) : (i == j ? T(1) : T(0));
      });
      y[r] = i < d ? T(b(m, i)) : T(0);
      myu0[r] = 0;
    }
    // Step k: x = A(k+1:, k) is row k's part past k (the trailing block is
    // symmetric), so row k's thread alone forms |x|^2 and the reflector and
    // puts u, tau and 1/H in team scratch; v_k = u stays in row k (with
    // u_{k+1} kept by its thread). The column loops of steps k >= J0 start at
    // slot J0 / G (four phases of D/4 steps).
    const auto step = [&](auto j0c, const int k) {
      constexpr int S0 = decltype(j0c)::value / G;
      T* uk = us + (k & 1) * BU;
      T* qk = qs + (k & 1) * BU;
      T* ul = uk + c * CP;  // this lane's columns
      T* ql = qk + c * CP;
      for (int r = 0; r < R; ++r) {
        if (t + r * team_size != k) continue;
        T s2c[4] = {0, 0, 0, 0};
        static_for<C / 2, unroll, S0 / 2>([&](auto sc) {
          const int s = 2 * sc, j = c + G * s;
          // columns past the phase's first D/4 lie past k
          const bool win = static_cast<int>(sc) * 2 < S0 + D / (4 * G);
          const T x0j = !win || j > k ? w[r][s] : T(0);
          const T x1j = !win || j + G > k ? w[r][s + 1] : T(0);
          reinterpret_cast<Pair*>(ul)[sc] = Pair{x0j, x1j};
          s2c[(sc & 1) * 2] += x0j * x0j;
          s2c[(sc & 1) * 2 + 1] += x1j * x1j;
        });
        const T s2 = lane_sum(team, (s2c[0] + s2c[1]) + (s2c[2] + s2c[3]));
        const T x0 = lane_sum(team, c == (k + 1) % G ? uk[pos(k + 1)] : T(0));
        const Reflector<T> ref = reflector(x0, s2);
        if (c == (k + 1) % G) uk[pos(k + 1)] = ref.u0;
        myu0[r] = ref.u0;
        if (c == 0) {
          od[k] = ref.skip ? x0 : ref.alpha;
          tau[k] = ref.rH;
          rhs[k & 1] = ref.rH;
        }
      }
      team.team_barrier();
      const T rH = rhs[k & 1];
      if (rH == T(0)) return;  // x is already a multiple of e1: P_k = I
      // p = W22 u / H on the rows below k, into team scratch; u.p (for K =
      // u.p / (2H)) and u.y summed over the team (a barrier)
      T p[R], ui[R];
      T sp = 0, sy = 0;
      for (int r = 0; r < R; ++r) {
        const int i = t + r * team_size;
        T acc[4] = {0, 0, 0, 0};  // four chains of FMAs
        static_for<C / 2, unroll, S0 / 2>([&](auto sc) {
          const int s = 2 * sc;
          const Pair v = reinterpret_cast<const Pair*>(ul)[sc];
          acc[(sc & 1) * 2] += w[r][s] * v.a;
          acc[(sc & 1) * 2 + 1] += w[r][s + 1] * v.b;
        });
        const T pi = lane_sum(team, (acc[0] + acc[1]) + (acc[2] + acc[3]));
        p[r] = i > k ? pi * rH : T(0);
        ui[r] = i > k ? uk[pos(i)] : T(0);
        if (c == 0) {
          qk[pos(i)] = p[r];
          sp += ui[r] * p[r];  // a row's terms on its first lane
          sy += ui[r] * y[r];
        }
      }
      team_pair_sum<team_size * G, G>(team, sp, sy, ls);
      const T K2 = sp * rH, g = sy * rH;  // 2K and g
      for (int r = 0; r < R; ++r) {
        p[r] -= K2 * ui[r];  // p - 2K u: W22 <- W22 - (p - 2K u) u^T - u p^T
        y[r] -= g * ui[r];
      }
      // W22 <- W22 - q u^T - u q^T with q = p - K u (u and p are 0 up to k)
      for (int r = 0; r < R; ++r) {
        const int i = t + r * team_size;
        if (i <= k) continue;
        static_for<C / 2, unroll, S0 / 2>([&](auto sc) {
          const int s = 2 * sc;
          const Pair u2 = reinterpret_cast<const Pair*>(ul)[sc], p2 = reinterpret_cast<const Pair*>(ql)[sc];
          w[r][s] = w[r][s] - p[r] * u2.a - ui[r] * p2.a;  // two FMAs
          w[r][s + 1] = w[r][s + 1] - p[r] * u2.b - ui[r] * p2.b;
        });
      }
    };
    int k = 0;
    const auto phase = [&](auto pc) {
      constexpr int P = decltype(pc)::value;
      const int kend = P == 3 ? d - 2 : ((P + 1) * D / 4 < d - 2 ? (P + 1) * D / 4 : d - 2);
      for (; k < kend; ++k) step(IntC<P * D / 4>{}, k);
    };
    phase(IntC<0>{});
    phase(IntC<1>{});
    phase(IntC<2>{});
    phase(IntC<3>{});
    // T's diagonal and last off-diagonal entry, and Q^T b, into scratch
    // (every lane of every row takes part in the lane sums)
    for (int r = 0; r < R; ++r) {
      const int i = t + r * team_size;
      const T di = entry(team, w[r], c, i);
      const T oi = entry(team, w[r], c, i > 0 ? i - 1 : 0);
      if (c == 0) {
        zs[i] = y[r];  // 0 past d
        if (i < d) dg[i] = di;
        if (i == d - 1 && d >= 2) od[i - 1] = oi;
      }
    }
    team.team_barrier();
    if (t == 0 && c == 0) {
      const int bad = tridiagonal_lu_solve(d, dg, od, zs, ur, u1, u2);
      info(m) = bad;
      flag[0] = bad != 0 ? T(1) : T(0);
    }
    team.team_barrier();
    // x = Q z = P_0 (P_1 (... P_{d-3} z)), z_i kept by row i, by blocks of NB
    // reflectors (v_k is row k past k, with u_{k+1} in place of x_0)
    for (int r = 0; r < R; ++r) {
      const int i = t + r * team_size;
      y[r] = zs[i];
    }
    // A block's reflectors P_{k_q}, k_q = kb - q, q = 0..nb-1, applied in
    // turn: z_{q+1} = z_q - tau_q s_q v_q with s_q = v_q.z_q = v_q.z_0 -
    // sum_{p<q} tau_p s_p v_q.v_p. The pivot rows put v_q in rows q of a
    // buffer and every row its z_i in row NB (barrier); the team forms the
    // nb + nb (nb - 1) / 2 dot products a_q = v_q.z and G_qp = v_q.v_p (p <
    // q), a thread (lane) each (barrier); every row then runs the recurrence
    // for tau_q s_q and updates its z_i.
    T* gs = vb + 2 * (NB + 1) * DS;  // a_q at q, G_qp at NB + q (q - 1) / 2 + p
    for (int kb = d - 3, blk = 0; kb >= 0; kb -= NB, ++blk) {
      T* vbk = vb + (blk & 1) * (NB + 1) * DS;
      const int nb = kb + 1 < NB ? kb + 1 : NB;  // reflectors kb, kb-1, ..., kb-nb+1
      for (int r = 0; r < R; ++r) {
        const int i = t + r * team_size;
        if (c == 0) vbk[NB * DS + i] = y[r];
        const int q = kb - i;
        if (q < 0 || q >= nb) continue;
        const int kk = kb - q;
        static_for<C, unroll>([&](auto sc) {
          const int s = sc, j = c + G * s;
          vbk[q * DS + j] = j == kk + 1 ? myu0[r] : (j > kk ? w[r][s] : T(0));
        });
      }
      team.team_barrier();
      const int ne = nb + nb * (nb - 1) / 2, j0 = kb - nb + 2;  // every v_q is 0 before j0
      for (int e = t * G + c; e < ne; e += team_size * G) {
        int q = e, p = NB, slot = e;  // a_q: row q against z (row NB)
        if (e >= nb) {
          p = e - nb;
          for (q = 1; p >= q; ++q) p -= q;
          slot = NB + q * (q - 1) / 2 + p;
        }
        const T* vq = vbk + q * DS;
        const T* vp = vbk + p * DS;
        T acc[4] = {0, 0, 0, 0};
        int j = j0;
        for (; j + 3 < d; j += 4) {
          acc[0] += vq[j] * vp[j];
          acc[1] += vq[j + 1] * vp[j + 1];
          acc[2] += vq[j + 2] * vp[j + 2];
          acc[3] += vq[j + 3] * vp[j + 3];
        }
        for (; j < d; ++j) acc[0] += vq[j] * vp[j];
        gs[slot] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
      }
      team.team_barrier();
      T ts[NB] = {};  // tau_q s_q
      static_for<NB, unroll>([&](auto qc) {
        const int q = qc;
        T v = gs[q];
        static_for<NB, unroll>([&](auto pc) {
          const int p = pc;
          if (p < q) v -= ts[p] * gs[NB + q * (q - 1) / 2 + p];
        });
        ts[q] = q < nb ? tau[kb - q] * v : T(0);
      });
      for (int r = 0; r < R; ++r) {
        const int i = t + r * team_size;
        static_for<NB, unroll>([&](auto qc) {
          const int q = qc;
          if (q < nb) y[r] -= ts[q] * vbk[q * DS + i];  // rows q >= nb: not written (may be NaN)
        });
      }
    }
    const bool failed = flag[0] != T(0);
    for (int r = 0; r < R; ++r) {
      const int i = t + r * team_size;
      if (i < d && c == 0) x(m, i) = failed ? nan : y[r];
    }
  }
};

/// Threads per team of the Scratch solve_symmetric kernel on GPUs (H100,
/// double, kband-bench --dense-d 32,64,128 --team-size T, time over
/// cuBLAS getrf+getrsBatched in the same run: d = 32: 2.32 at 32 threads,
/// 3.23 at 64, 5.42 at 128; d = 64: 2.97-2.98 at 64 and 128, 4.00 at 32;
/// with the column-wise rank-2 update, time over 256 threads for d = 128:
/// 512 threads 0.76, 128 threads 1.15, 64 threads 1.52).
template <class Exec>
int symmetric_solve_team_size(int d) {
  if (!is_device_exec<Exec>::value) return 1;
  return d >= 128 ? 512 : (d > 32 ? 128 : 32);
}

/// The largest d of solve_symmetric's Registers variant (D = 16, 32, 64, 96
/// or 128; on GPUs a matrix row takes one thread of G lanes).
constexpr int symmetric_registers_max_d = 128;

/// Auto: Registers on GPUs for d <= 16 and where the padding to D = 32, 64,
/// 96 or 128 is at most a quarter of D (H100, time of Registers over Scratch:
/// d = 7: 0.96, 16: 0.81, 20: 1.17, 32: 0.74, 48: 0.93, 50: 0.95, 64: 0.62;
/// D = 96: d = 72: 0.57, 80: 0.32, 88: 0.24, 96: 0.18; D = 128, where the
/// Scratch kernel's matrix no longer fits on chip: 128: 0.62 (and d = 96 at
/// D = 128: 0.57 of Scratch, 3.2x D = 96's time); with earlier kernels d =
/// 112: 0.68).
template <class Exec>
bool symmetric_registers_auto(int d) {
  return is_device_exec<Exec>::value &&
         (d <= 16 || (d >= 24 && d <= 32) || (d >= 48 && d <= 64) || (d >= 72 && d <= symmetric_registers_max_d));
}

/// Vector lanes a matrix row takes on GPUs (G): C = D / G values a lane
/// (H100, double, ns a matrix element: D = 32 at G = 1 / 2: 0.049 / 0.10 with
/// 75e7992's kernel; with 429e2c9's shuffle lane sums: D = 16 at G = 1 / 2:
/// 0.039 / 0.031 (a team of 16 threads fills half a warp), D = 32: 0.029 /
/// 0.037, D = 64: 0.047 / 0.051, D = 96: 0.071 / 0.071; D = 128 at G = 2 /
/// 4: 0.113 / 0.138). A double row of D = 128 takes 256 registers: two
/// lanes.
constexpr int symmetric_registers_lanes(int D) { return D >= 128 || D <= 16 ? 2 : 1; }

/// Teams an SM must hold (launch bounds) of the Registers variant: the
/// kernel is bound by latency, so residency pays up to where spills cost more
/// (H100, double, 2^24 matrix elements, time over the Scratch kernel: D = 32
/// at 16 / 20 / 24 teams 0.70 / 0.75 / 0.79, unbounded (174 registers) 1.32
/// before the column loops started at J0; D = 16 at 24 / 32 teams 0.78 /
/// 0.86; D = 64 at 4 / 6 / 8 teams 0.64 / 0.60 / 0.62 with an earlier
/// kernel; with the update in two FMAs a column, whose 168 registers at 6
/// teams spill 844 bytes, 4 teams (254 registers, no spills) take 0.0540 ns a
/// matrix element against 0.0553-0.0556). D = 16 at 16 / 20 / 24 teams after
/// fa43436 (128 / 96 / 80 registers, the last with 192 bytes of spill loads):
/// 0.040 / 0.037 / 0.040; at G = 2 (a warp a team) and 24 / 32 teams 0.032
/// / 0.031. D = 96 at two teams (255 registers, 492 bytes of spill loads)
/// against one (G = 2): 0.58x the time. D = 128 holds 128 KB of matrix: one
/// team an SM.
constexpr unsigned symmetric_registers_min_blocks(int D) {
  return D <= 16 ? 32 : (D <= 32 ? 16 : (D <= 64 ? 4 : (D <= 96 ? 2 : 1)));
}

/// Launches SymmetricSolveRegisters for d <= D: on GPUs a team of D threads
/// of G lanes with launch bounds of MinBlocks teams an SM, on hosts a team of
/// one thread.
template <int D, int G = symmetric_registers_lanes(D), unsigned MinBlocks = symmetric_registers_min_blocks(D),
          class Exec, class VA, class VB, class VX, class Info>
void launch_symmetric_registers(const char* fn, const Exec& exec, const VA& A, const VB& b, const VX& x,
                                const Info& info) {
  using T = typename VX::non_const_value_type;
  constexpr bool dev = is_device_exec<Exec>::value;
  constexpr int R = dev ? 1 : D, L = dev ? G : 1;
  using K = SymmetricSolveRegisters<Exec, VA, VB, VX, Info, D, L, R>;
  const int nmat = static_cast<int>(A.extent(0)), d = static_cast<int>(A.extent(1));
  const K k{A, b, x, info, d, std::numeric_limits<T>::quiet_NaN()};
  Team<Exec, Kokkos::LaunchBounds<K::team_size * L, MinBlocks>> policy(exec, nmat, K::team_size, L);
  policy.set_scratch_size(0, Kokkos::PerTeam(K::scratch_bytes()));
  const int tmax = policy.team_size_max(k, Kokkos::ParallelForTag());
  require(K::team_size <= tmax && policy.impl_vector_length() == L,
          concat(fn, ": Variant::Registers needs teams of ", K::team_size, " threads of ", L, " lanes for d=", d,
                 "; this backend offers ", tmax, " threads of ", policy.impl_vector_length(), " lanes"));
  Kokkos::parallel_for(fn, policy, k);
}

/// Scratch level of a team kernel whose working copy of a d x d matrix takes
/// `bytes`: on chip when it fits, else the backend's level 1; throws when
/// neither holds it.
template <class Exec>
int matrix_scratch_level(const char* fn, int d, size_t bytes) {
  const int level = bytes <= static_cast<size_t>(Kokkos::TeamPolicy<Exec>::scratch_size_max(0)) ? 0 : 1;
  require(bytes <= static_cast<size_t>(Kokkos::TeamPolicy<Exec>::scratch_size_max(level)),
          concat(fn, ": d=", d, " needs ", bytes, " bytes of team scratch, more than the backend offers"));
  return level;
}

/// A batch of square matrices, d >= 1.
template <class VA>
void check_square(const char* fn, const VA& A) {
  const int d = static_cast<int>(A.extent(1));
  require(d >= 1, concat(fn, ": d=", d, ", the minimum is 1"));
  require(static_cast<int>(A.extent(2)) == d,
          concat(fn, ": argument 'A' is ", A.extent(1), "x", A.extent(2), ", not square"));
}

/// Threads per team of tridiagonalize on GPUs (H100, d = 128: 512 threads
/// took 0.62x the time of 256).
template <class Exec>
int householder_team_size(int d) {
  if (!is_device_exec<Exec>::value) return 1;
  return d >= 128 ? 512 : (d >= 32 ? 128 : 32);
}

}  // namespace impl

template <class Exec, class VA, class VD, class VE, class VV, class VT>
void tridiagonalize(const Exec& exec, const VA& A, const VD& diag, const VE& offdiag, const VV& V,
                    const VT& tau) {
  const char* fn = "kband::tridiagonalize";
  impl::ProfilingRegion region(fn);
  static_assert(VA::rank == 3 && VV::rank == 3 && VD::rank == 2 && VE::rank == 2 && VT::rank == 2,
                "kband::tridiagonalize: A, V are (nmat, d, d); diag, offdiag, tau are (nmat, d)");
  const int nmat = static_cast<int>(A.extent(0)), d = static_cast<int>(A.extent(1));
  impl::check_square(fn, A);
  auto chk2 = [&](const char* name, size_t e0, size_t e1) {
    impl::require(static_cast<int>(e0) == nmat && static_cast<int>(e1) == d,
                  impl::concat(fn, ": argument '", name, "' has extents (", e0, ", ", e1, "), expected (", nmat,
                               ", ", d, ")"));
  };
  chk2("diag", diag.extent(0), diag.extent(1));
  chk2("offdiag", offdiag.extent(0), offdiag.extent(1));
  chk2("tau", tau.extent(0), tau.extent(1));
  impl::require(static_cast<int>(V.extent(0)) == nmat && static_cast<int>(V.extent(1)) == d &&
                    static_cast<int>(V.extent(2)) == d,
                impl::concat(fn, ": argument 'V' must be (", nmat, ", ", d, ", ", d, ")"));
  if (nmat == 0) return;
  using K = impl::HouseholderKernel<Exec, VA, VD, VE, VV, VT>;
  const size_t bytes = K::scratch_bytes(d);
  const int level = impl::matrix_scratch_level<Exec>(fn, d, bytes);
  impl::Team<Exec> policy(exec, nmat, impl::householder_team_size<Exec>(d));
  policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
  Kokkos::parallel_for(fn, policy, K{A, diag, offdiag, V, tau, d, level});
}

/// Applies Q^T (transpose = true) or Q to every row y(m, :) in place.
template <class Exec, class VV, class VT, class VY>
void apply_q(const Exec& exec, const VV& V, const VT& tau, const VY& y, bool transpose) {
  impl::ProfilingRegion region("kband::apply_q");
  const int nmat = static_cast<int>(V.extent(0)), d = static_cast<int>(V.extent(1));
  impl::require(static_cast<int>(y.extent(0)) == nmat && static_cast<int>(y.extent(1)) == d,
                impl::concat("kband::apply_q: argument 'y' has extents (", y.extent(0), ", ", y.extent(1),
                             "), expected (", nmat, ", ", d, ")"));
  if (nmat == 0 || d < 3) return;
  const int team = impl::is_device_exec<Exec>::value ? 64 : 1;
  Kokkos::parallel_for("kband::apply_q", impl::Team<Exec>(exec, nmat, team),
                       impl::ApplyQKernel<Exec, VV, VT, VY>{V, tau, y, d, transpose});
}

/// How solve_symmetric solves T y = Q^T b: Pivoted (LU with partial pivoting,
/// kband::gtsv; right for any nonsingular symmetric A, indefinite ones
/// included) or PCR (kband::pcr, no pivoting: for SPD or diagonally dominant A,
/// whose T is SPD; an indefinite A can give a zero reduced diagonal, e.g.
/// A = [[0,1],[1,0]]).
enum class SymmetricTSolve { Pivoted, PCR };

/// x(m,:) = A(m)^-1 b(m,:) for dense symmetric A (nmat, d, d) via Householder
/// tridiagonalisation. info(m) > 0 when the tridiagonal solve met a zero or
/// non-finite pivot (A singular to working precision, or indefinite with PCR);
/// x(m,:) is then NaN. Pivoted (the default) runs as one kernel and needs no
/// workspace; PCR composes tridiagonalize, apply_q and pcr and allocates its
/// workspace per call. opt.variant picks the Pivoted kernel:
///  * Registers (d <= 128): a team of D = 16, 32, 64, 96 or 128 threads (the
///    first of these >= d) per matrix on GPUs, a matrix row a thread in
///    registers (D = 16 and 128: a thread of two vector lanes)
///    (impl::SymmetricSolveRegisters; on hosts a one-thread team holds the
///    matrix);
///  * Scratch: the matrix in team scratch (impl::SymmetricSolveKernel), any d;
///    opt.team_size sets its threads per team on GPUs (0 = kband's choice);
///  * Auto (default): Registers on GPUs for d <= 16, 24..32, 48..64 and
///    72..128, else Scratch.
/// Global and Recompute throw, and the PCR T solve takes Auto only.
template <class Exec, class VA, class VB, class VX, class Info>
void solve_symmetric(const Exec& exec, const VA& A, const VB& b, const VX& x, const Info& info,
                     SymmetricTSolve tsolve = SymmetricTSolve::Pivoted, const SolveOptions& opt = {}) {
  const char* fn = "kband::solve_symmetric";
  impl::ProfilingRegion region(fn);
  using T = typename VX::non_const_value_type;
  using Mem = typename VX::memory_space;
  static_assert(VB::rank == 2 && VX::rank == 2, "kband::solve_symmetric: b and x are (nmat, d)");
  static_assert(VA::rank == 3, "kband::solve_symmetric: A is (nmat, d, d)");
  const int nmat = static_cast<int>(A.extent(0)), d = static_cast<int>(A.extent(1));
  impl::check_square(fn, A);
  impl::require(static_cast<int>(b.extent(0)) == nmat && static_cast<int>(b.extent(1)) == d,
                impl::concat(fn, ": argument 'b' has extents (", b.extent(0), ", ", b.extent(1), "), expected (",
                             nmat, ", ", d, ")"));
  impl::require(static_cast<int>(x.extent(0)) == nmat && static_cast<int>(x.extent(1)) == d,
                impl::concat(fn, ": argument 'x' has extents (", x.extent(0), ", ", x.extent(1), "), expected (",
                             nmat, ", ", d, ")"));
  impl::check_info(fn, info, nmat);
  const Variant v = opt.variant;
  if (tsolve == SymmetricTSolve::Pivoted) {
    impl::require(v == Variant::Auto || v == Variant::Scratch || v == Variant::Registers,
                  impl::concat(fn, ": Variant::", variant_name(v),
                               " is not offered (Auto, Scratch or Registers)"));
    impl::require(v != Variant::Registers || d <= impl::symmetric_registers_max_d,
                  impl::concat(fn, ": Variant::Registers serves d <= ", impl::symmetric_registers_max_d, ", not d=", d));
  } else {
    impl::require(v == Variant::Auto, impl::concat(fn, ": the PCR T solve takes Variant::Auto only, not Variant::",
                                                   variant_name(v)));
  }
  if (nmat == 0) return;
  if (tsolve == SymmetricTSolve::Pivoted) {
    if (v == Variant::Registers || (v == Variant::Auto && impl::symmetric_registers_auto<Exec>(d))) {
      if (d <= 16)
        impl::launch_symmetric_registers<16>(fn, exec, A, b, x, info);
      else if (d <= 32)
        impl::launch_symmetric_registers<32>(fn, exec, A, b, x, info);
      else if (d <= 64)
        impl::launch_symmetric_registers<64>(fn, exec, A, b, x, info);
      else if (d <= 96)
        impl::launch_symmetric_registers<96>(fn, exec, A, b, x, info);
      else
        impl::launch_symmetric_registers<128>(fn, exec, A, b, x, info);
      return;
    }
    using K = impl::SymmetricSolveKernel<Exec, VA, VB, VX, Info>;
    const size_t bytes = K::scratch_bytes(d);
    const int level = impl::matrix_scratch_level<Exec>(fn, d, bytes);
    const int ts = impl::is_device_exec<Exec>::value && opt.team_size > 0 ? opt.team_size
                                                                            : impl::symmetric_solve_team_size<Exec>(d);
    impl::Team<Exec> policy(exec, nmat, ts);
    policy.set_scratch_size(level, Kokkos::PerTeam(bytes));
    Kokkos::parallel_for(fn, policy, K{A, b, x, info, d, level, std::numeric_limits<T>::quiet_NaN()});
    return;
  }
  using V2 = Kokkos::View<T**, Kokkos::LayoutRight, Mem>;
  const auto noinit = [&](const char* l) { return Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string(l)); };
  V2 diag(noinit("kband::sym::diag"), nmat, d), off(noinit("kband::sym::off"), nmat, d),
      tau(noinit("kband::sym::tau"), nmat, d), sub(noinit("kband::sym::sub"), nmat, d), y(noinit("kband::sym::y"), nmat, d);
  Kokkos::View<T***, Kokkos::LayoutRight, Mem> V(noinit("kband::sym::V"), nmat, d, d);
  tridiagonalize(exec, A, diag, off, V, tau);
  // sub(m, j) = T(j, j-1) = off(m, j-1); y = b
  Kokkos::parallel_for("kband::solve_symmetric::prep", impl::Range<Exec>(exec, 0, nmat * d),
                       KOKKOS_LAMBDA(const int mj) {
                         const int m = mj / d, j = mj % d;
                         sub(m, j) = j > 0 ? off(m, j - 1) : T(0);
                         y(m, j) = b(m, j);
                       });
  // the PCR T solve: the composed route
  apply_q(exec, V, tau, y, true);
  pcr(exec, sub, diag, off, y, y, info);
  apply_q(exec, V, tau, y, false);
  Kokkos::deep_copy(exec, x, y);
}

}  // namespace kband
