// kband::thomas, Variant::Window: blocks of rows solved from a point where
// the rest of the system no longer changes them, the rest held in a ring of
// team scratch, and systems that outgrow the ring going on in the workspace.
// Against the long double dense LU reference; the workspace (filled with a
// sentinel) shows which systems went past the ring.
#include <random>

#include "kband_test_common.hpp"

namespace kband_test {
namespace {


/// How a system's coefficients are drawn: strongly dominant (b in [3, 4],
/// |a|, |c| <= 1: lags of some 15-30 rows), weakly dominant (b = 2 + 1e-3,
/// a = c = -1 up to 10 %: c' near 0.95, a lag of hundreds of rows), or
/// general (b, a, c in [-1, 1], b pushed from zero: |c'| > 1 in places).
/// Compact: the sixth-order compact first derivative's matrix (1/3, 1, 1/3),
/// whose c' tends to 0.382: a lag of 38 rows in double.
enum class Kind { Strong, Weak, General, Compact };

template <class T, class L>
struct WindowCase {
  using B = typename L::template batch<T>;
  int nsys, n;
  std::vector<T> a, b, c, d;  // system-major host values
  std::vector<std::vector<real_ref>> xref;
  B da, db, dc, dd, dx;
  Kokkos::View<int*> info;

  WindowCase(int nsys_, int n_, const std::function<Kind(int)>& kind, unsigned seed)
      : nsys(nsys_),
        n(n_),
        a(size_t(nsys_) * n_),
        b(a.size()),
        c(a.size()),
        d(a.size()),
        da("a", nsys_, n_),
        db("b", nsys_, n_),
        dc("c", nsys_, n_),
        dd("d", nsys_, n_),
        dx("x", nsys_, n_),
        info("info", nsys_) {
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int s = 0; s < nsys; ++s) {
      const Kind k = kind(s);
      for (int j = 0; j < n; ++j) {
        const size_t i = size_t(s) * n + j;
        if (k == Kind::Strong) {
          a[i] = T(u(gen));
          c[i] = T(u(gen));
          b[i] = T(3.5 + 0.5 * u(gen));
        } else if (k == Kind::Compact) {
          a[i] = T(1) / T(3);
          c[i] = T(1) / T(3);
          b[i] = T(1);
        } else if (k == Kind::Weak) {
          a[i] = T(-1 + 0.1 * std::fabs(u(gen)));
          c[i] = T(-1 + 0.1 * std::fabs(u(gen)));
          b[i] = T(2.001);
        } else {
          a[i] = T(u(gen));
          c[i] = T(u(gen));
          const double bb = u(gen);
          b[i] = T(bb + (bb < 0 ? -0.25 : 0.25));
        }
        d[i] = T(u(gen));
      }
      DenseLU lu(dense_tridiagonal(n, &a[size_t(s) * n], &b[size_t(s) * n], &c[size_t(s) * n], false), n);
      xref.push_back(lu.solve(&d[size_t(s) * n]));
    }
    upload(da, a);
    upload(db, b);
    upload(dc, c);
    upload(dd, d);
  }

  static void upload(const B& dst, const std::vector<T>& v) {
    Host<B> h(dst);
    h.to_host();
    // padding slots (grouped batches) hold the sentinel that padding_damage checks
    for (int s = 0; s < h.slots(); ++s)
      for (int j = 0; j < h.n(); ++j) h(s, j) = s < h.nsys() ? v[size_t(s) * h.n() + j] : pad_sentinel<T>();
    h.to_device();
  }

