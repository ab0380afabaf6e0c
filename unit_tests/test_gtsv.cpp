// kband::gtsv (tridiagonal LU with partial pivoting) on general systems.
//
// Two families, every layout, float and double, Variant::Global / Scratch /
// Recompute / Registers (GPUs; host backends: n <= 8, 16 in float) / Auto:
//  * random : a, c uniform in [-1, 1], b = 0.1 U(-1, 1) (no diagonal
//    dominance at all, most steps pivot), and every third system (n >= 2)
//    with b(s,0) = 0, where unpivoted elimination (kband::thomas) fails with
//    info = 1 -- checked on the same batches.
//  * general: the guarded general family of the Thomas tests (well
//    conditioned, about half of the rows not dominant).
// Bounds per system, all evaluated in long double:
//  * normwise backward error eta = ||A x - d||_inf / (||A||_inf ||x||_inf +
//    ||d||_inf) <= kBackwardC * n * eps(T), kBackwardC = 16. Partial pivoting
//    on a tridiagonal matrix has growth factor <= 2, so eta is O(eps) whatever
//    the conditioning.
//  * forward error ||x - xref||_inf / ||xref||_inf: on the general family
//    <= Tol<T>::general (as Thomas); on the random family, whose conditioning
//    varies, the perturbation bound 2 eta kappa / (1 - eta kappa)
//    (Higham, Thm 7.2, kappa = ||A||_inf ||A^-1||_inf computed exactly in
//    long double) with a factor 2 for rounding, wherever eta kappa < 1/4.
#include <array>

#include "kband_test_solvers.hpp"

