// Accuracy of every Thomas solver and mode against the long double dense LU
// reference, on every layout, in float and double; in-place solves, caller
// workspaces and strided (subview) batches.
#include "kband_test_common.hpp"

namespace kband_test {
namespace {

/// The float sweep skips the largest systems of the biggest batches: they
/// exercise no code path the double sweep and the smaller float sizes do not.
template <class T>
bool in_sweep(int n, int nsys, int sz) {
  if (std::is_same<T, double>::value) return true;
  return !(n == 1000 && nsys != 1 && nsys != 3 * sz - 1);
}

/// Host bit-copy of a whole (contiguous) View.
template <class V>
std::vector<unsigned char> parent_bytes(const V& v) {
  auto h = Kokkos::create_mirror(v);
  Kokkos::deep_copy(h, v);
  const unsigned char* p = reinterpret_cast<const unsigned char*>(h.data());
  return std::vector<unsigned char>(p, p + h.span() * sizeof(typename V::non_const_value_type));
}

template <class T, class L>
void accuracy_sweep(Solver solver) {
  for (Family fam : {Family::Dominant, Family::General})
    for (int n : n_list()) {
      if (n < min_n(solver)) continue;
      for (int nsys : nsys_list(L::sz)) {
        if (!in_sweep<T>(n, nsys, L::sz)) continue;
        Problem<T, L> p(get_case<T>(solver, fam, n, nsys));
        if (is_shared(solver)) ASSERT_EQ(p.factor.info(), 0) << "factor of a regular matrix failed";
        for (kband::Variant v : all_variants()) p.solve_and_check(v);
      }
    }
}

template <class C>
class ThomasAccuracy : public ::testing::Test {};
TYPED_TEST_SUITE(ThomasAccuracy, AllConfigs, CfgNames);

TYPED_TEST(ThomasAccuracy, PerSystem) {
  accuracy_sweep<typename TypeParam::value_type, typename TypeParam::layout>(Solver::Thomas);
}
TYPED_TEST(ThomasAccuracy, Periodic) {
  accuracy_sweep<typename TypeParam::value_type, typename TypeParam::layout>(Solver::Periodic);
}
TYPED_TEST(ThomasAccuracy, SharedFactor) {
  accuracy_sweep<typename TypeParam::value_type, typename TypeParam::layout>(Solver::Shared);
}
TYPED_TEST(ThomasAccuracy, SharedFactorPeriodic) {
  accuracy_sweep<typename TypeParam::value_type, typename TypeParam::layout>(Solver::SharedPeriodic);
}

// x is the same batch as d.
TYPED_TEST(ThomasAccuracy, InPlace) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  for (Solver solver : {Solver::Thomas, Solver::Periodic, Solver::Shared, Solver::SharedPeriodic})
    for (int n : n_list()) {
      if (n < min_n(solver) || !in_sweep<T>(n, L::sz + 1, L::sz)) continue;
      for (int nsys : {1, L::sz + 1}) {
        Problem<T, L> p(get_case<T>(solver, Family::Dominant, n, nsys));
        for (kband::Variant v : all_variants()) p.solve_and_check(v, /*inplace=*/true);
      }
    }
}

// A caller-provided workspace of thomas_workspace_size elements, holding
// garbage, gives the same results as kband's own; it is reused across calls.
TYPED_TEST(ThomasAccuracy, CallerWorkspace) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename L::template batch<T>;
  Exec exec;
  for (Solver solver : {Solver::Thomas, Solver::Periodic})
    for (int n : {3, 33}) {
      const int nsys = 3 * L::sz - 1;
      Problem<T, L> p(get_case<T>(solver, Family::Dominant, n, nsys));
      const auto bc = solver == Solver::Periodic ? kband::Boundary::Periodic : kband::Boundary::NonPeriodic;
      const size_t len = kband::thomas_workspace_size(p.x, bc);
      ASSERT_GE(len, static_cast<size_t>(nsys) * n * (solver == Solver::Periodic ? 2 : 1));
      Kokkos::View<T*> ws("ws", len);
      Kokkos::deep_copy(ws, nan_value<T>());
      for (int rep = 0; rep < 2; ++rep) {
        Host<B> hx(p.x);
        poison(hx, nan_value<T>());
        hx.to_device();
        kband::SolveOptions opt;
        opt.variant = kband::Variant::Global;
        if (solver == Solver::Periodic)
          kband::periodic_thomas(exec, p.a, p.b, p.c, p.d, p.x, p.info, opt, ws);
        else
          kband::thomas(exec, p.a, p.b, p.c, p.d, p.x, p.info, opt, ws);
        exec.fence();
        hx.to_host();
        auto hi = Kokkos::create_mirror_view(p.info);
        Kokkos::deep_copy(hi, p.info);
        std::vector<T> row(n);
        for (int s = 0; s < nsys; ++s) {
          for (int j = 0; j < n; ++j) row[j] = hx(s, j);
          EXPECT_EQ(hi(s), 0);
          EXPECT_LE(relative_error_inf(n, row.data(), p.cs.xref.data() + p.cs.idx(s, 0)), Tol<T>::dominant)
              << solver_name(solver) << " n=" << n << " s=" << s << " rep=" << rep;
        }
        EXPECT_EQ(padding_damage(hx), 0);
      }
    }
}

// ---------------------------------------------------------------------------
// Strided batches: every argument is a subview of a bigger View (sentinels all
// around); the solver must give the right answer and write nothing outside x.
// Host access goes through a mirror of the whole (contiguous) parent, since a
// non-contiguous device subview cannot be deep_copied to the host directly.
// ---------------------------------------------------------------------------
template <class T, class L>
struct Padded;  // parent allocation + batch inside it

