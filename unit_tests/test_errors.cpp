// Argument errors: every bad call throws kband::Error naming the culprit and
// leaves every View of the caller bit-for-bit unchanged.
#include "kband_test_common.hpp"

namespace kband_test {
namespace {

/// Bit-exact host copies of a set of batches / Views, taken before a call.
class Snapshot {
 public:
  template <class... Vs>
  explicit Snapshot(const Vs&... vs) {
    (void)std::initializer_list<int>{(data_.push_back(snapshot(vs)), 0)...};
  }
  template <class... Vs>
  bool unchanged(const Vs&... vs) const {
    std::vector<std::vector<unsigned char>> now;
    (void)std::initializer_list<int>{(now.push_back(snapshot(vs)), 0)...};
    return now == data_;
  }

 private:
  std::vector<std::vector<unsigned char>> data_;
};

/// EXPECT_THROW(f(), kband::Error), then checks the message contains every needle.
template <class F>
void expect_error(const std::string& what, F&& f, std::initializer_list<const char*> needles) {
  EXPECT_THROW(f(), kband::Error) << what;
  try {
    f();
  } catch (const kband::Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("kband", 0), 0u) << what << ": message does not start with kband: " << msg;
    for (const char* needle : needles)
      EXPECT_NE(msg.find(needle), std::string::npos) << what << ": message \"" << msg << "\" lacks " << needle;
  } catch (...) {
  }
}

template <class B>
B random_batch(const std::string& label, int nsys, int n, std::uint64_t seed, double shift = 0) {
  B b(label, nsys, n);
  Host<B> h(b);
  Rng rng(seed);
  poison(h, 0);
  for (int s = 0; s < nsys; ++s)
    for (int j = 0; j < n; ++j) h(s, j) = static_cast<typename Host<B>::value_type>(shift + rng.uniform(-1, 1));
  h.to_device();
  return b;
}

template <class B>
B poisoned_batch(const std::string& label, int nsys, int n) {
  B b(label, nsys, n);
  Host<B> h(b);
  poison(h, nan_value<typename Host<B>::value_type>());
  h.to_device();
  return b;
}

inline Kokkos::View<int*> poisoned_info(int len) {
  Kokkos::View<int*> info("info", len);
  Kokkos::deep_copy(info, kInfoPoison);
  return info;
}

template <class C>
class ThomasErrors : public ::testing::Test {};
// Every bad call still instantiates its kernels (the checks are run-time), so
// this suite is kept to one value type and a few combinations per layout.
using ErrorConfigs =
    ::testing::Types<Cfg<double, ContiguousTag>, Cfg<double, InterleavedTag>, Cfg<double, GroupedTag<kSZ>>>;
TYPED_TEST_SUITE(ThomasErrors, ErrorConfigs, CfgNames);

/// A valid problem (dominant, n = 5) whose Views the error tests misuse.
template <class T, class L>
struct Valid {
  using B = typename L::template batch<T>;
  using Other = typename L::other::template batch<T>;  // another layout or SZ
  static constexpr int n = 5;
  const int nsys = L::sz + 1;
  B a = random_batch<B>("a", nsys, n, 1);
  B b = random_batch<B>("b", nsys, n, 2, 4.0);
  B c = random_batch<B>("c", nsys, n, 3);
  B d = random_batch<B>("d", nsys, n, 4);
  B x = poisoned_batch<B>("x", nsys, n);
  Kokkos::View<int*> info = poisoned_info(nsys);
};

template <bool Periodic, class BA, class BB, class BC, class BD, class BX, class I>
void solve(const BA& a, const BB& b, const BC& c, const BD& d, const BX& x, const I& info) {
  Exec exec;
  if (Periodic)
    kband::periodic_thomas(exec, a, b, c, d, x, info);
  else
    kband::thomas(exec, a, b, c, d, x, info);
  exec.fence();
}

template <bool Periodic, class T, class L>
void wrong_extents() {
  using V = Valid<T, L>;
  using B = typename V::B;
  V v;
  const int nsys = v.nsys, n = V::n;
  const std::string fn = Periodic ? "periodic_thomas" : "thomas";
  const B x_n = poisoned_batch<B>("x_n", nsys, n + 1);
  const B x_s = poisoned_batch<B>("x_s", nsys + 1, n);
  const B d_s = random_batch<B>("d_s", nsys + 1, n, 5);
  const B a_n = random_batch<B>("a_n", nsys, n + 1, 6);
  const B b_s = random_batch<B>("b_s", nsys - 1, n, 7, 4.0);
  const B c_n = random_batch<B>("c_n", nsys, n - 1, 8);
  const auto info_short = poisoned_info(nsys - 1), info_long = poisoned_info(nsys + 1);
  const Snapshot snap(v.a, v.b, v.c, v.d, v.x, v.info, x_n, x_s, d_s, a_n, b_s, c_n, info_short, info_long);

  // kband checks every argument against x's extents, so a wrong x is reported
  // through the first argument that disagrees with it (see the report).
  expect_error(fn + ": x with n+1 rows", [&] { solve<Periodic>(v.a, v.b, v.c, v.d, x_n, v.info); },
               {"extents"});
  expect_error(fn + ": x with nsys+1 systems", [&] { solve<Periodic>(v.a, v.b, v.c, v.d, x_s, v.info); },
               {"extents"});
  expect_error(fn + ": d with nsys+1 systems", [&] { solve<Periodic>(v.a, v.b, v.c, d_s, v.x, v.info); },
               {"'d'", "nsys="});
  expect_error(fn + ": a with n+1 rows", [&] { solve<Periodic>(a_n, v.b, v.c, v.d, v.x, v.info); }, {"'a'"});
  expect_error(fn + ": b with nsys-1 systems", [&] { solve<Periodic>(v.a, b_s, v.c, v.d, v.x, v.info); },
               {"'b'"});
  expect_error(fn + ": c with n-1 rows", [&] { solve<Periodic>(v.a, v.b, c_n, v.d, v.x, v.info); }, {"'c'"});
  expect_error(fn + ": info too short", [&] { solve<Periodic>(v.a, v.b, v.c, v.d, v.x, info_short); },
               {"'info'"});
  expect_error(fn + ": info too long", [&] { solve<Periodic>(v.a, v.b, v.c, v.d, v.x, info_long); },
               {"'info'"});
  EXPECT_TRUE(snap.unchanged(v.a, v.b, v.c, v.d, v.x, v.info, x_n, x_s, d_s, a_n, b_s, c_n, info_short,
                             info_long))
      << fn << ": a rejected call modified a View";
}

TYPED_TEST(ThomasErrors, WrongExtents) {
  wrong_extents<false, typename TypeParam::value_type, typename TypeParam::layout>();
}
TYPED_TEST(ThomasErrors, PeriodicWrongExtents) {
  wrong_extents<true, typename TypeParam::value_type, typename TypeParam::layout>();
}

TYPED_TEST(ThomasErrors, SizeBelowMinimum) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename L::template batch<T>;
  const int nsys = L::sz + 1;
  {  // n = 0
    const B a = random_batch<B>("a", nsys, 0, 1), b = random_batch<B>("b", nsys, 0, 2), c = random_batch<B>("c", nsys, 0, 3),
            d = random_batch<B>("d", nsys, 0, 4), x = poisoned_batch<B>("x", nsys, 0);
    const auto info = poisoned_info(nsys);
    const Snapshot snap(a, b, c, d, x, info);
    expect_error("thomas n=0", [&] { solve<false>(a, b, c, d, x, info); }, {"n=0", "minimum is 1"});
    expect_error("periodic_thomas n=0", [&] { solve<true>(a, b, c, d, x, info); }, {"n=0", "minimum is 3"});
    EXPECT_TRUE(snap.unchanged(a, b, c, d, x, info));
  }
  for (int n : {1, 2}) {  // periodic needs n >= 3
    const B a = random_batch<B>("a", nsys, n, 1), b = random_batch<B>("b", nsys, n, 2, 4.0),
            c = random_batch<B>("c", nsys, n, 3), d = random_batch<B>("d", nsys, n, 4),
            x = poisoned_batch<B>("x", nsys, n);
    const auto info = poisoned_info(nsys);
    const Snapshot snap(a, b, c, d, x, info);
    expect_error("periodic_thomas n=" + std::to_string(n), [&] { solve<true>(a, b, c, d, x, info); },
                 {"minimum is 3"});
    EXPECT_TRUE(snap.unchanged(a, b, c, d, x, info));
  }
}