namespace kband_test {
namespace {

constexpr double kBackwardC = 16;

template <class T>
double backward_bound(int n) {
  return kBackwardC * n * eps_of<T>();
}

/// Systems (system-major) with their reference, condition numbers and the
/// expected info of kband::gtsv (0, or the 1-based column that is zero).
template <class T>
struct GCase {
  std::string family;
  int n = 0, nsys = 0;
  std::vector<T> a, b, c, d;
  std::vector<real_ref> xref;  // empty for singular systems' rows (left 0)
  std::vector<double> kappa;   // per system; empty: forward bound is Tol<T>::general
  std::vector<int> expect_info;
  std::vector<char> zero_b0;  // b(s,0) == 0 (n >= 2)
  size_t idx(int s, int j) const { return static_cast<size_t>(s) * n + j; }
};

template <class T>
void fill_reference(GCase<T>& g, bool with_kappa) {
  g.xref.assign(g.a.size(), 0);
  if (with_kappa) g.kappa.assign(g.nsys, 0);
  for (int s = 0; s < g.nsys; ++s) {
    if (g.expect_info[s] != 0) continue;
    const size_t o = g.idx(s, 0);
    const TridiagLU lu(g.n, g.a.data() + o, g.b.data() + o, g.c.data() + o);
    if (!lu.ok()) throw std::runtime_error("kband_test: singular gtsv reference matrix");
    const auto x = lu.solve(g.d.data() + o);
    std::copy(x.begin(), x.end(), g.xref.begin() + o);
    if (with_kappa) g.kappa[s] = lu.condition_inf();
  }
}

/// The random family; `singular` puts an exactly zero column into systems 1
/// and 4 (column 0 and column n/2).
template <class T>
GCase<T> make_random(int n, int nsys, bool singular) {
  GCase<T> g;
  g.family = singular ? "singular" : "random";
  g.n = n;
  g.nsys = nsys;
  Rng rng(mix_seed(
      {sizeof(T), 0x67747376ull, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(nsys), singular ? 1u : 0u}));
  const size_t len = static_cast<size_t>(n) * nsys;
  g.a.resize(len);
  g.b.resize(len);
  g.c.resize(len);
  g.d.resize(len);
  g.expect_info.assign(nsys, 0);
  g.zero_b0.assign(nsys, 0);
  for (int s = 0; s < nsys; ++s)
    for (int attempt = 0;; ++attempt) {
      for (int j = 0; j < n; ++j) {
        const size_t k = g.idx(s, j);
        g.a[k] = static_cast<T>(rng.uniform(-1, 1));
        g.b[k] = static_cast<T>(0.1 * rng.uniform(-1, 1));
        g.c[k] = static_cast<T>(rng.uniform(-1, 1));
        g.d[k] = static_cast<T>(rng.uniform(-1, 1));
      }
      if (n >= 2 && s % 3 == 1) {
        g.b[g.idx(s, 0)] = T(0);
        g.zero_b0[s] = 1;
      }
      if (singular && (s == 1 || s == 4)) {
        const int col = s == 1 ? 0 : n / 2;
        g.b[g.idx(s, col)] = T(0);
        if (col > 0) g.c[g.idx(s, col - 1)] = T(0);
        if (col + 1 < n) g.a[g.idx(s, col + 1)] = T(0);
        g.expect_info[s] = col + 1;
        break;
      }
      const size_t o = g.idx(s, 0);
      if (TridiagLU(n, g.a.data() + o, g.b.data() + o, g.c.data() + o).ok() || attempt > 100) break;
    }
  for (int s = 0; s < nsys; ++s) {  // entries every solver must ignore
    g.a[g.idx(s, 0)] = nan_value<T>();
    g.c[g.idx(s, n - 1)] = nan_value<T>();
  }
  fill_reference(g, true);
  return g;
}

template <class T>
const GCase<T>& get_random(int n, int nsys, bool singular = false) {
  static std::map<std::tuple<int, int, bool>, GCase<T>> cache;
  const auto key = std::make_tuple(n, nsys, singular);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, make_random<T>(n, nsys, singular)).first;
  return it->second;
}

/// The guarded general family of kband_test_common.hpp (dense reference).
template <class T>
const GCase<T>& get_general(int n, int nsys) {
  static std::map<std::pair<int, int>, GCase<T>> cache;
  const auto key = std::make_pair(n, nsys);
  auto it = cache.find(key);
  if (it == cache.end()) {
    const Case<T>& cs = get_case<T>(Solver::Thomas, Family::General, n, nsys);
    GCase<T> g;
    g.family = "general";
    g.n = n;
    g.nsys = nsys;
    g.a = cs.a;
    g.b = cs.b;
    g.c = cs.c;
    g.d = cs.d;
    g.xref = cs.xref;
    g.expect_info.assign(nsys, 0);
    g.zero_b0.assign(nsys, 0);
    it = cache.emplace(key, std::move(g)).first;
  }
  return it->second;
}

/// Checks x, info of one gtsv solve of g.
template <class T>
void check_gtsv(const std::string& what, const GCase<T>& g, const std::vector<T>& x, const std::vector<int>& info) {
  const int n = g.n;
  const double bwd_tol = backward_bound<T>(n);
  double worst_bwd = 0, worst_fwd = 0, worst_ratio = 0, worst_kappa = 0;
  int nbad = 0;
  std::ostringstream first;
  for (int s = 0; s < g.nsys; ++s) {
    const size_t o = g.idx(s, 0);
    if (g.expect_info[s] != 0) {
      if (info[s] != g.expect_info[s] || !all_nan(x.data() + o, n)) {
        if (!nbad++)
          first << "singular s=" << s << ": info=" << info[s] << " (expected " << g.expect_info[s]
                << "), x(s,0)=" << x[o];
      }
      continue;
    }
    const double bwd =
        tridiag_backward_error(n, g.a.data() + o, g.b.data() + o, g.c.data() + o, g.d.data() + o, x.data() + o);
    const double fwd = relative_error_inf(n, x.data() + o, g.xref.data() + o);
    double fwd_tol = Tol<T>::general;
    if (!g.kappa.empty()) {
      const double ek = std::max(bwd, eps_of<T>() / 2) * g.kappa[s];
      fwd_tol = ek < 0.25 ? 2 * (2 * ek / (1 - ek)) + 4 * g.kappa[s] * 1e-18 : HUGE_VAL;
      worst_kappa = std::max(worst_kappa, g.kappa[s]);
      if (ek >= 0.25) ++stats().max_err[std::string(type_name(T())) + " random gtsv systems without forward bound"];
    }
    worst_bwd = std::max(worst_bwd, bwd);
    worst_fwd = std::max(worst_fwd, fwd);
    worst_ratio = std::max(worst_ratio, bwd / (n * eps_of<T>()));
    if (info[s] != 0 || !(bwd <= bwd_tol) || !(fwd <= fwd_tol)) {
      if (!nbad++)
        first << "s=" << s << ": info=" << info[s] << " backward error " << bwd << " (bound " << bwd_tol
              << "), forward error " << fwd << " (bound " << fwd_tol << ")"
              << (g.kappa.empty() ? std::string() : " kappa=" + std::to_string(g.kappa[s]));
    }
  }
  const std::string key = std::string(type_name(T())) + " " + g.family + " gtsv";
  record_error(key + " backward/(n*eps)", worst_ratio);
  record_error(key + " forward", worst_fwd);
  if (!g.kappa.empty()) record_error(key + " kappa_inf (max)", worst_kappa);
  if (nbad) ADD_FAILURE() << what << ": " << nbad << " of " << g.nsys << " systems wrong; first " << first.str();
}

template <class T, class L>
struct GDevice {
  using B = typename L::template batch<T>;
  B a, b, c, d, x;
  Kokkos::View<int*> info;
  explicit GDevice(const GCase<T>& g)
      : a(make_batch<B>("a", g.nsys, g.n, g.a)),
        b(make_batch<B>("b", g.nsys, g.n, g.b)),
        c(make_batch<B>("c", g.nsys, g.n, g.c)),
        d(make_batch<B>("d", g.nsys, g.n, g.d)),
        x("x", g.nsys, g.n),
        info("info", g.nsys) {}
};

std::string describe(const std::string& family, const std::string& layout, const char* type, int n, int nsys,
                     kband::Variant v, bool inplace) {
  std::ostringstream os;
  os << "gtsv " << family << " " << layout << " " << type << " n=" << n << " nsys=" << nsys
     << " variant=" << kband::variant_name(v) << (inplace ? " in-place" : "");
  return os.str();
}

/// One solve of g by `solve(x_out)` (x, or d in place) with every check;
/// `refusal`: the kband::Error text that may refuse it (run_solver).
template <class T, class L, class Solve>
void gtsv_check_solve(const GCase<T>& g, GDevice<T, L>& dev, const std::string& what, bool inplace,
                      const char* refusal, const Solve& solve) {
  using B = typename L::template batch<T>;
  upload(dev.d, g.d);
  const B& xo = inplace ? dev.d : dev.x;
  if (!run_solver(what, xo, inplace, g.d, dev.info, refusal, [&] { solve(xo); })) return;
  int pad = 0;
  check_gtsv(what, g, download(xo, &pad), download_info(dev.info));
  EXPECT_EQ(pad, 0) << what << ": padding written";
  EXPECT_EQ(count_differences(download(dev.a), g.a) + count_differences(download(dev.b), g.b) +
                count_differences(download(dev.c), g.c),
            0)
      << what << ": a, b or c modified";
  if (!inplace) {
    EXPECT_EQ(count_differences(download(dev.d), g.d), 0) << what << ": d modified";
  }
}

/// One gtsv call (x, or d in place) with every check.
template <class T, class L>
void gtsv_and_check(const GCase<T>& g, GDevice<T, L>& dev, kband::Variant v, bool inplace, int team = 0,
                    int blocks = 0) {
  using B = typename L::template batch<T>;
  const std::string what = describe(g.family, L::name(), type_name(T()), g.n, g.nsys, v, inplace) +
                           (team > 0 || blocks > 0 ? kband::impl::concat(" team ", team, " blocks ", blocks) : "");
  kband::SolveOptions opt;
  opt.variant = v;
  opt.team_size = team;
  opt.blocks_per_team = blocks;
  // Scratch may be refused for large n; Registers on host backends (teams of
  // one thread) beyond one chunk of rows, never on GPUs
  const bool host_registers = v == kband::Variant::Registers && !kband::impl::is_device_exec<Exec>::value &&
                              g.n > kband::impl::gtsv_register_rows<T>();
  const char* refusal = v == kband::Variant::Scratch ? "Variant::Scratch"
                        : host_registers             ? "Variant::Registers"
                                                     : nullptr;
  gtsv_check_solve(g, dev, what, inplace, refusal,
                   [&](const B& xo) { kband::gtsv(Exec(), dev.a, dev.b, dev.c, dev.d, xo, dev.info, opt); });
}

template <class C>
class GTSVAccuracy : public ::testing::Test {};
TYPED_TEST_SUITE(GTSVAccuracy, SolverConfigs, CfgNames);

TYPED_TEST(GTSVAccuracy, RandomGeneral) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  for (int n : n_list())
    for (int nsys : nsys_list(L::sz)) {
      const GCase<T>& g = get_random<T>(n, nsys);
      GDevice<T, L> dev(g);
      for (kband::Variant v : gtsv_variants()) gtsv_and_check(g, dev, v, false);
    }
}