  /// Solves with Variant::Window into x (or d: in place) with a caller's
  /// workspace full of a sentinel; returns for each system whether its
  /// workspace rows were written (it went past the ring). Checks info 0
  /// and the reference (tol relative to ||x||_inf) for every system.
  std::vector<bool> solve_and_check(bool inplace, double tol, int team_size = 0,
                                    kband::Variant variant = kband::Variant::Window, bool gtsv = false) {
    const B& xo = inplace ? dd : dx;
    if (inplace) upload(dd, d);
    {
      Host<B> hx(xo);
      hx.to_host();
      if (!inplace) poison(hx, nan_value<T>());
      hx.to_device();
      Kokkos::deep_copy(info, kInfoPoison);
    }
    const T sentinel = T(12345);
    Kokkos::View<T*> ws("ws", gtsv ? kband::gtsv_workspace_size(xo) : kband::thomas_workspace_size(xo));
    Kokkos::deep_copy(ws, sentinel);
    fill_team_scratch(Exec(), nan_value<T>());
    kband::SolveOptions opt;
    opt.variant = variant;
    opt.team_size = team_size;
    if (gtsv)
      kband::gtsv(Exec(), da, db, dc, dd, xo, info, opt, ws);
    else
      kband::thomas(Exec(), da, db, dc, dd, xo, info, opt, ws);
    Host<B> hx(xo);
    hx.to_host();
    auto hi = Kokkos::create_mirror_view(info);
    Kokkos::deep_copy(hi, info);
    auto hw = Kokkos::create_mirror_view(ws);
    Kokkos::deep_copy(hw, ws);
    // the workspace is laid out like the batch: system s's rows are where
    // x's are
    using WMap = kband::impl::WorkspaceMap<kband::impl::batch_traits<B>::layout, kband::impl::batch_traits<B>::sz>;
    std::vector<bool> spilled(nsys, false);
    std::vector<T> row(n);
    for (int s = 0; s < nsys; ++s) {
      for (int j = 0; j < n; ++j) {
        row[j] = hx(s, j);
        if (hw(WMap::offset(s, nsys, n) + size_t(j) * WMap::row_stride(nsys, n)) != sentinel) spilled[s] = true;
      }
      EXPECT_EQ(hi(s), 0) << "s=" << s;
      const double err = relative_error_inf(n, row.data(), xref[s].data());
      EXPECT_LE(err, tol) << "n=" << n << " nsys=" << nsys << " s=" << s << (inplace ? " in place" : "")
                          << (spilled[s] ? " (past the ring)" : " (in the ring)");
    }
    EXPECT_EQ(padding_damage(hx), 0);
    EXPECT_EQ(differs(da, a) + differs(db, b) + differs(dc, c), 0);
    if (!inplace) {
      EXPECT_EQ(differs(dd, d), 0);
    }
    return spilled;
  }

  int differs(const B& dev, const std::vector<T>& v) const {
    Host<B> h(dev);
    h.to_host();
    int k = 0;
    for (int s = 0; s < nsys; ++s)
      for (int j = 0; j < n; ++j) k += h(s, j) == v[size_t(s) * n + j] ? 0 : 1;
    return k;
  }
};

template <class C>
class ThomasWindow : public ::testing::Test {};
using WindowConfigs = ::testing::Types<Cfg<double, ContiguousTag>, Cfg<double, InterleavedTag>,
                                       Cfg<double, GroupedTag<kSZ>>, Cfg<float, InterleavedTag>,
                                       Cfg<float, GroupedTag<kOtherSZ>>>;
TYPED_TEST_SUITE(ThomasWindow, WindowConfigs, CfgNames);

template <class T>
double window_tol() {
  return sizeof(T) >= 8 ? 1e-13 : 1e-5;
}

// Strongly dominant systems stay in the ring (the workspace is not touched)
// at every size around the ring's blocks, in place too.
TYPED_TEST(ThomasWindow, StrongSystemsStayInTheRing) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  constexpr int kRing = kband::impl::WindowShape<T>::R, kBlock = kband::impl::WindowShape<T>::B;
  unsigned seed = 11;
  for (int n : {1, 2, 3, 5, kBlock - 1, kBlock, kBlock + 1, 2 * kBlock + 3, kRing - 1, kRing, kRing + 1, 100, 333,
                1000, 4099})
    for (int nsys : {1, 7, L::sz + 1, 70}) {
      if (n > 1000 && nsys > 7) continue;
      WindowCase<T, L> p(nsys, n, [](int) { return Kind::Strong; }, ++seed);
      for (bool inplace : {false, true}) {
        const std::vector<bool> sp = p.solve_and_check(inplace, window_tol<T>());
        for (int s = 0; s < nsys; ++s) EXPECT_FALSE(sp[s]) << "n=" << n << " s=" << s << " left the ring";
      }
    }
}

