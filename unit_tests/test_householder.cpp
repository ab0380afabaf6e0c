// kband::tridiagonalize, kband::apply_q and kband::solve_symmetric (dense
// symmetric matrices, one team per matrix), float and double.
//
// Q = P_0 ... P_{d-3}, P_k = I - tau(m,k) v v^T, v = V(m,k,:), is formed on
// the host in long double from the returned V and tau. Bounds (Frobenius
// norms, eps = machine epsilon of T):
//   ||Q^T Q - I||_F                 <= 50 d eps
//   ||Q T Q^T - A||_F / ||A||_F     <= 50 d eps
//   apply_q: ||y' - Q^(T) y||_inf / ||y||_inf <= 50 d eps
//   solve_symmetric, against the long double dense LU reference:
//     ||x - xref||_inf / ||xref||_inf <= 50 d eps and the normwise backward
//     error ||A x - b||_inf / (||A||_inf ||x||_inf + ||b||_inf) <= 50 d eps,
//   on SPD matrices A = B B^T + d I (B uniform in [-1, 1]; kappa_2 about 2.3)
//   and symmetric indefinite A = H diag(lambda) H^T (H a product of three
//   random Householder reflectors, |lambda| uniform in [1, 4], alternating
//   signs: kappa_2 <= 4 by construction).
#include "kband_test_solvers.hpp"