TYPED_TEST(GTSVAccuracy, GuardedGeneralFamily) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  for (int n : n_list())
    for (int nsys : {7, L::sz + 1}) {
      const GCase<T>& g = get_general<T>(n, nsys);
      GDevice<T, L> dev(g);
      for (kband::Variant v : gtsv_variants()) gtsv_and_check(g, dev, v, false);
    }
}

TYPED_TEST(GTSVAccuracy, InPlace) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  for (int n : n_list()) {
    const GCase<T>& g = get_random<T>(n, L::sz + 1);
    GDevice<T, L> dev(g);
    for (kband::Variant v :
         {kband::Variant::Global, kband::Variant::Scratch, kband::Variant::Recompute, kband::Variant::Registers})
      gtsv_and_check(g, dev, v, true);
  }
}

// Interleaved and grouped systems past n = 256 take the Registers kernel in
// two or four segments on GPUs when asked for (four for interleaved n =
// 1025..2048 in double, 513..1024 in float; Auto: two segments up to n =
// 1024 in double, Recompute beyond and for float past 512), up to n = 512
// with 4 blocks of systems a team for large batches: Auto, and Registers
// with 4 blocks a team asked for, at and around those limits (host backends
// refuse Registers here and solve Auto by Recompute).
TYPED_TEST(GTSVAccuracy, SegmentsAuto) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  for (int n : {257, 300, 512, 513, 1024, 1025, 2048})
    for (int nsys : {7, 70}) {
      if (n > 513 && nsys > 7) continue;  // the reference's condition numbers cost O(n^2) a system
      const GCase<T>& g = get_random<T>(n, nsys);
      GDevice<T, L> dev(g);
      gtsv_and_check(g, dev, kband::Variant::Auto, false);
      gtsv_and_check(g, dev, kband::Variant::Registers, false, 0, 4);
    }
}