template <class T, class Layout>
struct Padded2D {
  static constexpr int kLo0 = 1, kHi0 = 2, kLo1 = 2, kHi1 = 3;  // sentinel margins per dimension
  using Parent = Kokkos::View<T**, Layout>;
  using HostParent = decltype(Kokkos::create_mirror(std::declval<Parent>()));
  Parent parent;
  decltype(Kokkos::subview(std::declval<Parent>(), Kokkos::pair<int, int>(), Kokkos::pair<int, int>())) sub;
  Padded2D(int nsys, int n)
      : parent("parent", nsys + kLo0 + kHi0, n + kLo1 + kHi1),
        sub(Kokkos::subview(parent, Kokkos::pair<int, int>(kLo0, kLo0 + nsys),
                            Kokkos::pair<int, int>(kLo1, kLo1 + n))) {}
  static T& at(const HostParent& h, int s, int j) { return h(kLo0 + s, kLo1 + j); }
};
template <class T>
struct Padded<T, ContiguousTag> : Padded2D<T, Kokkos::LayoutRight> {
  using Padded2D<T, Kokkos::LayoutRight>::Padded2D;
};
template <class T>
struct Padded<T, InterleavedTag> : Padded2D<T, Kokkos::LayoutLeft> {
  using Padded2D<T, Kokkos::LayoutLeft>::Padded2D;
};
template <class T, int SZ>
struct Padded<T, GroupedTag<SZ>> {
  using B = kband::GroupedBatch<T, SZ>;
  using Parent = typename B::view_type;  // (ngroups, n, SZ): one sentinel group either side
  using HostParent = decltype(Kokkos::create_mirror(std::declval<Parent>()));
  Parent parent;
  B sub;
  Padded(int nsys, int n)
      : parent("parent", B::groups_for(nsys) + 2, n),
        sub(Kokkos::subview(parent, Kokkos::pair<int, int>(1, 1 + B::groups_for(nsys)), Kokkos::ALL(),
                            Kokkos::ALL()),
            nsys) {}
  static T& at(const HostParent& h, int s, int j) { return h(1 + s / SZ, j, s % SZ); }
};

TYPED_TEST(ThomasAccuracy, StridedSubviews) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using P = Padded<T, L>;
  Exec exec;
  const T sentinel = T(777.125);
  for (Solver solver : {Solver::Thomas, Solver::Periodic, Solver::Shared})
    for (int n : {3, 7, 33}) {
      const int nsys = L::sz + 1;
      const Case<T>& cs = get_case<T>(solver, Family::Dominant, n, nsys);
      const std::string what = std::string(solver_name(solver)) + " n=" + std::to_string(n);
      P a(nsys, n), b(nsys, n), c(nsys, n), d(nsys, n), x(nsys, n);
      auto put = [&](const P& p, const std::vector<T>* v, bool coef) {
        auto h = Kokkos::create_mirror(p.parent);
        Kokkos::deep_copy(h, sentinel);
        for (int s = 0; s < nsys; ++s)
          for (int j = 0; j < n; ++j)
            P::at(h, s, j) = v ? (*v)[coef ? cs.coef(s, j) : cs.idx(s, j)] : nan_value<T>();
        Kokkos::deep_copy(p.parent, h);
      };
      Problem<T, L> shared_p(cs);  // owns the factor in the shared case
      put(a, cs.shared() ? nullptr : &cs.a, true);
      put(b, cs.shared() ? nullptr : &cs.b, true);
      put(c, cs.shared() ? nullptr : &cs.c, true);
      put(d, &cs.d, false);
      put(x, nullptr, false);
      std::vector<std::vector<unsigned char>> before;
      for (const P* p : {&a, &b, &c, &d}) before.push_back(parent_bytes(p->parent));
      Kokkos::View<int*> info("info", nsys);
      Kokkos::deep_copy(info, kInfoPoison);
      if (solver == Solver::Thomas)
        kband::thomas(exec, a.sub, b.sub, c.sub, d.sub, x.sub, info);
      else if (solver == Solver::Periodic)
        kband::periodic_thomas(exec, a.sub, b.sub, c.sub, d.sub, x.sub, info);
      else
        kband::thomas(exec, shared_p.factor, d.sub, x.sub, info);
      exec.fence();
      int k = 0;
      for (const P* p : {&a, &b, &c, &d}) {
        EXPECT_TRUE(parent_bytes(p->parent) == before[k]) << what << ": input " << "abcd"[k] << " modified";
        ++k;
      }
      auto hx = Kokkos::create_mirror(x.parent);
      Kokkos::deep_copy(hx, x.parent);
      auto hi = Kokkos::create_mirror_view(info);
      Kokkos::deep_copy(hi, info);
      std::vector<T> row(n);
      for (int s = 0; s < nsys; ++s) {
        for (int j = 0; j < n; ++j) row[j] = P::at(hx, s, j);
        EXPECT_EQ(hi(s), 0) << what;
        EXPECT_LE(relative_error_inf(n, row.data(), cs.xref.data() + cs.idx(s, 0)), Tol<T>::dominant)
            << what << " s=" << s;
        for (int j = 0; j < n; ++j) P::at(hx, s, j) = sentinel;
      }
      // With the batch's own elements overwritten, the whole parent must be sentinel.
      int damaged = 0;
      for (size_t i = 0; i < hx.span(); ++i) damaged += same_bits(hx.data()[i], sentinel) ? 0 : 1;
      EXPECT_EQ(damaged, 0) << what << ": the solver wrote outside x";
    }
}

}  // namespace
}  // namespace kband_test