// nsys = 0 is a valid, empty batch: nothing to do, nothing thrown.
TYPED_TEST(ThomasErrors, EmptyBatchIsANoOp) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename L::template batch<T>;
  const B a("a", 0, 5), b("b", 0, 5), c("c", 0, 5), d("d", 0, 5), x("x", 0, 5);
  const Kokkos::View<int*> info("info", 0);
  EXPECT_NO_THROW((solve<false>(a, b, c, d, x, info)));
  EXPECT_NO_THROW((solve<true>(a, b, c, d, x, info)));
}

TYPED_TEST(ThomasErrors, MismatchedLayouts) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using V = Valid<T, L>;
  using Other = typename V::Other;
  V v;
  const Other a_o = random_batch<Other>("a_other", v.nsys, V::n, 11);
  const Other d_o = random_batch<Other>("d_other", v.nsys, V::n, 12);
  const Other c_o = random_batch<Other>("c_other", v.nsys, V::n, 13);
  const kband::InterleavedBatch<T> b_i = random_batch<kband::InterleavedBatch<T>>("b_i", v.nsys, V::n, 14, 4.0);
  const kband::ContiguousBatch<T> b_c = random_batch<kband::ContiguousBatch<T>>("b_c", v.nsys, V::n, 15, 4.0);
  const Snapshot snap(v.a, v.b, v.c, v.d, v.x, v.info, a_o, d_o, c_o, b_i, b_c);
  for (bool periodic : {false, true}) {
    const std::string fn = periodic ? "periodic_thomas" : "thomas";
    auto run = [&](const auto& a, const auto& b, const auto& c, const auto& d) {
      if (periodic)
        solve<true>(a, b, c, d, v.x, v.info);
      else
        solve<false>(a, b, c, d, v.x, v.info);
    };
    expect_error(fn + ": a of another layout/SZ", [&] { run(a_o, v.b, v.c, v.d); }, {"'a'"});
    expect_error(fn + ": d of another layout/SZ", [&] { run(v.a, v.b, v.c, d_o); }, {"'d'"});
  }
  expect_error("thomas: c of another layout/SZ", [&] { solve<false>(v.a, v.b, c_o, v.d, v.x, v.info); }, {"'c'"});
  if constexpr (!std::is_same<L, InterleavedTag>::value)
    expect_error("thomas: b interleaved", [&] { solve<false>(v.a, b_i, v.c, v.d, v.x, v.info); },
                 {"'b'", "interleaved"});
  else
    expect_error("thomas: b contiguous", [&] { solve<false>(v.a, b_c, v.c, v.d, v.x, v.info); },
                 {"'b'", "contiguous"});
  EXPECT_TRUE(snap.unchanged(v.a, v.b, v.c, v.d, v.x, v.info, a_o, d_o, c_o, b_i, b_c));
}

