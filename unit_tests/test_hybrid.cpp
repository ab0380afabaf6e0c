// kband::hybrid (Thomas-PCR hybrid for long systems) and solve_tridiagonal's
// choice of it, against long double references.
//
// References: the dense LU of kband_test_reference.hpp (DenseLU, through the
// shared case cache) for n <= 1000; beyond, where DenseLU would need n^2 long
// doubles, the O(n) long double pivoted tridiagonal LU (TridiagLU,
// kband_test_solvers.hpp, checked against DenseLU in GTSVReference).
//
// Accuracy bound (diagonally dominant family, kband_test_common.hpp):
// ||x - xref||_inf / ||xref||_inf <= Tol<T>::dominant (1e-13 double, 2e-5
// float), the Thomas and PCR bound. Observed maxima on Serial (g++ 12,
// Release, every case below): double 5.5e-16, float 2.8e-7 (printed at the
// end of the run, "hybrid" keys).
//
// HybridOptions with small chunks and segments force the multi-segment path
// (Reduce, the recursive reduced solve, Substitute) at every n >= 5, with
// chunk and segment counts that do not divide n.
#include "kband_test_solvers.hpp"

namespace kband_test {
namespace {

const std::vector<int>& hybrid_n_list() {
  static const std::vector<int> v{1, 2, 3, 4, 5, 7, 8, 11, 16, 31, 64, 100, 1000, 5000};
  return v;
}
// 10: not a multiple of the lanes per team (4 or 8 on GPUs) nor of SZ.
const std::vector<int>& hybrid_nsys_list() {
  static const std::vector<int> v{1, 3, 10};
  return v;
}
/// kband's choice; the smallest chunks and segments (deepest recursion);
/// chunk and segment sizes that divide nothing; a forced GPU team size.
std::vector<kband::HybridOptions> hybrid_options() {
  std::vector<kband::HybridOptions> v(5);
  v[1].chunk_rows = 2;
  v[1].segment_rows = 4;
  v[2].chunk_rows = 3;
  v[2].segment_rows = 10;
  v[3].chunk_rows = 5;
  v[3].segment_rows = 37;
  v[4].chunk_rows = 16;
  v[4].segment_rows = 300;
  v[4].team_size = 32;
  return v;
}

std::string describe(const std::string& layout, const char* type, int n, int nsys, const kband::HybridOptions& o,
                     bool inplace) {
  std::ostringstream os;
  os << "hybrid " << layout << " " << type << " n=" << n << " nsys=" << nsys << " chunk=" << o.chunk_rows
     << " segment=" << o.segment_rows << " team=" << o.team_size << (inplace ? " in-place" : "");
  return os.str();
}

/// Dominant systems checked against TridiagLU (n too large for DenseLU).
template <class T>
const Case<T>& long_case(int n, int nsys) {
  static std::map<std::pair<int, int>, Case<T>> cache;
  auto it = cache.find({n, nsys});
  if (it != cache.end()) return it->second;
  Case<T> cs;
  cs.n = n;
  cs.nsys = nsys;
  Rng rng(mix_seed({sizeof(T), static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(nsys), 31337}));
  const size_t N = static_cast<size_t>(nsys) * n;
  cs.a.resize(N);
  cs.b.resize(N);
  cs.c.resize(N);
  cs.d.resize(N);
  cs.xref.resize(N);
  for (int s = 0; s < nsys; ++s) {
    const size_t o = cs.idx(s, 0);
    generate_system(rng, Family::Dominant, n, false, cs.a.data() + o, cs.b.data() + o, cs.c.data() + o);
    for (int j = 0; j < n; ++j) cs.d[o + j] = static_cast<T>(rng.uniform(-1, 1));
    const TridiagLU lu(n, cs.a.data() + o, cs.b.data() + o, cs.c.data() + o);
    if (!lu.ok()) throw std::runtime_error("kband_test: singular long reference");
    const std::vector<real_ref> xr = lu.solve(cs.d.data() + o);
    std::copy(xr.begin(), xr.end(), cs.xref.begin() + o);
  }
  return cache.emplace(std::make_pair(n, nsys), std::move(cs)).first->second;
}

template <class T>
const Case<T>& hybrid_case(int n, int nsys) {
  return n <= 1000 ? get_case<T>(Solver::Thomas, Family::Dominant, n, nsys) : long_case<T>(n, nsys);
}

/// Systems with skip(s) false: info 0, finite and within the bound.
template <class T>
void expect_solved(const std::string& what, const Case<T>& cs, const std::vector<T>& x, const std::vector<int>& info,
                   const std::string& key, const std::function<bool(int)>& skip = {}) {
  check_against_reference(what, cs, x, info, Tol<T>::dominant, key, skip);
}

/// Uploads cs, solves with `o` (out of place or in place), checks everything.
template <class T, class L>
void hybrid_solve_case(const Case<T>& cs, const kband::HybridOptions& o, bool inplace) {
  using B = typename L::template batch<T>;
  Exec exec;
  const int n = cs.n, nsys = cs.nsys;
  const B a = make_batch<B>("a", nsys, n, cs.a), b = make_batch<B>("b", nsys, n, cs.b),
          c = make_batch<B>("c", nsys, n, cs.c), d = make_batch<B>("d", nsys, n, cs.d), x("x", nsys, n);
  Kokkos::View<int*> info("info", nsys);
  const B& xo = inplace ? d : x;
  const std::string what = describe(L::name(), type_name(T()), n, nsys, o, inplace);
  if (!run_solver(what, xo, inplace, cs.d, info, nullptr, [&] { kband::hybrid(exec, a, b, c, d, xo, info, o); }))
    return;
  int pad = 0;
  expect_solved(what, cs, download(xo, &pad), download_info(info), "hybrid");
  EXPECT_EQ(pad, 0) << what << ": padding written";
  EXPECT_EQ(count_differences(download(a), cs.a) + count_differences(download(b), cs.b) +
                count_differences(download(c), cs.c),
            0)
      << what << ": a, b or c modified";
  if (!inplace) {
    EXPECT_EQ(count_differences(download(d), cs.d), 0) << what << ": d modified";
  }
}

template <class C>
class HybridAccuracy : public ::testing::Test {};
TYPED_TEST_SUITE(HybridAccuracy, SolverConfigs, CfgNames);

TYPED_TEST(HybridAccuracy, PerSystem) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  for (int n : hybrid_n_list())
    for (int nsys : hybrid_nsys_list()) {
      const Case<T>& cs = hybrid_case<T>(n, nsys);
      for (const auto& o : hybrid_options())
        for (bool inplace : {false, true}) hybrid_solve_case<T, L>(cs, o, inplace);
    }
}

// One long system (the case of a few systems that must still fill a GPU):
// kband's choice, and segments of 1000 and of 7 rows (recursion 4 levels and
// about 10 levels deep).
TYPED_TEST(HybridAccuracy, OneLongSystem) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  const Case<T>& cs = long_case<T>(70000, 1);
  std::vector<kband::HybridOptions> opts(3);
  opts[1].chunk_rows = 7;
  opts[1].segment_rows = 1000;
  opts[2].chunk_rows = 3;
  opts[2].segment_rows = 7;
  for (const auto& o : opts) hybrid_solve_case<T, L>(cs, o, false);
}