namespace kband_test {
namespace {

using R = real_ref;
constexpr double kHouseC = 50;

template <class T>
double house_bound(int d) {
  return kHouseC * d * eps_of<T>();
}

/// nmat dense d x d matrices, row-major, matrix-major.
template <class T>
struct Mats {
  int nmat = 0, d = 0;
  std::vector<T> v;
  T& at(int m, int i, int j) { return v[(static_cast<size_t>(m) * d + i) * d + j]; }
  T at(int m, int i, int j) const { return v[(static_cast<size_t>(m) * d + i) * d + j]; }
};

// Decoupled: SPD with couplings removed, so that some reflectors are skipped
// (x = 0): even matrices diagonal, odd ones two blocks split at d/2.
enum class Kind { Symmetric, SPD, Indefinite, Decoupled };
const char* kind_name(Kind k) {
  return k == Kind::Symmetric ? "symmetric"
                              : (k == Kind::SPD ? "spd" : (k == Kind::Indefinite ? "indefinite" : "decoupled"));
}

template <class T>
Mats<T> make_matrices(Kind kind, int nmat, int d, std::uint64_t salt = 0) {
  Mats<T> A;
  A.nmat = nmat;
  A.d = d;
  A.v.resize(static_cast<size_t>(nmat) * d * d);
  Rng rng(mix_seed({sizeof(T), static_cast<std::uint64_t>(kind), static_cast<std::uint64_t>(nmat),
                    static_cast<std::uint64_t>(d), salt}));
  std::vector<R> M(static_cast<size_t>(d) * d);
  auto mm = [&](int i, int j) -> R& { return M[static_cast<size_t>(i) * d + j]; };
  for (int m = 0; m < nmat; ++m) {
    if (kind == Kind::Symmetric) {
      for (int i = 0; i < d; ++i)
        for (int j = 0; j <= i; ++j) mm(i, j) = mm(j, i) = rng.uniform(-1, 1);
    } else if (kind == Kind::SPD || kind == Kind::Decoupled) {
      std::vector<R> Bm(M.size());
      for (auto& e : Bm) e = rng.uniform(-1, 1);
      const int h = d / 2;  // Decoupled, odd m: rows [0, h) and [h, d) are not coupled
      for (int i = 0; i < d; ++i)
        for (int j = 0; j <= i; ++j) {
          R s = i == j ? R(d) : R(0);
          for (int k = 0; k < d; ++k) s += Bm[static_cast<size_t>(i) * d + k] * Bm[static_cast<size_t>(j) * d + k];
          const bool cut = kind == Kind::Decoupled && i != j && (m % 2 == 0 || (i < h) != (j < h));
          mm(i, j) = mm(j, i) = cut ? R(0) : s;
        }
    } else {
      std::fill(M.begin(), M.end(), R(0));
      for (int i = 0; i < d; ++i) mm(i, i) = (i % 2 ? -1 : 1) * rng.uniform(1, 4);
      std::vector<R> vv(d), w(d);
      for (int r = 0; r < 3; ++r) {  // M <- H M H, H = I - 2 v v^T, |v| = 1
        R nrm = 0;
        for (auto& e : vv) {
          e = rng.uniform(-1, 1);
          nrm += e * e;
        }
        nrm = std::sqrt(nrm);
        for (auto& e : vv) e /= nrm;
        for (int i = 0; i < d; ++i) {  // w = M v
          R s = 0;
          for (int j = 0; j < d; ++j) s += mm(i, j) * vv[j];
          w[i] = s;
        }
        R vw = 0;
        for (int i = 0; i < d; ++i) vw += vv[i] * w[i];
        // H M H = M - 2 v w^T - 2 w v^T + 4 (v.w) v v^T (M symmetric)
        for (int i = 0; i < d; ++i)
          for (int j = 0; j < d; ++j) mm(i, j) += -2 * vv[i] * w[j] - 2 * w[i] * vv[j] + 4 * vw * vv[i] * vv[j];
      }
    }
    for (int i = 0; i < d; ++i)
      for (int j = 0; j <= i; ++j) A.at(m, i, j) = A.at(m, j, i) = static_cast<T>((mm(i, j) + mm(j, i)) / 2);
  }
  return A;
}

template <class Lay, class T>
Kokkos::View<T***, Lay> upload_matrices(const Mats<T>& A) {
  Kokkos::View<T***, Lay> dv("A", A.nmat, A.d, A.d);
  auto h = Kokkos::create_mirror_view(dv);
  for (int m = 0; m < A.nmat; ++m)
    for (int i = 0; i < A.d; ++i)
      for (int j = 0; j < A.d; ++j) h(m, i, j) = A.at(m, i, j);
  Kokkos::deep_copy(dv, h);
  return dv;
}

template <class V>
auto to_host(const V& v) {
  auto h = Kokkos::create_mirror_view(v);
  Kokkos::deep_copy(h, v);
  return h;
}

template <class Lay, class T>
Kokkos::View<T**, Lay> rank2(const char* label, int nmat, int d, T fill) {
  Kokkos::View<T**, Lay> v(std::string(label), nmat, d);
  Kokkos::deep_copy(v, fill);
  return v;
}

/// Q of matrix m (row-major d x d, long double) from host copies of V and tau.
template <class HV, class HT>
std::vector<R> form_q(const HV& V, const HT& tau, int m, int d) {
  std::vector<R> Q(static_cast<size_t>(d) * d, R(0)), w(d);
  for (int i = 0; i < d; ++i) Q[static_cast<size_t>(i) * d + i] = 1;
  for (int k = 0; k + 2 < d; ++k) {  // Q <- Q P_k = Q - tau (Q v) v^T
    const R tk = tau(m, k);
    for (int i = 0; i < d; ++i) {
      R s = 0;
      for (int j = 0; j < d; ++j) s += Q[static_cast<size_t>(i) * d + j] * R(V(m, k, j));
      w[i] = s * tk;
    }
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) Q[static_cast<size_t>(i) * d + j] -= w[i] * R(V(m, k, j));
  }
  return Q;
}

template <class C>
class HouseholderTest : public ::testing::Test {};
using RealTypes = ::testing::Types<double, float>;
struct RealNames {
  template <class T>
  static std::string GetName(int) {
    return type_name(T());
  }
};
TYPED_TEST_SUITE(HouseholderTest, RealTypes, RealNames);

template <class T>
std::vector<std::pair<int, int>> house_sizes() {  // (d, nmat)
  std::vector<std::pair<int, int>> v;
  for (int d : {1, 2, 3, 4, 5, 8, 17, 32, 64, 100})
    for (int nmat : {1, 3, 7}) v.emplace_back(d, nmat);
  if (std::is_same<T, double>::value) v.emplace_back(256, 2);
  return v;
}

const char* layout_label(Kokkos::LayoutRight) { return "LayoutRight"; }
const char* layout_label(Kokkos::LayoutLeft) { return "LayoutLeft"; }

// A = Q T Q^T with Q orthogonal, the documented structure of V and tau, and
// apply_q applies Q^T and Q. Every View in layout Lay.
template <class T, class Lay>
void check_tridiagonalize(int d, int nmat) {
  Exec exec;
  const std::string what = std::string("tridiagonalize ") + type_name(T()) + " " + layout_label(Lay()) +
                           " d=" + std::to_string(d) + " nmat=" + std::to_string(nmat);
  const Mats<T> A = make_matrices<T>(Kind::Symmetric, nmat, d);
  const auto Ad = upload_matrices<Lay>(A);
  const auto diag = rank2<Lay>("diag", nmat, d, nan_value<T>()), off = rank2<Lay>("off", nmat, d, nan_value<T>()),
             tau = rank2<Lay>("tau", nmat, d, nan_value<T>());
  Kokkos::View<T***, Lay> V("V", nmat, d, d);
  Kokkos::deep_copy(V, nan_value<T>());
  kband::tridiagonalize(exec, Ad, diag, off, V, tau);
  exec.fence();
  const auto hd = to_host(diag), ho = to_host(off), ht = to_host(tau);
  const auto hV = to_host(V), hA = to_host(Ad);
  int changed = 0;
  for (int m = 0; m < nmat; ++m)
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) changed += same_bits(hA(m, i, j), A.at(m, i, j)) ? 0 : 1;
  EXPECT_EQ(changed, 0) << what << ": A modified";