TYPED_TEST(ThomasErrors, OutputAliasesCoefficients) {
  using V = Valid<typename TypeParam::value_type, typename TypeParam::layout>;
  V v;
  const Snapshot snap(v.a, v.b, v.c, v.d, v.x, v.info);
  for (bool periodic : {false, true}) {
    const std::string fn = periodic ? "periodic_thomas" : "thomas";
    auto run = [&](const typename V::B& x) {
      if (periodic)
        solve<true>(v.a, v.b, v.c, v.d, x, v.info);
      else
        solve<false>(v.a, v.b, v.c, v.d, x, v.info);
    };
    expect_error(fn + ": x is a", [&] { run(v.a); }, {"alias"});
    expect_error(fn + ": x is b", [&] { run(v.b); }, {"alias"});
    expect_error(fn + ": x is c", [&] { run(v.c); }, {"x must not alias a, b or c (it may alias d)"});
  }
  EXPECT_TRUE(snap.unchanged(v.a, v.b, v.c, v.d, v.x, v.info));
}

// Solvers that do not offer `variant` refuse it with a kband::Error that
// names it, and leave every View as it was: periodic per-system systems
// (Registers), per-system thomas (Recompute, which is for shared factors and
// gtsv).
template <class V>
void expect_variant_refused(V& v, kband::Variant variant, const std::string& name, bool thomas_too,
                            bool gtsv_too = true) {
  const Snapshot snap(v.a, v.b, v.c, v.d, v.x, v.info);
  Exec exec;
  kband::SolveOptions opt;
  opt.variant = variant;
  const std::string offered = "Variant::" + name + " is offered by kband::thomas";
  if (thomas_too)
    expect_error("thomas " + name, [&] { kband::thomas(exec, v.a, v.b, v.c, v.d, v.x, v.info, opt); },
                 {"kband::thomas", offered.c_str()});
  expect_error("periodic_thomas " + name,
               [&] { kband::periodic_thomas(exec, v.a, v.b, v.c, v.d, v.x, v.info, opt); },
               {"periodic_thomas", offered.c_str()});
  if (gtsv_too)
    expect_error("gtsv " + name, [&] { kband::gtsv(exec, v.a, v.b, v.c, v.d, v.x, v.info, opt); },
                 {"gtsv", offered.c_str()});
  EXPECT_TRUE(snap.unchanged(v.a, v.b, v.c, v.d, v.x, v.info));
}