// b(s,0) = 0: unpivoted elimination stops at row 1 (kband::thomas: info = 1,
// x NaN) while gtsv solves the same batch (checked in RandomGeneral).
TYPED_TEST(GTSVAccuracy, ThomasFailsWherePivotingSucceeds) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  Exec exec;
  for (int n : {2, 3, 33, 1000}) {
    const int nsys = 7;
    const GCase<T>& g = get_random<T>(n, nsys);
    GDevice<T, L> dev(g);
    upload(dev.x, std::vector<T>());
    poison_info(dev.info);
    kband::thomas(exec, dev.a, dev.b, dev.c, dev.d, dev.x, dev.info);
    exec.fence();
    const std::vector<T> xt = download(dev.x);
    const std::vector<int> it = download_info(dev.info);
    int zero_b0 = 0;
    for (int s = 0; s < nsys; ++s) {
      if (!g.zero_b0[s]) continue;
      ++zero_b0;
      EXPECT_EQ(it[s], 1) << "thomas n=" << n << " s=" << s;
      EXPECT_TRUE(all_nan(xt.data() + g.idx(s, 0), n)) << "thomas n=" << n << " s=" << s;
    }
    EXPECT_EQ(zero_b0, 2) << "systems 1 and 4 have b(s,0) = 0";
    gtsv_and_check(g, dev, kband::Variant::Global, false);
  }
}

// An exactly zero column (systems 1 and 4): info = that column (1-based),
// x(s,:) NaN; every other system of the batch is solved.
TYPED_TEST(GTSVAccuracy, SingularSystems) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  for (int n : {1, 2, 3, 7, 33, 1000}) {
    const GCase<T>& g = get_random<T>(n, 7, /*singular=*/true);
    GDevice<T, L> dev(g);
    for (kband::Variant v : gtsv_variants()) gtsv_and_check(g, dev, v, false);
  }
}

// The Registers variant where its chunks of M = 8 rows (16 in float) join:
// n on both sides of multiples of 8 and 16 and of Auto's limits, random and singular systems (the
// zero column at n/2: the first or last row of a chunk), Registers and Auto.
TYPED_TEST(GTSVAccuracy, RegistersChunkBoundaries) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  for (int n : {8, 9, 15, 16, 17, 63, 64, 65, 255, 256, 257, 511, 512, 513})
    for (bool singular : {false, true}) {
      const GCase<T>& g = get_random<T>(n, singular ? 7 : L::sz + 1, singular);
      GDevice<T, L> dev(g);
      for (kband::Variant v : {kband::Variant::Registers, kband::Variant::Auto}) gtsv_and_check(g, dev, v, false);
    }
}

// Contiguous systems past n = 2048: on GPUs double takes 16 rows a thread
// there (float always does), both types two segments of 16 rows past 4096;
// the zero column of the singular systems at n/2 (a chunk's first row).
// Host backends refuse Registers here and solve Auto by Global.
TYPED_TEST(GTSVAccuracy, ContiguousLongRegisters) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename L::template batch<T>;
  if constexpr (kband::impl::batch_traits<B>::layout != kband::Layout::Contiguous) {
    GTEST_SKIP() << "contiguous batches only";
  } else {
    for (int n : {2047, 2049, 3001, 4096, 4097, 6000, 8192})
      for (bool singular : {false, true}) {
        if (singular && n != 4096) continue;
        const GCase<T>& g = get_random<T>(n, n > 4096 ? 3 : 7, singular);
        GDevice<T, L> dev(g);
        for (kband::Variant v : {kband::Variant::Registers, kband::Variant::Auto}) gtsv_and_check(g, dev, v, false);
      }
  }
}

// Teams that solve several blocks of systems in turn (the Registers
// kernel's scans reuse their scratch from block to block): small teams, 3
// blocks a team, 70 systems (not a multiple of the systems a team holds).
TYPED_TEST(GTSVAccuracy, RegistersBlocksPerTeam) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  for (int n : {5, 8, 40, 100})
    for (bool singular : {false, true}) {
      const GCase<T>& g = get_random<T>(n, 70, singular);
      GDevice<T, L> dev(g);
      for (kband::Variant v : {kband::Variant::Registers, kband::Variant::Auto})
        gtsv_and_check(g, dev, v, false, 32, 3);
    }
}