  // y for apply_q: random rows
  Rng rng(mix_seed({sizeof(T), 99, static_cast<std::uint64_t>(d), static_cast<std::uint64_t>(nmat)}));
  Kokkos::View<T**, Lay> y1("y1", nmat, d), y2("y2", nmat, d);
  auto hy = Kokkos::create_mirror(y1);  // a copy also on host backends: y1 and y2 are overwritten
  for (int m = 0; m < nmat; ++m)
    for (int j = 0; j < d; ++j) hy(m, j) = static_cast<T>(rng.uniform(-1, 1));
  Kokkos::deep_copy(y1, hy);
  Kokkos::deep_copy(y2, hy);
  kband::apply_q(exec, V, tau, y1, /*transpose=*/true);
  kband::apply_q(exec, V, tau, y2, /*transpose=*/false);
  exec.fence();
  const auto hy1 = to_host(y1), hy2 = to_host(y2);

  double worst_orth = 0, worst_rec = 0, worst_apply = 0;
  const double bound = house_bound<T>(d);
  for (int m = 0; m < nmat; ++m) {
    // Structure: finite T, off(m, d-1) = 0, tau = 0 and V = 0 from row d-2 on, V(m,k,i) = 0 for i <= k.
    int bad_struct = 0;
    for (int k = 0; k < d; ++k) {
      bad_struct += std::isfinite(static_cast<double>(hd(m, k))) && std::isfinite(static_cast<double>(ho(m, k))) &&
                            std::isfinite(static_cast<double>(ht(m, k)))
                        ? 0
                        : 1;
      if (k >= d - 2) bad_struct += ht(m, k) == T(0) ? 0 : 1;
      for (int i = 0; i < d; ++i) {
        const bool must_be_zero = i <= k || k >= d - 2;
        bad_struct +=
            must_be_zero ? (hV(m, k, i) == T(0) ? 0 : 1) : (std::isfinite(static_cast<double>(hV(m, k, i))) ? 0 : 1);
      }
    }
    bad_struct += ho(m, d - 1) == T(0) ? 0 : 1;
    EXPECT_EQ(bad_struct, 0) << what << " m=" << m << ": V, tau, diag or offdiag malformed";

    const std::vector<R> Q = form_q(hV, ht, m, d);
    auto q = [&](int i, int j) { return Q[static_cast<size_t>(i) * d + j]; };
    // ||Q^T Q - I||_F
    R orth = 0;
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) {
        R s = i == j ? R(-1) : R(0);
        for (int k = 0; k < d; ++k) s += q(k, i) * q(k, j);
        orth += s * s;
      }
    // ||Q T Q^T - A||_F / ||A||_F; QT = Q T (T tridiagonal)
    std::vector<R> QT(Q.size());
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) {
        R s = q(i, j) * R(hd(m, j));
        if (j > 0) s += q(i, j - 1) * R(ho(m, j - 1));  // T(j-1, j)
        if (j + 1 < d) s += q(i, j + 1) * R(ho(m, j));  // T(j+1, j)
        QT[static_cast<size_t>(i) * d + j] = s;
      }
    R rec = 0, anrm = 0;
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) {
        R s = -R(A.at(m, i, j));
        for (int k = 0; k < d; ++k) s += QT[static_cast<size_t>(i) * d + k] * q(j, k);
        rec += s * s;
        anrm += R(A.at(m, i, j)) * R(A.at(m, i, j));
      }
    const double e_orth = static_cast<double>(std::sqrt(orth));
    const double e_rec = anrm > 0 ? static_cast<double>(std::sqrt(rec / anrm)) : static_cast<double>(std::sqrt(rec));
    // apply_q against Q^T y and Q y
    R num1 = 0, num2 = 0, ynrm = 0;
    for (int i = 0; i < d; ++i) {
      R s1 = 0, s2 = 0;
      for (int k = 0; k < d; ++k) {
        s1 += q(k, i) * R(hy(m, k));
        s2 += q(i, k) * R(hy(m, k));
      }
      num1 = std::max(num1, std::fabs(R(hy1(m, i)) - s1));
      num2 = std::max(num2, std::fabs(R(hy2(m, i)) - s2));
      ynrm = std::max(ynrm, std::fabs(R(hy(m, i))));
      if (!std::isfinite(static_cast<double>(hy1(m, i))) || !std::isfinite(static_cast<double>(hy2(m, i))))
        num1 = HUGE_VAL;
    }
    const double e_apply = static_cast<double>(std::max(num1, num2) / ynrm);
    worst_orth = std::max(worst_orth, e_orth);
    worst_rec = std::max(worst_rec, e_rec);
    worst_apply = std::max(worst_apply, e_apply);
    EXPECT_LE(e_orth, bound) << what << " m=" << m << ": ||Q^T Q - I||_F";
    EXPECT_LE(e_rec, bound) << what << " m=" << m << ": ||Q T Q^T - A||_F / ||A||_F";
    EXPECT_LE(e_apply, bound) << what << " m=" << m << ": apply_q";
  }
  const std::string key = std::string(type_name(T())) + " householder ";
  record_error(key + "orthogonality/(d*eps)", worst_orth / (d * eps_of<T>()));
  record_error(key + "reconstruction/(d*eps)", worst_rec / (d * eps_of<T>()));
  record_error(key + "apply_q/(d*eps)", worst_apply / (d * eps_of<T>()));
}

