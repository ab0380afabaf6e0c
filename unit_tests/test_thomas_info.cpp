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

template <class T, class L>
void per_system_defects(Solver solver) {
  // n = 32 (double) and 64 (float): the two-segment Registers kernel,
  // launched directly (one chunk a segment, so every backend serves it; a
  // defect in each half); n <= 64 (double) and 128 (float): the
  // four-segment one (n = 33 in double, 64 in float: defects in the middle
  // segments, whose c' and y wait in level-1 scratch); n = 600: on GPUs
  // kband::thomas takes that kernel itself (interleaved, grouped)
  for (int n : {5, 32, 33, 64, 600}) {
    const int nsys = 3 * L::sz - 1;  // >= 11
    Case<T> cs = get_case<T>(solver, Family::Dominant, n, nsys);  // a copy: edited below
    const int systems[kDefectKinds] = {0, 2, nsys / 2, nsys - 1, 1};
    std::vector<Defect> defects;
    for (int k = 0; k < kDefectKinds; ++k) defects.push_back(plant(cs, systems[k], k));
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

}  // namespace
}  // namespace kband_test
