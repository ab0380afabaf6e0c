// Per-system failure reporting: zero and non-finite pivots give info(s) = the
// 1-based row and x(s, :) = NaN, without disturbing the other systems.
//
// x is poisoned with a FINITE value here (not NaN as in the accuracy tests), so
// that the NaN fill of the failed systems is proven to be written by kband.
#include "kband_test_common.hpp"

namespace kband_test {
namespace {

template <class C>
class ThomasInfo : public ::testing::Test {};
TYPED_TEST_SUITE(ThomasInfo, AllConfigs, CfgNames);

constexpr double kFinitePoison = 1234.5;

struct Defect {
  int s;         // system (per-system solvers); unused for the shared factor
  int info;      // expected 1-based row
  const char* what;
};

/// Plants pivot defects into system s of a case with n >= 5 (coefficient
/// arrays indexed through cs.coef, so it also edits a shared matrix).
template <class T>
Defect plant(Case<T>& cs, int s, int kind) {
  const int n = cs.n;
  auto A = [&](int j) -> T& { return cs.a[cs.coef(s, j)]; };
  auto B = [&](int j) -> T& { return cs.b[cs.coef(s, j)]; };
  auto C = [&](int j) -> T& { return cs.c[cs.coef(s, j)]; };
  switch (kind) {
    case 0:
      B(0) = T(0);
      return {s, 1, "b(s,0) = 0"};
    case 1: {
      // Exactly singular 2x2 block in rows k, k+1 = n-3, n-2. Row k-1 is
      // decoupled (c = 0), so row k's pivot is b = 1 exactly and row k+1's is
      // 6 - 3 * (2 / 1) = 0 exactly.
      const int k = n - 3;
      C(k - 1) = T(0);
      B(k) = T(1);
      C(k) = T(2);
      A(k + 1) = T(3);
      B(k + 1) = T(6);
      return {s, k + 2, "singular 2x2 block, zero pivot in row n-2"};
    }
    case 2:
      B(1) = nan_value<T>();
      return {s, 2, "b(s,1) = NaN"};
    case 3:
      B(n - 2) = std::numeric_limits<T>::infinity();
      return {s, n - 1, "b(s,n-2) = +inf"};
    default:
      B(n - 1) = nan_value<T>();
      return {s, n, "b(s,n-1) = NaN (last row)"};
  }
}
constexpr int kDefectKinds = 5;

/// Makes system s of a periodic case with n = 3 singular with every pivot
/// of kband's elimination (of T' = A - u v^T) nonzero: the Sherman-Morrison
/// denominator 1 + v.T'^-1 u is then 0, exactly (every intermediate value is
/// a short dyadic fraction, so float and double, fused or not, compute it
/// without rounding). kband reports row n.
template <class T>
Defect plant_singular_correction(Case<T>& cs, int s) {
  if (cs.n != 3 || !cs.periodic()) throw std::logic_error("plant_singular_correction: periodic n = 3 only");
  const T a[3] = {2, -2, 2}, b[3] = {1, -2, 1}, c[3] = {4, -1, -2};
  for (int j = 0; j < 3; ++j) {
    cs.a[cs.coef(s, j)] = a[j];
    cs.b[cs.coef(s, j)] = b[j];
    cs.c[cs.coef(s, j)] = c[j];
  }
  return {s, 3, "singular periodic matrix (zero Sherman-Morrison denominator)"};
}

/// Defects in five systems of a batch of 3 SZ - 1 (on CPUs: in packs of 8
/// and in the lanes after them), every variant: the defective systems get
/// info and NaN, the others their solution. `correction`: the defect is
/// plant_singular_correction's (periodic, n = 3), otherwise plant's kinds.
template <class T, class L>
void per_system_defects(Solver solver, std::initializer_list<int> ns = {5, 32, 33, 64, 600},
                        bool correction = false) {
  // n = 32 (double) and 64 (float): the two-segment Registers kernel,
  // launched directly (one chunk a segment, so every backend serves it; a
  // defect in each half); n <= 64 (double) and 128 (float): the
  // four-segment one (n = 33 in double, 64 in float: defects in the middle
  // segments, whose c' and y wait in level-1 scratch); n = 600: on GPUs
  // kband::thomas takes that kernel itself (interleaved, grouped)
  for (int n : ns) {
    const int nsys = 3 * L::sz - 1;  // >= 11
    Case<T> cs = get_case<T>(solver, Family::Dominant, n, nsys);  // a copy: edited below
    const int systems[kDefectKinds] = {0, 2, nsys / 2, nsys - 1, 1};
    std::vector<Defect> defects;
    for (int k = 0; k < kDefectKinds; ++k)
      defects.push_back(correction ? plant_singular_correction(cs, systems[k]) : plant(cs, systems[k], k));
    std::vector<int> expected(nsys, 0);
    for (const Defect& d : defects) expected[d.s] = d.info;

    Problem<T, L> p(cs);
    // one solve (false: refused) and its checks
    auto check = [&](const std::string& what, const std::function<bool()>& solve) {
      Host<typename Problem<T, L>::B> hx(p.x);
      poison(hx, T(kFinitePoison));
      hx.to_device();
      Kokkos::deep_copy(p.info, kInfoPoison);
      if (!solve()) return;
      hx.to_host();
      auto hi = Kokkos::create_mirror_view(p.info);
      Kokkos::deep_copy(hi, p.info);
      std::vector<T> row(n);
      for (int s = 0; s < nsys; ++s) {
        EXPECT_EQ(hi(s), expected[s]) << what << " s=" << s;
        for (int j = 0; j < n; ++j) row[j] = hx(s, j);
        if (expected[s] != 0) {
          int finite = 0;
          for (int j = 0; j < n; ++j) finite += std::isnan(row[j]) ? 0 : 1;
          EXPECT_EQ(finite, 0) << what << " s=" << s << ": failed system not filled with NaN";
        } else {
          EXPECT_LE(relative_error_inf(n, row.data(), cs.xref.data() + cs.idx(s, 0)), Tol<T>::dominant)
              << what << " s=" << s << ": a healthy system next to failed ones is wrong";
        }
      }
      EXPECT_EQ(padding_damage(hx), 0) << what;
    };
    for (kband::Variant v : thomas_variants()) {
      const std::string what = p.describe(v, false);
      kband::SolveOptions opt;
      opt.variant = v;
      check(what, [&] { return p.call_if_served(p.x, opt, what); });
    }
    if (solver == Solver::Thomas && n <= 2 * kband::impl::register_rows_segments<T>())
      check(p.describe(kband::Variant::Registers, false) + " (two segments)", [&] {
        p.template call_segments<2>(p.x);
        return true;
      });
    if (solver == Solver::Thomas && n <= 4 * kband::impl::register_rows_segments<T>())
      check(p.describe(kband::Variant::Registers, false) + " (four segments)", [&] {
        p.template call_segments<4>(p.x);
        return true;
      });
  }
}

TYPED_TEST(ThomasInfo, PerSystemPivots) {
  per_system_defects<typename TypeParam::value_type, typename TypeParam::layout>(Solver::Thomas);
}
TYPED_TEST(ThomasInfo, PeriodicPivots) {
  per_system_defects<typename TypeParam::value_type, typename TypeParam::layout>(Solver::Periodic);
}
TYPED_TEST(ThomasInfo, PeriodicSingularCorrection) {
  per_system_defects<typename TypeParam::value_type, typename TypeParam::layout>(Solver::Periodic, {3}, true);
}

// A shared factor with a bad pivot: factor.info() reports the row, and every
// system of every later solve gets that info and a NaN solution.
TYPED_TEST(ThomasInfo, SharedFactorPivots) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  for (Solver solver : {Solver::Shared, Solver::SharedPeriodic})
    for (int n : {5, 33, 70})
      for (int kind = 0; kind < kDefectKinds; ++kind) {
        const int nsys = L::sz + 1;
        Case<T> cs = get_case<T>(solver, Family::Dominant, n, nsys);
        const Defect def = plant(cs, 0, kind);
        Problem<T, L> p(cs);
        const std::string base = std::string(solver_name(solver)) + " n=" + std::to_string(n) + " " + def.what;
        EXPECT_EQ(p.factor.info(), def.info) << base;
        // every variant, and Recompute in parts (n = 33: two, n = 70: four)
        std::vector<std::pair<kband::Variant, int>> runs;
        for (kband::Variant v : thomas_variants()) runs.emplace_back(v, 0);
        runs.emplace_back(kband::Variant::Recompute, 16);
        for (const auto& run : runs) {
          const kband::Variant v = run.first;
          const std::string what =
              base + " variant=" + kband::variant_name(v) + (run.second ? " in parts of 16 rows" : "");
          Host<typename Problem<T, L>::B> hx(p.x);
          poison(hx, T(kFinitePoison));
          hx.to_device();
          Kokkos::deep_copy(p.info, kInfoPoison);
          kband::SolveOptions opt;
          opt.variant = v;
          opt.segment_rows = run.second;
          if (!p.call_if_served(p.x, opt, what)) continue;
          hx.to_host();
          auto hi = Kokkos::create_mirror_view(p.info);
          Kokkos::deep_copy(hi, p.info);
          int wrong_info = 0, finite = 0;
          for (int s = 0; s < nsys; ++s) {
            wrong_info += hi(s) == def.info ? 0 : 1;
            for (int j = 0; j < n; ++j) finite += std::isnan(hx(s, j)) ? 0 : 1;
          }
          EXPECT_EQ(wrong_info, 0) << what << ": info(0)=" << hi(0);
          EXPECT_EQ(finite, 0) << what << ": solution not filled with NaN";
          EXPECT_EQ(padding_damage(hx), 0) << what;
        }
      }
}

// A failed solve leaves nothing behind: the next solve into the same x and
// info (not re-poisoned: x still holds the NaN fill), with the same caller
// workspace, is correct.
TYPED_TEST(ThomasInfo, RecoversAfterFailure) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename L::template batch<T>;
  Exec exec;
  const int n = 7, nsys = L::sz + 1;
  const Case<T>& good = get_case<T>(Solver::Thomas, Family::Dominant, n, nsys);
  Case<T> bad = good;
  for (int s = 0; s < nsys; ++s) plant(bad, s, 0);
  Problem<T, L> pg(good), pb(bad);
  Kokkos::View<T*> ws("ws", kband::thomas_workspace_size(pb.x));
  for (kband::Variant v : thomas_variants()) {
    // n = 7 fits one Registers chunk, so every backend serves every variant
    // of per-system solves (Recompute is for shared factors)
    if (v == kband::Variant::Recompute) continue;
    kband::SolveOptions opt;
    opt.variant = v;
    kband::thomas(exec, pb.a, pb.b, pb.c, pb.d, pb.x, pb.info, opt, ws);
    exec.fence();
    kband::thomas(exec, pg.a, pg.b, pg.c, pg.d, pb.x, pb.info, opt, ws);
    exec.fence();
    Host<B> hx(pb.x);
    hx.to_host();
    auto hi = Kokkos::create_mirror_view(pb.info);
    Kokkos::deep_copy(hi, pb.info);
    std::vector<T> row(n);
    for (int s = 0; s < nsys; ++s) {
      for (int j = 0; j < n; ++j) row[j] = hx(s, j);
      EXPECT_EQ(hi(s), 0) << kband::variant_name(v);
      EXPECT_LE(relative_error_inf(n, row.data(), good.xref.data() + good.idx(s, 0)), Tol<T>::dominant)
          << kband::variant_name(v) << " s=" << s;
    }
  }
}