TYPED_TEST(HouseholderTest, Tridiagonalize) {
  for (const auto& dn : house_sizes<TypeParam>())
    check_tridiagonalize<TypeParam, Kokkos::LayoutRight>(dn.first, dn.second);
}

// x = A^-1 b for SPD and symmetric indefinite matrices; A, b, x in layout Lay.
template <class T, class Lay>
void check_solve_symmetric(Kind kind, int d, int nmat,
                           kband::SymmetricTSolve tsolve = kband::SymmetricTSolve::Pivoted,
                           kband::Variant variant = kband::Variant::Auto) {
  Exec exec;
  const bool pcr = tsolve == kband::SymmetricTSolve::PCR;
  const std::string what = std::string("solve_symmetric ") + (pcr ? "(pcr) " : "") + kind_name(kind) + " " +
                           type_name(T()) + " " + layout_label(Lay()) + " " + kband::variant_name(variant) +
                           " d=" + std::to_string(d) + " nmat=" + std::to_string(nmat);
  const Mats<T> A = make_matrices<T>(kind, nmat, d);
  const auto Ad = upload_matrices<Lay>(A);
  Rng rng(mix_seed({sizeof(T), 7, static_cast<std::uint64_t>(kind), static_cast<std::uint64_t>(d),
                    static_cast<std::uint64_t>(nmat)}));
  std::vector<T> bh(static_cast<size_t>(nmat) * d);
  for (auto& e : bh) e = static_cast<T>(rng.uniform(-1, 1));
  Kokkos::View<T**, Lay> b("b", nmat, d);
  {
    auto h = Kokkos::create_mirror_view(b);
    for (int m = 0; m < nmat; ++m)
      for (int j = 0; j < d; ++j) h(m, j) = bh[static_cast<size_t>(m) * d + j];
    Kokkos::deep_copy(b, h);
  }
  const auto x = rank2<Lay>("x", nmat, d, nan_value<T>());
  Kokkos::View<int*> info("info", nmat);
  poison_info(info);
  kband::SolveOptions opt;
  opt.variant = variant;
  fill_team_scratch(exec, nan_value<T>());
  kband::solve_symmetric(exec, Ad, b, x, info, tsolve, opt);
  exec.fence();
  const auto hx = to_host(x);
  const std::vector<int> hi = download_info(info);
  const double bound = house_bound<T>(d);
  double worst_fwd = 0, worst_bwd = 0;
  for (int m = 0; m < nmat; ++m) {
    std::vector<R> M(static_cast<size_t>(d) * d);
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) M[static_cast<size_t>(i) * d + j] = A.at(m, i, j);
    DenseLU lu(M, d);
    ASSERT_FALSE(lu.singular()) << what;
    const std::vector<R> xref = lu.solve(bh.data() + static_cast<size_t>(m) * d);
    std::vector<T> xm(d);
    for (int j = 0; j < d; ++j) xm[j] = hx(m, j);
    const double fwd = relative_error_inf(d, xm.data(), xref.data());
    // normwise backward error
    R rmax = 0, amax = 0, xmax = 0, bmax = 0;
    for (int i = 0; i < d; ++i) {
      R r = -R(bh[static_cast<size_t>(m) * d + i]), row = 0;
      for (int j = 0; j < d; ++j) {
        r += R(A.at(m, i, j)) * R(xm[j]);
        row += std::fabs(R(A.at(m, i, j)));
      }
      rmax = std::max(rmax, std::fabs(r));
      amax = std::max(amax, row);
      xmax = std::max(xmax, std::fabs(R(xm[i])));
      bmax = std::max(bmax, std::fabs(R(bh[static_cast<size_t>(m) * d + i])));
    }
    const double bwd = std::isfinite(fwd) ? static_cast<double>(rmax / (amax * xmax + bmax)) : HUGE_VAL;
    worst_fwd = std::max(worst_fwd, fwd);
    worst_bwd = std::max(worst_bwd, bwd);
    EXPECT_EQ(hi[m], 0) << what << " m=" << m;
    EXPECT_LE(fwd, bound) << what << " m=" << m << ": forward error";
    EXPECT_LE(bwd, bound) << what << " m=" << m << ": backward error";
  }
  const std::string key = std::string(type_name(T())) + " solve_symmetric " + (pcr ? "(pcr) " : "") + kind_name(kind);
  record_error(key + " forward/(d*eps)", worst_fwd / (d * eps_of<T>()));
  record_error(key + " backward/(d*eps)", worst_bwd / (d * eps_of<T>()));
  ++stats().solves;
}