// Singular systems: a zero row gives an exactly zero pivot in whichever phase
// meets it (chunk sweep, reduced PCR or the reduced solve), a NaN or Inf
// coefficient a non-finite one. info(s) is a row in [1, n], x(s,:) NaN, and
// every other system is still solved.
TYPED_TEST(HybridAccuracy, SingularSystems) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename L::template batch<T>;
  Exec exec;
  for (int n : {1, 2, 5, 33, 100, 1000})
    for (const auto& o : hybrid_options()) {
      const int nsys = 9;
      const Case<T>& cs = hybrid_case<T>(n, nsys);
      std::vector<T> az = cs.a, bz = cs.b, cz = cs.c;
      // system -> the row made singular (-1: none); rows at chunk and segment
      // boundaries and inside
      const std::vector<int> zero_row{0, -1, n / 2, -1, n - 1, -1, (n * 2) / 3, -1, -1};
      const int s_nan = 7, s_inf = 8;
      for (int s = 0; s < nsys; ++s)
        if (zero_row[s] >= 0) {
          const size_t k = cs.idx(s, zero_row[s]);
          if (zero_row[s] > 0) az[k] = T(0);
          bz[k] = T(0);
          if (zero_row[s] < n - 1) cz[k] = T(0);
        }
      bz[cs.idx(s_nan, n / 3)] = std::numeric_limits<T>::quiet_NaN();
      bz[cs.idx(s_inf, n - 1)] = std::numeric_limits<T>::infinity();
      auto failing = [&](int s) { return zero_row[s] >= 0 || s == s_nan || s == s_inf; };
      const B a = make_batch<B>("a", nsys, n, az), b = make_batch<B>("b", nsys, n, bz),
              c = make_batch<B>("c", nsys, n, cz), d = make_batch<B>("d", nsys, n, cs.d), x("x", nsys, n);
      Kokkos::View<int*> info("info", nsys);
      const std::string what = describe(L::name(), type_name(T()), n, nsys, o, false) + " singular";
      if (!run_solver(what, x, false, cs.d, info, nullptr, [&] { kband::hybrid(exec, a, b, c, d, x, info, o); }))
        continue;
      const std::vector<T> xh = download(x);
      const std::vector<int> ih = download_info(info);
      for (int s = 0; s < nsys; ++s) {
        if (!failing(s)) continue;
        EXPECT_GE(ih[s], 1) << what << " s=" << s;
        EXPECT_LE(ih[s], n) << what << " s=" << s;
        EXPECT_TRUE(all_nan(xh.data() + cs.idx(s, 0), n)) << what << " s=" << s << ": x not NaN";
      }
      expect_solved(what, cs, xh, ih, "hybrid", failing);
    }
}