// The Registers kernel in S = 2, 4 and 8 segments (M = 8 rows a thread),
// launched directly: systems of one chunk a segment (n <= 8 S) on every
// backend (host teams have one thread), longer ones on GPUs (K > 1 chunks a
// segment); segments full, partial or empty; random and singular systems
// (the zero column at n/2: the first half's last segment, or a middle one
// kept in level-1 scratch), in place too. Each segment's carried row
// (direction and size from its scans' totals) starts the next; the pair
// (x_{h-1}, x_h) from each segment's back scan ends the one before.
template <int S, class T, class L>
void gtsv_registers_segments() {
  using B = typename L::template batch<T>;
  constexpr int M = kband::impl::kRegisterRowsPerSystem;
  constexpr bool device = kband::impl::is_device_exec<Exec>::value;
  std::vector<int> ns{1, 2, 3, 5, 8, 9, 12, 15, 16, 17, 24, 31, 32, 33, 47, 63, 64};
  if (device) ns.insert(ns.end(), {65, 100, 255, 256, 257, 513, 1000, 1024});
  const long before = stats().solves;
  long expected = 0;
  for (int n : ns)
    for (bool singular : {false, true}) {
      if ((singular && n < 3) || (!device && n > S * M)) continue;
      const GCase<T>& g = get_random<T>(n, singular ? 7 : L::sz + 1, singular);
      GDevice<T, L> dev(g);
      for (bool inplace : {false, true}) {
        const std::string what =
            describe(g.family, L::name(), type_name(T()), n, g.nsys, kband::Variant::Registers, inplace) +
            kband::impl::concat(" (", S, " segments)");
        gtsv_check_solve(g, dev, what, inplace, nullptr, [&](const B& xo) {
          using F = kband::impl::GTSVPerSystemRegisters<Exec, B, B, B, B, B, Kokkos::View<int*>, M, S>;
          F f(typename F::Base{g.nsys, n, 1, 1, false, nan_value<T>()}, dev.a, dev.b, dev.c, dev.d, xo, dev.info);
          const bool contiguous = kband::impl::batch_traits<B>::layout == kband::Layout::Contiguous;
          const auto geo =
              kband::impl::register_geometry(Exec(), g.nsys, n, M, contiguous, F::scratch_per_thread(), 0, 0, f, S);
          ASSERT_TRUE(geo.ok) << what << ": " << geo.why;
          if (!device) ASSERT_EQ(geo.K, 1) << what;
          kband::impl::launch_registers("kband_test::gtsv_segments", Exec(), geo, f);
        });
        ++expected;
      }
    }
  EXPECT_EQ(stats().solves - before, expected);
}
TYPED_TEST(GTSVAccuracy, RegistersSegments) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  gtsv_registers_segments<2, T, L>();
  gtsv_registers_segments<4, T, L>();
  gtsv_registers_segments<8, T, L>();
}