// The kernels of the pivoted route: Auto (Registers on GPUs for most d <= 128),
// Scratch (the working copy in team scratch), Registers (rows of the working
// copy in registers; on hosts a one-thread team holds the matrix).
const kband::Variant kSymVariants[] = {kband::Variant::Auto, kband::Variant::Scratch, kband::Variant::Registers};

bool serves(kband::Variant v, int d) {
  return v != kband::Variant::Registers || d <= kband::impl::symmetric_registers_max_d;
}

TYPED_TEST(HouseholderTest, SolveSymmetric) {
  for (kband::Variant v : kSymVariants)
    for (Kind kind : {Kind::SPD, Kind::Indefinite})
      for (const auto& dn : house_sizes<TypeParam>())
        if (serves(v, dn.first))
          check_solve_symmetric<TypeParam, Kokkos::LayoutRight>(kind, dn.first, dn.second,
                                                                kband::SymmetricTSolve::Pivoted, v);
}

// Registers at d around its tile sizes (16, 32, 64, 96, 128) and its phases
// (column loops from D/4, D/2, 3D/4): the identity padding, the last
// reflector, the T entries of the last rows; from D = 128 on GPUs a row
// spans several vector lanes.
TYPED_TEST(HouseholderTest, SolveSymmetricRegistersSizes) {
  for (int d : {6, 7, 9, 15, 16, 18, 25, 31, 33, 47, 50, 63, 65, 72, 73, 95, 96, 97, 127, 128})
    for (Kind kind : {Kind::SPD, Kind::Indefinite})
      check_solve_symmetric<TypeParam, Kokkos::LayoutRight>(kind, d, 5, kband::SymmetricTSolve::Pivoted,
                                                            kband::Variant::Registers);
}