TEST(HybridErrors, ArgumentsAreChecked) {
  using B = kband::ContiguousBatch<double>;
  Exec exec;
  const int nsys = 3, n = 8;
  const B a("a", nsys, n), b("b", nsys, n), c("c", nsys, n), d("d", nsys, n), x("x", nsys, n),
      d_short("d", nsys, n - 1), x0("x0", nsys, 0);
  const kband::InterleavedBatch<double> di("di", nsys, n);
  Kokkos::View<int*> info("info", nsys), info_long("info", nsys + 1);
  poison_info(info);
  EXPECT_THROW(kband::hybrid(exec, a, b, c, d_short, x, info), kband::Error);
  EXPECT_THROW(kband::hybrid(exec, a, b, c, d, x, info_long), kband::Error);
  EXPECT_THROW(kband::hybrid(exec, a, b, c, d, a, info), kband::Error);  // x aliases a
  EXPECT_THROW(kband::hybrid(exec, a, b, c, di, x, info), kband::Error);  // layouts differ
  EXPECT_THROW(kband::hybrid(exec, a, b, c, d, x0, info), kband::Error);  // n = 0
  kband::HybridOptions o;
  o.chunk_rows = 1;
  EXPECT_THROW(kband::hybrid(exec, a, b, c, d, x, info, o), kband::Error);
  o.chunk_rows = 0;
  o.segment_rows = 3;
  EXPECT_THROW(kband::hybrid(exec, a, b, c, d, x, info, o), kband::Error);
  o.segment_rows = 0;
  o.team_size = -1;
  EXPECT_THROW(kband::hybrid(exec, a, b, c, d, x, info, o), kband::Error);
  // one segment of 2^21 rows needs about 64 MiB of team scratch
  if (static_cast<size_t>(Kokkos::TeamPolicy<Exec>::scratch_size_max(1)) < (size_t(1) << 26)) {
    kband::HybridOptions big;
    big.segment_rows = 1 << 30;
    const B la("la", 1, 1 << 21), lx("lx", 1, 1 << 21);
    Kokkos::View<int*> info1("info1", 1);
    try {
      kband::hybrid(exec, la, la, la, la, lx, info1, big);
      ADD_FAILURE() << "a segment of 2^21 rows was accepted";
    } catch (const kband::Error& e) {
      EXPECT_NE(std::string(e.what()).find("team scratch"), std::string::npos) << e.what();
    }
  }
  exec.fence();
  for (int v : download_info(info)) EXPECT_EQ(v, kInfoPoison) << "a refused call wrote info";
  // empty batches are a no-op
  const B e0("e0", 0, n), e1("e1", 0, n);
  Kokkos::View<int*> info0("info0", 0);
  EXPECT_NO_THROW(kband::hybrid(exec, e0, e0, e0, e0, e1, info0));
  exec.fence();
}

// The GPU launch shapes of the configurations (computed on any
// backend): level-0 scratch of an H100/H200 team (48 KiB less Kokkos' 8 KiB
// reserve), every chunk >= 2 rows, the reduced system shorter than n.
TEST(HybridGeometry, GpuShapes) {
  const size_t max0 = 49152 - (1026 * 8 + 8), max1 = size_t(20) << 20;
  struct Want {
    int nsys, n;
    bool interleaved, dbl;
    int segments;  // expected G (0: more than one)
  };
  const Want cases[] = {{16, 1 << 20, false, true, 0}, {16384, 8192, false, true, 0}, {4096, 1024, false, true, 1},
                        {16, 1 << 20, true, true, 0},  {4096, 1024, false, false, 1}, {3, 5, true, false, 1}};
  for (const Want& w : cases) {
    const kband::impl::HybridGeometry g =
        w.interleaved ? (w.dbl ? kband::impl::hybrid_shape<double, kband::Layout::Interleaved>("t", w.nsys, w.n, {}, true, max0, max1)
                               : kband::impl::hybrid_shape<float, kband::Layout::Interleaved>("t", w.nsys, w.n, {}, true, max0, max1))
                      : (w.dbl ? kband::impl::hybrid_shape<double, kband::Layout::Contiguous>("t", w.nsys, w.n, {}, true, max0, max1)
                               : kband::impl::hybrid_shape<float, kband::Layout::Contiguous>("t", w.nsys, w.n, {}, true, max0, max1));
    const std::string what = kband::impl::concat(w.nsys, "x", w.n, w.interleaved ? " interleaved" : " contiguous",
                                                 w.dbl ? " double" : " float", ": G=", g.G, " M=", g.M, " P=", g.P,
                                                 " Smax=", g.Smax, " team=", g.team_size, " W=", g.W, " scratch=",
                                                 g.scratch_bytes);
    EXPECT_EQ(g.scratch_level, 0) << what;
    EXPECT_LE(g.scratch_bytes, max0) << what;
    if (w.segments) EXPECT_EQ(g.G, w.segments) << what;
    else EXPECT_GT(g.G, 1) << what;
    EXPECT_GE(g.Smax / g.P, 2) << what;
    EXPECT_EQ(g.team_size % 32, 0) << what;
    EXPECT_EQ(g.team_size % g.W, 0) << what;
    EXPECT_LE(g.team_size, 256) << what;
    if (g.G > 1) EXPECT_LT(2 * g.G, w.n / 4) << what;
    std::printf("  %s\n", what.c_str());
  }
}