/// A team kernel that does nothing: asks a backend for its largest team.
struct NoTeamWork {
  KOKKOS_INLINE_FUNCTION void operator()(const Kokkos::TeamPolicy<Exec>::member_type&) const {}
};

// Variant::Registers where it is not offered; and on a host backend whose
// teams hold fewer than 5 threads (Serial; OpenMP with fewer threads),
// systems of 5 chunks.
TYPED_TEST(ThomasErrors, RegistersWhereNotOffered) {
  using V = Valid<typename TypeParam::value_type, typename TypeParam::layout>;
  V v;
  expect_variant_refused(v, kband::Variant::Registers, "Registers", false, false);
  const int team_max = Kokkos::TeamPolicy<Exec>(Exec(), 1, 1).team_size_max(NoTeamWork(), Kokkos::ParallelForTag());
  if (!kband::impl::is_device_exec<Exec>::value && team_max < 5) {
    Exec exec;
    kband::SolveOptions opt;
    opt.variant = kband::Variant::Registers;
    using B = typename V::B;
    const int nsys = v.nsys, n = 40;
    B a = random_batch<B>("a", nsys, n, 1), b = random_batch<B>("b", nsys, n, 2, 4.0);
    B c = random_batch<B>("c", nsys, n, 3), d = random_batch<B>("d", nsys, n, 4);
    B x = poisoned_batch<B>("x", nsys, n);
    const Snapshot snap2(a, b, c, d, x, v.info);
    expect_error("thomas Registers n=40 on a host backend",
                 [&] { kband::thomas(exec, a, b, c, d, x, v.info, opt); },
                 {"Variant::Registers needs 5 threads per team for n=40"});
    expect_error("gtsv Registers n=40 on a host backend", [&] { kband::gtsv(exec, a, b, c, d, x, v.info, opt); },
                 {"kband::gtsv", "Variant::Registers needs 5 threads per team for n=40"});
    EXPECT_TRUE(snap2.unchanged(a, b, c, d, x, v.info));
  }
}