// Every solve here runs after a kernel left NaN in every team's scratch
// (check_solve_symmetric): no kernel may read scratch it did not write, even
// where the value read is multiplied by 0. The Q pass of Registers takes
// blocks of 8 reflectors, and the last block of most d is short.
TYPED_TEST(HouseholderTest, SolveSymmetricDirtyScratch) {
  for (int d : {3, 5, 12, 16, 17, 33, 64, 81, 100, 128})
    for (kband::Variant v : kSymVariants)
      if (serves(v, d))
        check_solve_symmetric<TypeParam, Kokkos::LayoutRight>(Kind::SPD, d, 3, kband::SymmetricTSolve::Pivoted, v);
}

// Matrices whose reduction skips reflectors (x = 0: diagonal matrices, and
// two decoupled blocks), every kernel and both T solves.
TYPED_TEST(HouseholderTest, SolveSymmetricDecoupled) {
  for (int d : {3, 5, 20, 40, 100, 128}) {
    for (kband::Variant v : kSymVariants)
      if (serves(v, d))
        check_solve_symmetric<TypeParam, Kokkos::LayoutRight>(Kind::Decoupled, d, 4, kband::SymmetricTSolve::Pivoted,
                                                              v);
    check_solve_symmetric<TypeParam, Kokkos::LayoutRight>(Kind::Decoupled, d, 4, kband::SymmetricTSolve::PCR);
  }
}

// The PCR T solve (the composed pipeline: tridiagonalize, apply_q, pcr) on
// SPD matrices, whose T is SPD.
TYPED_TEST(HouseholderTest, SolveSymmetricPCR) {
  for (const auto& dn : house_sizes<TypeParam>())
    check_solve_symmetric<TypeParam, Kokkos::LayoutRight>(Kind::SPD, dn.first, dn.second,
                                                          kband::SymmetricTSolve::PCR);
}

// The routines take Views of any layout (LayoutLeft is the default one on
// GPUs); solve_symmetric then copies between layouts.
TYPED_TEST(HouseholderTest, LayoutLeftViews) {
  for (int d : {1, 3, 17, 64}) {
    check_tridiagonalize<TypeParam, Kokkos::LayoutLeft>(d, 3);
    for (kband::Variant v : kSymVariants)
      for (Kind kind : {Kind::SPD, Kind::Indefinite})
        if (serves(v, d))
          check_solve_symmetric<TypeParam, Kokkos::LayoutLeft>(kind, d, 3, kband::SymmetricTSolve::Pivoted, v);
  }
}