/// kband::gtsv's Registers kernel, one system after another on the host: the
/// chunks of M rows (GTSVChunk's phases, as the kernel runs them) joined by
/// the kernel's three scans (the first in the kernel's rounds, the others
/// in order).
template <class T, int M>
void gtsv_by_chunks(const GCase<T>& g, std::vector<T>& x, std::vector<int>& info, double* worst_size,
                    double* worst_tie) {
  using C = kband::impl::GTSVChunk<T, M>;
  using Dir = kband::impl::GTSVDirSum<T>;
  using Size = kband::impl::GTSVSizeSum<T>;
  using Back = kband::impl::GTSVBackSum<T>;
  const int n = g.n, K = (n + M - 1) / M;
  x.assign(g.a.size(), nan_value<T>());
  info.assign(g.nsys, kInfoPoison);
  for (int s = 0; s < g.nsys; ++s) {
    std::vector<typename C::Rows> r(K);
    std::vector<int> nr(K);
    for (int k = 0; k < K; ++k) {
      nr[k] = std::min(M, n - k * M);
      for (int u = 0; u < M; ++u) {  // load_chunk's rows
        const int j = k * M + u;
        const bool in = j < n;
        r[k].a[u] = in && j > 0 ? g.a[g.idx(s, j)] : T(0);
        r[k].b[u] = in ? g.b[g.idx(s, j)] : T(1);
        r[k].c[u] = in && j < n - 1 ? g.c[g.idx(s, j)] : T(0);
        r[k].d[u] = in ? g.d[g.idx(s, j)] : T(0);
      }
    }
    // 1, 2: direction and size of the carried row entering each chunk
    std::vector<std::array<T, 3>> w(K);
    std::vector<T> nu(K);
    // the direction scan as the kernel runs it: Hillis-Steele rounds with
    // the kernel's join (rescaled every second round)
    std::vector<Dir> inc(K);
    for (int k = 0; k < K; ++k) inc[k] = C::direction_map(r[k]);
    for (int off = 1, round = 0; off < K; off *= 2, ++round) {
      const std::vector<Dir> prev = inc;
      for (int k = off; k < K; ++k) inc[k] = kband::impl::ProductDirections()(prev[k], prev[k - off], round);
    }
    Size sex = Size::identity();
    for (int k = 0; k < K; ++k) {
      T wk[3];
      C::direction(k > 0 ? inc[k - 1] : Dir::identity(), wk);
      std::copy(wk, wk + 3, w[k].begin());
    }
    for (int k = 0; k < K; ++k) {
      T wk[3] = {w[k][0], w[k][1], w[k][2]};
      nu[k] = sex(T(1));
      sex = kband::impl::compose(C::size_map(r[k], wk), sex);
    }
    // the size against dgtsv's carried row before the chunk (row 0: (1, 0, 0))
    if (g.expect_info[s] == 0) {
      T di = 1, du = 0, bi = 0;
      for (int k = 0; k < K; ++k) {
        const double seq = std::max(std::abs(double(di)), std::abs(double(du)));
        if (seq > 0 && std::isfinite(seq)) *worst_size = std::max(*worst_size, std::abs(std::log2(nu[k] / seq)));
        for (int u = 0; u < nr[k]; ++u)
          kband::impl::gtsv_step(di, du, bi, r[k].a[u], r[k].b[u], r[k].c[u], r[k].d[u]);
      }
    }
    // 3, 4: elimination, then the back substitution maps from the last chunk down
    const std::vector<typename C::Rows> r0 = r;
    std::vector<Back> maps(K);
    T xl = T(0);
    for (int k = 0; k < K; ++k) {
      T wk[3] = {w[k][0], w[k][1], w[k][2]};
      T mu = T(1) / nu[k];
      int bad = C::eliminate(r[k], k * M, wk, mu);
      const bool last = k == K - 1;
      if (last) xl = C::finish(nr[k], n, wk, mu, bad);
      maps[k] = C::back_map(r[k], last, xl, T(0), bad);
    }
    // the interchanges against dgtsv's (row u of a chunk is its row of U over
    // the pivot: p2 = c / a after an interchange, exactly 0 without): the
    // systems of these tests have c != 0, so the two differ only where dgtsv
    // compared two pivot candidates of nearly equal size (*worst_tie: the
    // largest gap 1 - min/max between the candidates where they differ; -1:
    // nowhere)
    if (g.expect_info[s] == 0) {
      T di = 1, du = 0, bi = 0;
      for (int j = 0; j < n; ++j) {
        const int k = j / M, u = j % M;
        const T dl = r0[k].a[u];
        const double x0 = std::abs(double(di)), x1 = std::abs(double(dl));
        const bool swap = x0 < x1;
        kband::impl::gtsv_step(di, du, bi, dl, r0[k].b[u], r0[k].c[u], r0[k].d[u]);
        if (j > 0 && r0[k].c[u] != T(0) && swap != (r[k].c[u] != T(0)))
          *worst_tie = std::max(*worst_tie, 1 - std::min(x0, x1) / std::max(x0, x1));
      }
    }
    std::vector<Back> bex(K);
    bex[K - 1] = Back::identity();
    for (int k = K - 2; k >= 0; --k) bex[k] = kband::impl::compose(maps[k + 1], bex[k + 1]);
    const Back all = kband::impl::compose(maps[0], bex[0]);
    // 5
    info[s] = all.bad;
    for (int k = 0; k < K; ++k) {
      const bool last = k == K - 1;
      if (all.bad == 0) C::substitute(r[k], last ? xl : bex[k].g0, last ? T(0) : bex[k].g1);
      for (int u = 0; u < nr[k]; ++u) x[g.idx(s, k * M + u)] = all.bad == 0 ? r[k].a[u] : nan_value<T>();
    }
  }
}

/// g with row j of every system scaled by 2^e, e uniform in -30..30 (exact):
/// partial pivoting then depends on the carried row's size, which the joins
/// must get right (a wrong size turns pivots of 2^-30 loose).
template <class T>
GCase<T> row_scaled(GCase<T> g) {
  Rng rng(mix_seed({sizeof(T), 0x7363616cull, static_cast<std::uint64_t>(g.n)}));
  g.family += "-row-scaled";
  for (int s = 0; s < g.nsys; ++s)
    for (int j = 0; j < g.n; ++j) {
      const T f = std::ldexp(T(1), static_cast<int>(std::floor(rng.uniform(-30, 31))));
      const size_t k = g.idx(s, j);
      if (j > 0) g.a[k] *= f;
      g.b[k] *= f;
      if (j < g.n - 1) g.c[k] *= f;
      g.d[k] *= f;
    }
  fill_reference(g, true);
  return g;
}