// Variant::Recompute is for shared factors and gtsv.
TYPED_TEST(ThomasErrors, RecomputeWhereNotOffered) {
  Valid<typename TypeParam::value_type, typename TypeParam::layout> v;
  expect_variant_refused(v, kband::Variant::Recompute, "Recompute", true, false);
}

// Variant::Window is for per-system, non-periodic thomas and penta, and
// gtsv: periodic_thomas, shared factors, pcr and periodic_penta refuse it.
TYPED_TEST(ThomasErrors, WindowWhereNotOffered) {
  using T = typename TypeParam::value_type;
  using V = Valid<T, typename TypeParam::layout>;
  V v;
  expect_variant_refused(v, kband::Variant::Window, "Window", false, false);
  Exec exec;
  kband::SolveOptions opt;
  opt.variant = kband::Variant::Window;
  Kokkos::View<T*> a1("a1", V::n), b1("b1", V::n), c1("c1", V::n);
  Kokkos::deep_copy(b1, T(4));
  const kband::TridiagonalFactor<T> factor(exec, a1, b1, c1);
  const Snapshot snap(v.a, v.b, v.c, v.d, v.x, v.info);
  expect_error("shared thomas Window", [&] { kband::thomas(exec, factor, v.d, v.x, v.info, opt); },
               {"kband::thomas(shared)", "Variant::Window is offered by kband::thomas"});
  expect_error("pcr Window", [&] { kband::pcr(exec, v.a, v.b, v.c, v.d, v.x, v.info, opt); },
               {"kband::pcr", "window"});
  expect_error("periodic_penta Window",
               [&] { kband::periodic_penta(exec, v.a, v.b, v.c, v.a, v.c, v.d, v.x, v.info, opt); },
               {"kband::periodic_penta", "Variant::Window is offered by kband::thomas, kband::penta"});
  EXPECT_TRUE(snap.unchanged(v.a, v.b, v.c, v.d, v.x, v.info));
}

TYPED_TEST(ThomasErrors, SharedFactorMisuse) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using V = Valid<T, L>;
  using B = typename V::B;
  V v;
  Exec exec;
  const int n = V::n, nsys = v.nsys;
  Kokkos::View<T*> a1("a1", n), b1("b1", n), c1("c1", n), a_short("a_short", n - 1);
  Kokkos::deep_copy(a1, T(-1));
  Kokkos::deep_copy(b1, T(4));
  Kokkos::deep_copy(c1, T(-1));
  Kokkos::deep_copy(a_short, T(-1));
  Kokkos::View<T*> e0("e0", 0), e2a("e2a", 2), e2b("e2b", 2), e2c("e2c", 2);
  const kband::TridiagonalFactor<T> factor(exec, a1, b1, c1);
  const kband::TridiagonalFactor<T> empty;
  ASSERT_EQ(factor.info(), 0);
  const B x6 = poisoned_batch<B>("x6", nsys, n + 1), d6 = random_batch<B>("d6", nsys, n + 1, 21);
  const B d_s = random_batch<B>("d_s", nsys + 1, n, 22);
  const typename V::Other d_o = random_batch<typename V::Other>("d_other", nsys, n, 23);
  const auto info_short = poisoned_info(nsys - 1);
  const Snapshot snap(v.d, v.x, v.info, a1, b1, c1, a_short, x6, d6, d_s, d_o, info_short);
  auto solve_shared = [&](const kband::TridiagonalFactor<T>& f, const auto& d, const B& x,
                          const Kokkos::View<int*>& info) {
    kband::thomas(exec, f, d, x, info);
    exec.fence();
  };
  expect_error("factor built for n=5, x and d with n=6", [&] { solve_shared(factor, d6, x6, v.info); },
               {"factor was built for n=5"});
  expect_error("default-constructed factor", [&] { solve_shared(empty, v.d, v.x, v.info); }, {"empty"});
  expect_error("shared: d with nsys+1", [&] { solve_shared(factor, d_s, v.x, v.info); }, {"'d'"});
  expect_error("shared: d of another layout/SZ", [&] { solve_shared(factor, d_o, v.x, v.info); }, {"'d'"});
  expect_error("shared: info too short", [&] { solve_shared(factor, v.d, v.x, info_short); }, {"'info'"});
  // Construction errors.
  using F = kband::TridiagonalFactor<T>;
  expect_error("factor: periodic n=2", [&] { F f(exec, e2a, e2b, e2c, kband::Boundary::Periodic); },
               {"minimum is 3"});
  expect_error("factor: n=0", [&] { F f(exec, e0, e0, e0); }, {"n=0"});
  expect_error("factor: a shorter than b", [&] { F f(exec, a_short, b1, c1); }, {"one length"});
  EXPECT_TRUE(snap.unchanged(v.d, v.x, v.info, a1, b1, c1, a_short, x6, d6, d_s, d_o, info_short));
}