// An exactly singular matrix (last row and column zero; they stay exactly zero
// through the reflections, so T(d-1, d-1) = 0 decoupled) gets info > 0 and
// NaN; the other matrices of the batch are solved.
TYPED_TEST(HouseholderTest, SolveSymmetricSingular) {
  using T = TypeParam;
  Exec exec;
  for (kband::Variant v : kSymVariants) {
    for (int d : {1, 2, 5, 17, 32, 64, 128}) {
      if (!serves(v, d)) continue;
      const int nmat = 3, bad = 1;
      const std::string what = std::string("solve_symmetric singular ") + type_name(T()) + " " +
                               kband::variant_name(v) + " d=" + std::to_string(d);
      Mats<T> A = make_matrices<T>(Kind::SPD, nmat, d, /*salt=*/5);
      for (int i = 0; i < d; ++i) A.at(bad, i, d - 1) = A.at(bad, d - 1, i) = T(0);
      const auto Ad = upload_matrices<Kokkos::LayoutRight>(A);
      std::vector<T> bh(static_cast<size_t>(nmat) * d);
      Rng rng(mix_seed({sizeof(T), 8, static_cast<std::uint64_t>(d)}));
      for (auto& e : bh) e = static_cast<T>(rng.uniform(-1, 1));
      const auto b = rank2<Kokkos::LayoutRight>("b", nmat, d, T(0));
      {
        auto h = Kokkos::create_mirror_view(b);
        for (int m = 0; m < nmat; ++m)
          for (int j = 0; j < d; ++j) h(m, j) = bh[static_cast<size_t>(m) * d + j];
        Kokkos::deep_copy(b, h);
      }
      const auto x = rank2<Kokkos::LayoutRight>("x", nmat, d, nan_value<T>());
      Kokkos::View<int*> info("info", nmat);
      poison_info(info);
      kband::SolveOptions opt;
      opt.variant = v;
      kband::solve_symmetric(exec, Ad, b, x, info, kband::SymmetricTSolve::Pivoted, opt);
      exec.fence();
      const auto hx = to_host(x);
      const std::vector<int> hi = download_info(info);
      for (int m = 0; m < nmat; ++m) {
        std::vector<T> xm(d);
        for (int j = 0; j < d; ++j) xm[j] = hx(m, j);
        if (m == bad) {
          EXPECT_GE(hi[m], 1) << what;
          EXPECT_LE(hi[m], d) << what;
          EXPECT_TRUE(all_nan(xm.data(), d)) << what << ": x of the singular matrix not NaN";
          continue;
        }
        std::vector<R> M(static_cast<size_t>(d) * d);
        for (int i = 0; i < d; ++i)
          for (int j = 0; j < d; ++j) M[static_cast<size_t>(i) * d + j] = A.at(m, i, j);
        const std::vector<R> xref = DenseLU(M, d).solve(bh.data() + static_cast<size_t>(m) * d);
        EXPECT_EQ(hi[m], 0) << what << " m=" << m;
        EXPECT_LE(relative_error_inf(d, xm.data(), xref.data()), house_bound<T>(d)) << what << " m=" << m;
      }
    }
  }
}