/// g with every coefficient and right-hand side times 2^e (exact; the same
/// interchanges and x): the kernel's products must stay in range for
/// systems far from 1 in size.
template <class T>
GCase<T> uniformly_scaled(GCase<T> g, int e) {
  g.family += "-scaled-2^" + std::to_string(e);
  for (std::vector<T>* v : {&g.a, &g.b, &g.c, &g.d})
    for (T& x : *v) x = std::ldexp(x, e);
  fill_reference(g, true);
  return g;
}

template <class T, int M>
void gtsv_chunks_check(const std::string& what, const GCase<T>& g) {
  std::vector<T> x;
  std::vector<int> info;
  double worst_size = 0, worst_tie = -1;
  gtsv_by_chunks<T, M>(g, x, info, &worst_size, &worst_tie);
  check_gtsv(what, g, x, info);
  EXPECT_LE(worst_tie, 1e-3) << what << ": an interchange other than dgtsv's where its candidates differ by "
                              << worst_tie;
  // the joins' size of the carried row, and the interchanges, are dgtsv's
  EXPECT_LE(worst_size, 0.01) << what << ": |log2(size / dgtsv's size)| at a chunk's start";
}

template <int M>
void gtsv_chunks_on_host() {
  for (int n : {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33, 100, 1000}) {
    const std::string what = "gtsv chunks of " + std::to_string(M) + " rows on the host, n=" + std::to_string(n);
    for (bool singular : {false, true}) {
      gtsv_chunks_check<double, M>(what + (singular ? " singular" : " random") + " double",
                                   get_random<double>(n, 7, singular));
      gtsv_chunks_check<float, M>(what + (singular ? " singular" : " random") + " float",
                                  get_random<float>(n, 7, singular));
    }
    gtsv_chunks_check<double, M>(what + " row-scaled double", row_scaled(get_random<double>(n, 7)));
    gtsv_chunks_check<float, M>(what + " row-scaled float", row_scaled(get_random<float>(n, 7)));
    gtsv_chunks_check<double, M>(what + " general double", get_general<double>(n, 7));
    for (int e : {-50, 50})
      gtsv_chunks_check<float, M>(what + " scaled float", uniformly_scaled(get_random<float>(n, 7), e));
    for (int e : {-200, 200})
      gtsv_chunks_check<double, M>(what + " scaled double", uniformly_scaled(get_random<double>(n, 7), e));
  }
}

// The joins of the Registers kernel, which host backends (teams of one
// thread) never run: chunks of 1, 3, 8 and 16 rows (double's and float's
// one-segment kernels).
TEST(GTSVRegistersJoin, ChunksOnTheHost) {
  gtsv_chunks_on_host<1>();
  gtsv_chunks_on_host<3>();
  gtsv_chunks_on_host<kband::impl::gtsv_register_rows<double>()>();
  gtsv_chunks_on_host<kband::impl::gtsv_register_rows<float>()>();
}

/// The rescales of the Registers kernels: inverse_pow2_max(v) is a power of
/// two s with s max|v| in [1, 4) (below 2 for subnormal maxima down to
/// 2^-1042 in double, whose exponent word it reads), s v exact
/// wherever it stays normal, and 1 when v is all zero or holds an infinity
/// or a NaN; abs_ drops the sign of -0.
template <class T>
void check_pow2_scales() {
  const std::string tn = type_name(T());
  Rng rng(mix_seed({sizeof(T), 0x706f7732ull}));
  const int emax = std::numeric_limits<T>::max_exponent - 2, emin = std::numeric_limits<T>::min_exponent;
  for (int trial = 0; trial < 2000; ++trial) {
    T v[7];
    for (T& x : v) x = static_cast<T>(rng.sign() * std::ldexp(rng.uniform(0.5, 1.0), static_cast<int>(rng.uniform(emin, emax))));
    if (trial % 7 == 0) v[trial % 5] = T(0);
    const T s = kband::impl::inverse_pow2_max(v);
    T mx = 0;
    for (T x : v) mx = std::max(mx, std::abs(x));
    int e = 0;
    ASSERT_EQ(std::frexp(s, &e), T(0.5)) << tn << ": not a power of two: " << s;
    EXPECT_TRUE(mx * s >= T(1) && mx * s < T(4)) << tn << ": max " << mx << " scaled to " << mx * s;
    for (T x : v)
      if (std::abs(x * s) >= std::numeric_limits<T>::min()) EXPECT_EQ((x * s) / s, x) << tn << ": inexact scale of " << x;
    if (mx >= std::numeric_limits<T>::min()) {
      const T one[1] = {mx};
      EXPECT_EQ(kband::impl::inverse_pow2_max(one), kband::impl::inverse_pow2(mx)) << tn << " " << mx;
    }
  }
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const T zeros[3] = {T(0), -T(0), T(0)}, with_inf[3] = {T(1), -inf, T(2)}, with_nan[3] = {T(3), nan, T(0)};
  EXPECT_EQ(kband::impl::inverse_pow2_max(zeros), T(1)) << tn;
  EXPECT_EQ(kband::impl::inverse_pow2_max(with_inf), T(1)) << tn;
  EXPECT_EQ(kband::impl::inverse_pow2_max(with_nan), T(1)) << tn;
  const T tiny = std::ldexp(T(3), std::numeric_limits<T>::min_exponent - 9), sub[2] = {tiny, -tiny / T(2)};
  const T st = kband::impl::inverse_pow2_max(sub);
  EXPECT_TRUE(st > T(1) && tiny * st > T(0) && tiny * st < T(2)) << tn << ": subnormal scaled to " << tiny * st;
  EXPECT_FALSE(std::signbit(kband::impl::abs_(-T(0)))) << tn;
  EXPECT_EQ(kband::impl::abs_(T(-2.5)), T(2.5)) << tn;
}