/// flush_subnormal (scalar and a CPU pack's vectors): subnormal values to 0,
/// everything else, NaN and infinities included, as it is.
template <class T>
void check_flush_subnormal() {
  using kband::impl::flush_subnormal;
  const T mn = std::numeric_limits<T>::min(), inf = std::numeric_limits<T>::infinity();
  const T keep[] = {mn, -mn, T(1), T(-3.5), inf, -inf, std::numeric_limits<T>::max()};
  for (T v : keep) EXPECT_EQ(flush_subnormal(v), v) << v;
  const T gone[] = {mn / T(2), -mn / T(4), std::numeric_limits<T>::denorm_min(), T(0), -T(0)};
  for (T v : gone) EXPECT_EQ(flush_subnormal(v), T(0)) << v;
  EXPECT_TRUE(std::isnan(flush_subnormal(nan_value<T>())));
  using P = kband::impl::LanePack<T>;
  T in[P::L] = {mn / T(2), T(2), -mn, nan_value<T>(), -inf, T(0), -mn / T(8), T(-1)}, out[P::L];
  for (int k = 0; k < P::K; ++k) P::vstore(out, k, P::flush_subnormal(P::vload(in, k)));
  for (int l = 0; l < P::L; ++l) {
    const T want = flush_subnormal(in[l]);
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(out[l])) << "lane " << l;
    else
      EXPECT_EQ(out[l], want) << "lane " << l;
  }
}
TEST(PeriodicCorrection, FlushSubnormal) {
  check_flush_subnormal<float>();
  check_flush_subnormal<double>();
}