// solve_tridiagonal: the hybrid when a GPU has too few interleaved or grouped
// systems and they are longer than 8192 rows; never on a CPU; forcing it
// works everywhere. A GPU solves few systems up to n = 8192 (contiguous ones
// at any n) and contiguous double systems of 1025..8192 rows with PCR, the
// rest with Thomas.
TEST(SolveTridiagonalHybrid, ChoiceAndForcing) {
  Exec exec;
  using A = kband::TridiagonalAlgorithm;
  EXPECT_STREQ(kband::algorithm_name(A::Hybrid), "hybrid");
  for (auto layout : {kband::Layout::Contiguous, kband::Layout::Interleaved, kband::Layout::Grouped}) {
    const A long_few = kband::choose_tridiagonal(exec, layout, 16, 1 << 20, sizeof(double));
    const A one = kband::choose_tridiagonal(exec, layout, 1, 70000, sizeof(float));
    // contiguous: PCR splits the few long systems over teams
    const A few_long = layout == kband::Layout::Contiguous ? A::PCR : A::Hybrid;
    EXPECT_EQ(long_few, device_backend() ? few_long : A::Thomas) << kband::layout_name(layout);
    EXPECT_EQ(one, device_backend() ? few_long : A::Thomas) << kband::layout_name(layout);
    const bool contiguous = layout == kband::Layout::Contiguous;
    EXPECT_EQ(kband::choose_tridiagonal(exec, layout, 1 << 22, 64, sizeof(double)), A::Thomas)
        << "batches of short systems that fill the machine: Thomas";
    EXPECT_EQ(kband::choose_tridiagonal(exec, layout, 1 << 20, 1024, sizeof(double)), A::Thomas)
        << "many systems of 1024 rows: Thomas";
    EXPECT_EQ(kband::choose_tridiagonal(exec, layout, 1 << 16, 2048, sizeof(double)),
              device_backend() && contiguous ? A::PCR : A::Thomas)
        << "many contiguous double systems of 2048 rows: PCR on GPUs";
    EXPECT_EQ(kband::choose_tridiagonal(exec, layout, 1 << 16, 2048, sizeof(float)), A::Thomas)
        << "many float systems of 2048 rows: Thomas";
    EXPECT_EQ(kband::choose_tridiagonal(exec, layout, 4, 8192, sizeof(double)), device_backend() ? A::PCR : A::Thomas)
        << "few systems of up to 8192 rows: PCR on GPUs";
  }
  using B = kband::InterleavedBatch<double>;
  const Case<double>& cs = long_case<double>(5000, 3);
  const B a = make_batch<B>("a", 3, 5000, cs.a), b = make_batch<B>("b", 3, 5000, cs.b),
          c = make_batch<B>("c", 3, 5000, cs.c), d = make_batch<B>("d", 3, 5000, cs.d), x("x", 3, 5000);
  Kokkos::View<int*> info("info", 3);
  kband::TridiagonalOptions opt;
  opt.algorithm = A::Hybrid;
  opt.hybrid.segment_rows = 999;
  A used = A::Auto;
  ASSERT_TRUE(run_solver("solve_tridiagonal(hybrid)", x, false, cs.d, info, nullptr,
                         [&] { used = kband::solve_tridiagonal(exec, a, b, c, d, x, info, opt); }));
  EXPECT_EQ(used, A::Hybrid);
  expect_solved("solve_tridiagonal(hybrid)", cs, download(x), download_info(info), "solve_tridiagonal_hybrid");
}

}  // namespace
}  // namespace kband_test