TEST(GTSVRegistersJoin, PowerOfTwoScales) {
  check_pow2_scales<float>();
  check_pow2_scales<double>();
}

// A caller workspace of gtsv_workspace_size elements holding garbage, reused.
TYPED_TEST(GTSVAccuracy, CallerWorkspace) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  Exec exec;
  for (int n : {3, 100}) {
    const int nsys = 3 * L::sz - 1;
    const GCase<T>& g = get_random<T>(n, nsys);
    GDevice<T, L> dev(g);
    const size_t len = kband::gtsv_workspace_size(dev.x);
    ASSERT_GE(len, static_cast<size_t>(nsys) * n * 3);
    Kokkos::View<T*> ws("ws", len);
    Kokkos::deep_copy(ws, nan_value<T>());
    kband::SolveOptions opt;
    for (int rep = 0; rep < 4; ++rep) {
      opt.variant = rep < 2 ? kband::Variant::Global : kband::Variant::Recompute;
      const std::string what = "gtsv caller workspace " + L::name() + " n=" + std::to_string(n) +
                               " variant=" + kband::variant_name(opt.variant) + " rep=" + std::to_string(rep);
      if (!run_solver(what, dev.x, false, g.d, dev.info, nullptr,
                      [&] { kband::gtsv(exec, dev.a, dev.b, dev.c, dev.d, dev.x, dev.info, opt, ws); }))
        continue;
      check_gtsv(what, g, download(dev.x), download_info(dev.info));
    }
  }
}

// The O(n) long double reference (TridiagLU) agrees with the dense one.
TEST(GTSVReference, MatchesDenseLU) {
  double worst = 0;
  for (int n : {1, 2, 5, 33, 1000}) {
    const GCase<double>& g = get_random<double>(n, 7);
    for (int s = 0; s < g.nsys; ++s) {
      const size_t o = g.idx(s, 0);
      DenseLU lu(dense_tridiagonal(n, g.a.data() + o, g.b.data() + o, g.c.data() + o, false), n);
      ASSERT_FALSE(lu.singular());
      const auto xd = lu.solve(g.d.data() + o);
      real_ref num = 0, den = 0;
      for (int j = 0; j < n; ++j) {
        num = std::max(num, std::fabs(xd[j] - g.xref[o + j]));
        den = std::max(den, std::fabs(xd[j]));
      }
      const double rel = static_cast<double>(num / den);
      worst = std::max(worst, rel);
      // Same pivot sequence, so the two agree to long double rounding times kappa.
      EXPECT_LE(rel, 1e-16 + 64 * g.kappa[s] * static_cast<double>(std::numeric_limits<real_ref>::epsilon()))
          << "n=" << n << " s=" << s << " kappa=" << g.kappa[s];
    }
  }
  record_error("reference TridiagLU vs DenseLU", worst);
}

TEST(GTSVErrors, ArgumentsAreChecked) {
  using B = kband::InterleavedBatch<double>;
  Exec exec;
  const int nsys = 3, n = 8;
  const B a("a", nsys, n), b("b", nsys, n), c("c", nsys, n), d("d", nsys, n), x("x", nsys, n),
      d_short("d", nsys, n - 1), x0("x0", nsys, 0);
  const kband::ContiguousBatch<double> dc("dc", nsys, n);
  Kokkos::View<int*> info("info", nsys), info_long("info", nsys + 1);
  EXPECT_THROW(kband::gtsv(exec, a, b, c, d_short, x, info), kband::Error);
  EXPECT_THROW(kband::gtsv(exec, a, b, c, d, x, info_long), kband::Error);
  EXPECT_THROW(kband::gtsv(exec, a, b, c, d, b, info), kband::Error);   // x aliases b
  EXPECT_THROW(kband::gtsv(exec, a, b, c, dc, x, info), kband::Error);  // layout mismatch
  Kokkos::View<int*> info0("info0", nsys);
  EXPECT_THROW(kband::gtsv(exec, x0, x0, x0, x0, x0, info0), kband::Error);  // n = 0
  exec.fence();
}

}  // namespace
}  // namespace kband_test