/// A periodic factor whose correction vectors decay through the subnormal
/// range (b = 4, a = c = 1/2: by about 8 a row): z and g hold none, and
/// solves with it still match the dense reference.
template <class T>
void check_factor_without_subnormals() {
  const int n = std::is_same<T, float>::value ? 200 : 1000, nsys = 9;
  Exec exec;
  Kokkos::View<T*> a("a", n), b("b", n), c("c", n);
  Kokkos::deep_copy(a, T(0.5));
  Kokkos::deep_copy(b, T(4));
  Kokkos::deep_copy(c, T(0.5));
  kband::TridiagonalFactor<T> f(exec, a, b, c, kband::Boundary::Periodic);
  ASSERT_EQ(f.info(), 0);
  auto hz = Kokkos::create_mirror_view(f.data().z);
  auto hg = Kokkos::create_mirror_view(f.data().g);
  Kokkos::deep_copy(hz, f.data().z);
  Kokkos::deep_copy(hg, f.data().g);
  int zeros = 0;
  for (int j = 0; j < n; ++j) {
    EXPECT_NE(std::fpclassify(hz(j)), FP_SUBNORMAL) << "z(" << j << ")";
    EXPECT_NE(std::fpclassify(hg(j)), FP_SUBNORMAL) << "g(" << j << ")";
    zeros += hz(j) == T(0) ? 1 : 0;
  }
  EXPECT_GT(zeros, 0) << "the test's z did not decay past the normal range";
  // x(s, j) = 1 + s: d = (a + b + c) x
  kband::InterleavedBatch<T> d("d", nsys, n), x("x", nsys, n);
  auto hd = Kokkos::create_mirror_view(d);
  for (int s = 0; s < nsys; ++s)
    for (int j = 0; j < n; ++j) hd(s, j) = T(5) * T(1 + s);
  Kokkos::deep_copy(d, hd);
  Kokkos::deep_copy(x, nan_value<T>());
  Kokkos::View<int*> info("info", nsys);
  kband::thomas(exec, f, d, x, info);
  auto hx = Kokkos::create_mirror_view(x);
  Kokkos::deep_copy(hx, x);
  for (int s = 0; s < nsys; ++s)
    for (int j = 0; j < n; ++j)
      ASSERT_NEAR(hx(s, j), T(1 + s), T(1 + s) * Tol<T>::dominant) << "s=" << s << " j=" << j;
}
TEST(PeriodicCorrection, FactorWithoutSubnormals) {
  check_factor_without_subnormals<float>();
  check_factor_without_subnormals<double>();
}

}  // namespace
}  // namespace kband_test