TEST(HouseholderErrors, ArgumentsAreChecked) {
  Exec exec;
  const int nmat = 2, d = 5;
  using V2 = Kokkos::View<double**, Kokkos::LayoutRight>;
  using V3 = Kokkos::View<double***, Kokkos::LayoutRight>;
  const V3 A("A", nmat, d, d), A_rect("A_rect", nmat, d, d + 1), A_empty("A0", nmat, 0, 0), V("V", nmat, d, d),
      V_bad("V_bad", nmat, d, d - 1);
  const V2 diag("diag", nmat, d), off("off", nmat, d), tau("tau", nmat, d), short2("short", nmat, d - 1),
      few("few", nmat + 1, d), b("b", nmat, d), x("x", nmat, d);
  Kokkos::View<int*> info("info", nmat), info_long("info_long", nmat + 1);
  // tridiagonalize
  EXPECT_THROW(kband::tridiagonalize(exec, A_rect, diag, off, V, tau), kband::Error);
  EXPECT_THROW(
      kband::tridiagonalize(exec, A_empty, V2("e", nmat, 0), V2("e", nmat, 0), V3("e", nmat, 0, 0), V2("e", nmat, 0)),
      kband::Error);
  EXPECT_THROW(kband::tridiagonalize(exec, A, short2, off, V, tau), kband::Error);
  EXPECT_THROW(kband::tridiagonalize(exec, A, diag, few, V, tau), kband::Error);
  EXPECT_THROW(kband::tridiagonalize(exec, A, diag, off, V_bad, tau), kband::Error);
  EXPECT_THROW(kband::tridiagonalize(exec, A, diag, off, V, short2), kband::Error);
  // apply_q
  EXPECT_THROW(kband::apply_q(exec, V, tau, short2, true), kband::Error);
  EXPECT_THROW(kband::apply_q(exec, V, tau, few, false), kband::Error);
  // solve_symmetric; a refused call leaves info alone
  poison_info(info);
  EXPECT_THROW(kband::solve_symmetric(exec, A_rect, b, x, info), kband::Error);
  EXPECT_THROW(kband::solve_symmetric(exec, A, short2, x, info), kband::Error);
  EXPECT_THROW(kband::solve_symmetric(exec, A, few, x, info), kband::Error);
  EXPECT_THROW(kband::solve_symmetric(exec, A, b, short2, info), kband::Error);
  EXPECT_THROW(kband::solve_symmetric(exec, A, b, few, info), kband::Error);
  EXPECT_THROW(kband::solve_symmetric(exec, A, b, x, info_long), kband::Error);
  {  // variants: Registers up to d = 128; Global and Recompute are not offered; PCR takes Auto only
    kband::SolveOptions opt;
    const int big = kband::impl::symmetric_registers_max_d + 1;
    const V3 Abig("Abig", nmat, big, big);
    const V2 bbig("bbig", nmat, big), xbig("xbig", nmat, big);
    opt.variant = kband::Variant::Registers;
    EXPECT_THROW(kband::solve_symmetric(exec, Abig, bbig, xbig, info, kband::SymmetricTSolve::Pivoted, opt),
                 kband::Error);
    EXPECT_THROW(kband::solve_symmetric(exec, A, b, x, info, kband::SymmetricTSolve::PCR, opt), kband::Error);
    for (kband::Variant v : {kband::Variant::Global, kband::Variant::Recompute}) {
      opt.variant = v;
      EXPECT_THROW(kband::solve_symmetric(exec, A, b, x, info, kband::SymmetricTSolve::Pivoted, opt),
                   kband::Error);
      // an empty batch is checked the same way
      EXPECT_THROW(kband::solve_symmetric(exec, V3("A0", 0, d, d), V2("b0", 0, d), V2("x0", 0, d),
                                          Kokkos::View<int*>("info0", 0), kband::SymmetricTSolve::Pivoted, opt),
                   kband::Error);
    }
  }
  exec.fence();
  for (int v : download_info(info)) EXPECT_EQ(v, kInfoPoison) << "a refused solve_symmetric wrote info";
}

}  // namespace
}  // namespace kband_test

// An orthogonal, indefinite matrix whose tridiagonal form has a zero diagonal:
// the default (pivoted) T solve handles it, PCR reports a zero pivot.
TEST(HouseholderIndefinite, ZeroDiagonalNeedsPivoting) {
  kband_test::Exec exec;
  Kokkos::View<double***, Kokkos::LayoutRight> A("A", 1, 2, 2);
  Kokkos::View<double**, Kokkos::LayoutRight> b("b", 1, 2), x("x", 1, 2);
  Kokkos::View<int*> info("info", 1);
  auto hA = Kokkos::create_mirror_view(A);
  auto hb = Kokkos::create_mirror_view(b);
  hA(0, 0, 0) = 0, hA(0, 0, 1) = 1, hA(0, 1, 0) = 1, hA(0, 1, 1) = 0;
  hb(0, 0) = 1, hb(0, 1) = 2;
  Kokkos::deep_copy(A, hA);
  Kokkos::deep_copy(b, hb);
  Kokkos::deep_copy(x, std::numeric_limits<double>::quiet_NaN());
  Kokkos::deep_copy(info, -777);
  kband::solve_symmetric(exec, A, b, x, info);
  exec.fence();
  auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  auto hi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
  EXPECT_EQ(hi(0), 0);
  EXPECT_NEAR(hx(0, 0), 2.0, 1e-15);
  EXPECT_NEAR(hx(0, 1), 1.0, 1e-15);
  Kokkos::deep_copy(info, -777);
  kband::solve_symmetric(exec, A, b, x, info, kband::SymmetricTSolve::PCR);
  exec.fence();
  Kokkos::deep_copy(hi, info);
  Kokkos::deep_copy(hx, x);
  EXPECT_EQ(hi(0), 1);
  EXPECT_TRUE(std::isnan(hx(0, 0)) && std::isnan(hx(0, 1)));
}