// The compact scheme's matrix (lag 38 in double) stays in the ring.
TYPED_TEST(ThomasWindow, CompactSchemeStaysInTheRing) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  WindowCase<T, L> p(L::sz + 3, 700, [](int) { return Kind::Compact; }, 3);
  const std::vector<bool> sp = p.solve_and_check(false, window_tol<T>());
  for (size_t s = 0; s < sp.size(); ++s) EXPECT_FALSE(sp[s]) << "s=" << s << " left the ring";
}

// Weakly dominant systems need more rows than the ring holds: they go on in
// the workspace, next to strong ones in the same teams (and warps), and
// general systems (|c'| > 1 in places) wherever their lag takes them.
TYPED_TEST(ThomasWindow, LongLagsGoOnInTheWorkspace) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  constexpr int kRing = kband::impl::WindowShape<T>::R, kBlock = kband::impl::WindowShape<T>::B;
  unsigned seed = 101;
  for (int n : {kRing - kBlock, kRing + 5, 200, 1000})
    for (int nsys : {3, L::sz + 1, 70}) {
      WindowCase<T, L> p(nsys, n, [](int s) { return s % 3 == 1 ? Kind::Weak : (s % 3 == 2 ? Kind::General : Kind::Strong); },
                         ++seed);
      for (bool inplace : {false, true}) {
        // weak systems: condition numbers of some 10^3..10^4
        const std::vector<bool> sp = p.solve_and_check(inplace, sizeof(T) >= 8 ? 1e-11 : 2e-3);
        for (int s = 0; s < nsys; ++s) {
          if (s % 3 == 0) {
            EXPECT_FALSE(sp[s]) << "n=" << n << " s=" << s << ": a strong system left the ring";
          }
          // a weak system's lag (hundreds of rows in double) passes the ring
          // once its rows do
          if (s % 3 == 1 && n > kRing && sizeof(T) >= 8) {
            EXPECT_TRUE(sp[s]) << "n=" << n << " s=" << s;
          }
        }
      }
    }
}

// Auto on GPUs: interleaved and grouped batches past the Registers kernels'
// sizes take Window (given a workspace), which leaves the workspace alone on
// strongly dominant systems where the Global variant would fill it.
TYPED_TEST(ThomasWindow, AutoTakesItOnGpus) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  constexpr bool served = kband::impl::is_device_exec<Exec>::value &&
                          kband::impl::batch_traits<typename L::template batch<T>>::layout != kband::Layout::Contiguous;
  if constexpr (!served) {
    GTEST_SKIP() << "Auto takes Window on GPUs for interleaved and grouped batches only";
  } else {
    for (int n : {700, 2100}) {
      WindowCase<T, L> p(L::sz + 5, n, [](int) { return Kind::Strong; }, 17 + n);
      const std::vector<bool> sp = p.solve_and_check(false, window_tol<T>(), 0, kband::Variant::Auto);
      for (size_t s = 0; s < sp.size(); ++s) EXPECT_FALSE(sp[s]) << "n=" << n << " s=" << s << ": workspace written";
    }
  }
}