// Layout utilities reject mismatched extents, naming the argument.
TYPED_TEST(ThomasErrors, LayoutUtilities) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename L::template batch<T>;
  Exec exec;
  const int nsys = L::sz + 1, n = 5;
  const B src = random_batch<B>("src", nsys, n, 31);
  const kband::ContiguousBatch<T> dst_s = random_batch<kband::ContiguousBatch<T>>("dst_s", nsys + 1, n, 32);
  const kband::GroupedBatch<T, kSZ> dst_n = random_batch<kband::GroupedBatch<T, kSZ>>("dst_n", nsys, n + 1, 33);
  Kokkos::View<T***> field("field", 5, 6, 7);
  const B lines = random_batch<B>("lines", 6 * 7 + 1, 5, 34);  // x-lines need nsys = 42
  const Snapshot snap(src, dst_s, dst_n, field, lines);
  expect_error("convert: dst with nsys+1", [&] { kband::convert(exec, src, dst_s); }, {"'dst'"});
  expect_error("convert: dst with n+1", [&] { kband::convert(exec, src, dst_n); }, {"'dst'"});
  expect_error("field_to_lines: wrong line count",
               [&] { kband::field_to_lines(exec, kband::Direction::X, field, lines); }, {"'lines'"});
  expect_error("lines_to_field: wrong line count",
               [&] { kband::lines_to_field(exec, kband::Direction::X, lines, field); }, {"'lines'"});
  expect_error("accumulate_lines_to_field: wrong line count",
               [&] { kband::accumulate_lines_to_field(exec, kband::Direction::Y, lines, field, T(2)); },
               {"'lines'"});
  exec.fence();
  EXPECT_TRUE(snap.unchanged(src, dst_s, dst_n, field, lines));
}

TEST(GroupedBatchErrors, ConstructionAndCopy) {
  using G = kband::GroupedBatch<double, kSZ>;
  expect_error("negative nsys", [] { G g("g", -1, 3); }, {"non-negative"});
  expect_error("negative n", [] { G g("g", 3, -1); }, {"non-negative"});
  typename G::view_type storage("storage", 2, 3);
  expect_error("wrap: too few groups", [&] { G g(storage, 2 * kSZ + 1); }, {"groups"});
  expect_error("wrap: too many groups", [&] { G g(storage, kSZ); }, {"groups"});
  EXPECT_NO_THROW(G(storage, 2 * kSZ));
  EXPECT_NO_THROW(G(storage, kSZ + 1));
  const G a("a", 5, 3), b("b", 6, 3), c("c", 5, 4);
  auto ha = kband::create_mirror_view(a);
  expect_error("deep_copy nsys differ", [&] { kband::deep_copy(b, ha); }, {"extents differ"});
  expect_error("deep_copy n differ", [&] { kband::deep_copy(c, ha); }, {"extents differ"});
  Exec exec;
  expect_error("deep_copy(exec) nsys differ", [&] { kband::deep_copy(exec, b, ha); }, {"extents differ"});
}

}  // namespace
}  // namespace kband_test