// kband::gtsv's Window (the pentadiagonal window on its pivoted LU): strong
// systems stay in the ring (no interchange happens in them), general ones
// (interchanges, |U| growth) and weak ones next to them go on in the
// workspace, in place too.
TYPED_TEST(ThomasWindow, Gtsv) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  constexpr int kRing = kband::impl::PentaWindowShape<T>::R;
  unsigned seed = 501;
  for (int n : {1, 2, 3, 9, kRing - 1, kRing + 1, 200, 1000}) {
    for (int nsys : {1, L::sz + 1, 40}) {
      WindowCase<T, L> strong(nsys, n, [](int) { return Kind::Strong; }, ++seed);
      for (bool inplace : {false, true}) {
        const std::vector<bool> sp = strong.solve_and_check(inplace, window_tol<T>(), 0, kband::Variant::Window, true);
        for (int s = 0; s < nsys; ++s) EXPECT_FALSE(sp[s]) << "n=" << n << " s=" << s << " left the ring";
      }
    }
    WindowCase<T, L> mixed(L::sz + 5, n,
                           [](int s) { return s % 3 == 1 ? Kind::General : (s % 3 == 2 ? Kind::Weak : Kind::Strong); },
                           ++seed);
    for (bool inplace : {false, true}) mixed.solve_and_check(inplace, sizeof(T) >= 8 ? 1e-10 : 2e-3, 0,
                                                             kband::Variant::Window, true);
  }
}

// Teams of other sizes (a thread per system; the ring's slots by team rank).
TYPED_TEST(ThomasWindow, TeamSizes) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  const std::vector<int> sizes = kband::impl::is_device_exec<Exec>::value ? std::vector<int>{1, 8, 16}
                                                                          : std::vector<int>{1};
  for (int ts : sizes) {
    WindowCase<T, L> p(45, 150, [](int s) { return s % 5 == 3 ? Kind::Weak : Kind::Strong; }, 7 + ts);
    p.solve_and_check(false, sizeof(T) >= 8 ? 1e-11 : 2e-3, ts);
  }
}

// A zero pivot after many rows were written: info is the 1-based row, x of
// that system NaN, every other system solved.
TYPED_TEST(ThomasWindow, ZeroPivotAfterWrittenRows) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  const int n = 300, nsys = 9;
  WindowCase<T, L> p(nsys, n, [](int s) { return s == 4 ? Kind::Weak : Kind::Strong; }, 5);
  for (int bad : {2, 4}) {  // a strong and a weak system
    const size_t i = size_t(bad) * n + 200;
    p.a[i] = T(0);
    p.b[i] = T(0);
  }
  WindowCase<T, L>::upload(p.da, p.a);
  WindowCase<T, L>::upload(p.db, p.b);
  kband::SolveOptions opt;
  opt.variant = kband::Variant::Window;
  using B = typename L::template batch<T>;
  {
    Host<B> hx(p.dx);
    hx.to_host();
    poison(hx, T(-3));
    hx.to_device();
  }
  kband::thomas(Exec(), p.da, p.db, p.dc, p.dd, p.dx, p.info, opt);
  Host<B> hx(p.dx);
  hx.to_host();
  auto hi = Kokkos::create_mirror_view(p.info);
  Kokkos::deep_copy(hi, p.info);
  std::vector<T> row(n);
  for (int s = 0; s < nsys; ++s) {
    for (int j = 0; j < n; ++j) row[j] = hx(s, j);
    if (s == 2 || s == 4) {
      EXPECT_EQ(hi(s), 201) << "s=" << s;
      int nans = 0;
      for (int j = 0; j < n; ++j) nans += std::isnan(static_cast<double>(row[j])) ? 1 : 0;
      EXPECT_EQ(nans, n) << "s=" << s;
    } else {
      EXPECT_EQ(hi(s), 0) << "s=" << s;
      EXPECT_LE(relative_error_inf(n, row.data(), p.xref[s].data()), sizeof(T) >= 8 ? 1e-11 : 2e-3) << "s=" << s;
    }
  }
}

}  // namespace
}  // namespace kband_test
