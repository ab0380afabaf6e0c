// kband::pcr (per-system coefficients and the shared PCRFactor) and
// kband::solve_tridiagonal, against the long double dense LU reference.
//
// Accuracy bound (diagonally dominant family, see kband_test_common.hpp):
// ||x - xref||_inf / ||xref||_inf <= Tol<T>::dominant (1e-13 double, 2e-5
// float), the bound of the Thomas tests: PCR on strictly dominant rows is
// backward stable, its reduced off-diagonals shrink every step. The maxima
// observed are printed at the end of the run ("pcr" keys).
//
// Both variants run: Scratch (a system's rows in team scratch) and Registers
// (chunks of 8 rows reduced in registers, PCR on the chunks' first and last
// rows). On host backends a Registers team has one thread that owns every
// chunk, on GPUs a thread owns one (team size 32 leaves several per thread
// for n > 256). A kband::Error is accepted only when it names the team
// scratch limit (long systems on GPUs, Scratch variant).
#include "kband_test_solvers.hpp"

namespace kband_test {
namespace {

const std::vector<int>& pcr_n_list() {
  static const std::vector<int> v{1, 2, 3, 4, 5, 7, 8, 11, 16, 31, 64, 100, 1000};
  return v;
}
// 1 and 3 leave a GPU team mostly idle; 33 and 100 fill several teams for small n.
const std::vector<int>& pcr_nsys_list() {
  static const std::vector<int> v{1, 3, 7, 33, 100};
  return v;
}
// Team sizes: kband's choice, and 32 (several rows per thread once n > 32).
// Serial ignores both (one thread per team).
const std::vector<int>& pcr_team_sizes() {
  static const std::vector<int> v{0, 32};
  return v;
}
// PCR's refusal names the limit: "needs N bytes of team scratch but the backend offers M".
constexpr const char* kScratchLimit = "team scratch but the backend offers";

// The per-system variants of kband::pcr.
const std::vector<kband::Variant>& pcr_variants() {
  static const std::vector<kband::Variant> v{kband::Variant::Auto, kband::Variant::Scratch, kband::Variant::Registers};
  return v;
}

std::string describe(const char* solver, const std::string& layout, const char* type, int n, int nsys, int ts,
                     bool inplace, kband::Variant var = kband::Variant::Auto) {
  std::ostringstream os;
  os << solver << " " << layout << " " << type << " n=" << n << " nsys=" << nsys << " team_size=" << ts
     << " variant=" << kband::variant_name(var) << (inplace ? " in-place" : "");
  return os.str();
}

template <class C>
class PCRAccuracy : public ::testing::Test {};
TYPED_TEST_SUITE(PCRAccuracy, SolverConfigs, CfgNames);

// Per-system coefficients; out of place and in place (x == d).
TYPED_TEST(PCRAccuracy, PerSystem) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename L::template batch<T>;
  Exec exec;
  for (int n : pcr_n_list())
    for (int nsys : pcr_nsys_list()) {
      const Case<T>& cs = get_case<T>(Solver::Thomas, Family::Dominant, n, nsys);
      const B a = make_batch<B>("a", nsys, n, cs.a), b = make_batch<B>("b", nsys, n, cs.b),
              c = make_batch<B>("c", nsys, n, cs.c), d("d", nsys, n), x("x", nsys, n);
      Kokkos::View<int*> info("info", nsys);
      for (kband::Variant var : pcr_variants())
      for (int ts : pcr_team_sizes())
        for (bool inplace : {false, true}) {
          const std::string what = describe("pcr", L::name(), type_name(T()), n, nsys, ts, inplace, var);
          kband::SolveOptions opt;
          opt.team_size = ts;
          opt.variant = var;
          upload(d, cs.d);
          const B& xo = inplace ? d : x;
          if (!run_solver(what, xo, inplace, cs.d, info, kScratchLimit,
                          [&] { kband::pcr(exec, a, b, c, d, xo, info, opt); }))
            continue;
          int pad = 0;
          const std::vector<T> xh = download(xo, &pad);
          check_against_reference(what, cs, xh, download_info(info), Tol<T>::dominant, "pcr");
          EXPECT_EQ(pad, 0) << what << ": padding written";
          EXPECT_EQ(count_differences(download(a), cs.a) + count_differences(download(b), cs.b) +
                        count_differences(download(c), cs.c),
                    0)
              << what << ": a, b or c modified";
          if (!inplace) {
            EXPECT_EQ(count_differences(download(d), cs.d), 0) << what << ": d modified";
          }
        }
    }
}

// One matrix factored once (PCRFactor), many right-hand sides.
TYPED_TEST(PCRAccuracy, SharedFactor) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename L::template batch<T>;
  Exec exec;
  for (int n : pcr_n_list())
    for (int nsys : pcr_nsys_list()) {
      const Case<T>& cs = get_case<T>(Solver::Shared, Family::Dominant, n, nsys);
      const auto a1 = make_vector("a1", cs.a), b1 = make_vector("b1", cs.b), c1 = make_vector("c1", cs.c);
      kband::PCRFactor<T> factor(exec, a1, b1, c1);
      exec.fence();
      ASSERT_EQ(factor.info(), 0) << "n=" << n << ": factor of a regular matrix failed";
      ASSERT_EQ(factor.n(), n);
      const B d("d", nsys, n), x("x", nsys, n);
      Kokkos::View<int*> info("info", nsys);
      for (kband::Variant var : pcr_variants())
      for (int ts : pcr_team_sizes())
        for (bool inplace : {false, true}) {
          const std::string what = describe("pcr(shared)", L::name(), type_name(T()), n, nsys, ts, inplace, var);
          kband::SolveOptions opt;
          opt.team_size = ts;
          opt.variant = var;
          upload(d, cs.d);
          const B& xo = inplace ? d : x;
          if (!run_solver(what, xo, inplace, cs.d, info, kScratchLimit,
                          [&] { kband::pcr(exec, factor, d, xo, info, opt); }))
            continue;
          int pad = 0;
          const std::vector<T> xh = download(xo, &pad);
          check_against_reference(what, cs, xh, download_info(info), Tol<T>::dominant, "pcr_shared");
          EXPECT_EQ(pad, 0) << what << ": padding written";
          if (!inplace) {
            EXPECT_EQ(count_differences(download(d), cs.d), 0) << what << ": d modified";
          }
        }
      // The factor's inputs are only read.
      auto ha = Kokkos::create_mirror_view(b1);
      Kokkos::deep_copy(ha, b1);
      for (int j = 0; j < n; ++j) EXPECT_TRUE(same_bits(ha(j), cs.b[j])) << "n=" << n << ": b modified";
    }
}

// A zero diagonal entry in one system and a NaN in another: info(s) names a
// row in [1, n], x(s,:) is NaN, and every other system of the batch is still
// solved correctly. Row 0's diagonal is a pivot of both variants; the
// Registers variant pivots on b - a c' inside a chunk, so a zero there may be
// harmless, and the middle row gets a zero (Scratch) or a NaN (both).
TYPED_TEST(PCRAccuracy, ZeroPivot) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename L::template batch<T>;
  Exec exec;
  for (kband::Variant var : pcr_variants())
    for (int n : {1, 2, 5, 33, 100})
      for (int nsys : {7, 33}) {
        const Case<T>& cs = get_case<T>(Solver::Thomas, Family::Dominant, n, nsys);
        // system 2: b(2,0) = 0; the last system: b(s, n/2) = 0 or NaN (a middle row).
        const int s1 = 2, s2 = nsys - 1;
        std::vector<T> bz = cs.b;
        bz[cs.idx(s1, 0)] = T(0);
        bz[cs.idx(s2, n / 2)] = var == kband::Variant::Scratch ? T(0) : std::numeric_limits<T>::quiet_NaN();
        const B a = make_batch<B>("a", nsys, n, cs.a), b = make_batch<B>("b", nsys, n, bz),
                c = make_batch<B>("c", nsys, n, cs.c), d = make_batch<B>("d", nsys, n, cs.d), x("x", nsys, n);
        Kokkos::View<int*> info("info", nsys);
        const std::string what = describe("pcr zero pivot", L::name(), type_name(T()), n, nsys, 0, false, var);
        kband::SolveOptions opt;
        opt.variant = var;
        if (!run_solver(what, x, false, cs.d, info, kScratchLimit,
                        [&] { kband::pcr(exec, a, b, c, d, x, info, opt); }))
          continue;
        const std::vector<T> xh = download(x);
        const std::vector<int> ih = download_info(info);
        for (int s : {s1, s2}) {
          EXPECT_GE(ih[s], 1) << what << " s=" << s;
          EXPECT_LE(ih[s], n) << what << " s=" << s;
          EXPECT_TRUE(all_nan(xh.data() + cs.idx(s, 0), n)) << what << " s=" << s << ": x not NaN";
        }
        EXPECT_EQ(ih[s1], 1) << what << ": row 0's pivot is its diagonal";
        check_against_reference(what, cs, xh, ih, Tol<T>::dominant, "pcr",
                                [&](int s) { return s == s1 || s == s2; });
      }
}

// A zero pivot in the shared matrix: the factor reports it and every system
// gets the same info and NaN, whichever variant solves.
TYPED_TEST(PCRAccuracy, SharedFactorZeroPivot) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename L::template batch<T>;
  Exec exec;
  for (kband::Variant var : pcr_variants())
    for (int n : {1, 4, 33}) {
      const int nsys = 7;
      const Case<T>& cs = get_case<T>(Solver::Shared, Family::Dominant, n, nsys);
      std::vector<T> bz = cs.b;
      bz[n - 1] = T(0);
      const auto a1 = make_vector("a1", cs.a), b1 = make_vector("b1", bz), c1 = make_vector("c1", cs.c);
      kband::PCRFactor<T> factor(exec, a1, b1, c1);
      exec.fence();
      const int finfo = factor.info();
      EXPECT_GE(finfo, 1) << "n=" << n;
      EXPECT_LE(finfo, n) << "n=" << n;
      const B d = make_batch<B>("d", nsys, n, cs.d), x("x", nsys, n);
      Kokkos::View<int*> info("info", nsys);
      const std::string what =
          describe("pcr(shared) zero pivot", L::name(), type_name(T()), n, nsys, 0, false, var);
      kband::SolveOptions opt;
      opt.variant = var;
      if (!run_solver(what, x, false, cs.d, info, kScratchLimit, [&] { kband::pcr(exec, factor, d, x, info, opt); }))
        continue;
      const std::vector<T> xh = download(x);
      const std::vector<int> ih = download_info(info);
      for (int s = 0; s < nsys; ++s) {
        EXPECT_EQ(ih[s], finfo) << what << " s=" << s;
        EXPECT_TRUE(all_nan(xh.data() + cs.idx(s, 0), n)) << what << " s=" << s;
      }
    }
}

// Segments (SolveOptions::segment_rows): the Registers variant cuts each
// system into segments of whole chunks, one team each, summarises every
// segment's end rows, solves for them, then solves the segments. Segment
// sizes of 1, 3 and 8 chunks, systems of 1 to 375 segments, per-system and
// shared, in place and out of place. The solve for the end rows: GPU teams
// of one to several systems, runs in registers; team_size 4 and 32 cut a
// system's segments into blocks, a team each, in four launches (GPUs: 13
// segments on 4 threads in one team, 125 in 8 blocks and 375 in 3, runs of
// 4 in registers; host backends, whose teams have one thread: 4 and 32
// blocks, runs of 4 in registers and of 32 and 12 walked in the workspace;
// without team_size, runs of 375 walked there).
TYPED_TEST(PCRAccuracy, Segments) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename L::template batch<T>;
  Exec exec;
  for (int n : {1, 9, 17, 24, 25, 100, 320, 1000, 3000})
    for (int nsys : {1, 7, 33})
      for (int rows : {8, 24, 64})
        for (bool shared : {false, true})
          for (int ts : {0, 4, 32}) {
            if (n == 3000 && (rows != 8 || nsys == 33)) continue;  // 375 segments
            if (ts == 32 && n != 3000) continue;
            if (ts == 4 && ((n != 100 && n != 1000) || rows != 8)) continue;  // 13 and 125 segments
            const Case<T>& cs = get_case<T>(shared ? Solver::Shared : Solver::Thomas, Family::Dominant, n, nsys);
            const B d("d", nsys, n), x("x", nsys, n);
            B a, b, c;  // per-system coefficients
            kband::PCRFactor<T> factor;
            if (shared)
              factor = kband::PCRFactor<T>(exec, make_vector("a1", cs.a), make_vector("b1", cs.b),
                                           make_vector("c1", cs.c));
            else {
              a = make_batch<B>("a", nsys, n, cs.a);
              b = make_batch<B>("b", nsys, n, cs.b);
              c = make_batch<B>("c", nsys, n, cs.c);
            }
            Kokkos::View<int*> info("info", nsys);
            for (bool inplace : {false, true}) {
              std::string what = describe(shared ? "pcr(shared) segments" : "pcr segments", L::name(),
                                          type_name(T()), n, nsys, 0, inplace, kband::Variant::Registers);
              what += " segment_rows=" + std::to_string(rows) + " team_size=" + std::to_string(ts);
              kband::SolveOptions opt;
              opt.variant = kband::Variant::Registers;
              opt.segment_rows = rows;
              opt.team_size = ts;
              upload(d, cs.d);
              const B& xo = inplace ? d : x;
              // the caller's workspace out of place; kband's own in place
              const Kokkos::View<T*> ws("ws", inplace ? 0 : kband::pcr_workspace_size(x, opt));
              if (!run_solver(what, xo, inplace, cs.d, info, nullptr, [&] {
                    if (shared)
                      kband::pcr(exec, factor, d, xo, info, opt, ws);
                    else
                      kband::pcr(exec, a, b, c, d, xo, info, opt, ws);
                  }))
                continue;
              int pad = 0;
              const std::vector<T> xh = download(xo, &pad);
              check_against_reference(what, cs, xh, download_info(info), Tol<T>::dominant,
                                      shared ? "pcr_shared" : "pcr");
              EXPECT_EQ(pad, 0) << what << ": padding written";
            }
          }
}

// A zero pivot or a NaN in a later segment: info names a row of it, and the
// whole system is NaN (the other segments included); the other systems are
// solved. With team_size 3, host backends solve for the end rows in three
// blocks of three segments: the NaN crosses blocks.
TYPED_TEST(PCRAccuracy, SegmentsZeroPivot) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename L::template batch<T>;
  Exec exec;
  const int n = 200, nsys = 7, rows = 24;
  const Case<T>& cs = get_case<T>(Solver::Thomas, Family::Dominant, n, nsys);
  const int s1 = 2, s2 = 5;
  std::vector<T> bz = cs.b;
  bz[cs.idx(s1, 2 * rows)] = T(0);                               // first row of segment 2: a pivot itself
  bz[cs.idx(s2, 5 * rows + 11)] = std::numeric_limits<T>::quiet_NaN();  // inside segment 5
  const B a = make_batch<B>("a", nsys, n, cs.a), b = make_batch<B>("b", nsys, n, bz),
          c = make_batch<B>("c", nsys, n, cs.c), d = make_batch<B>("d", nsys, n, cs.d), x("x", nsys, n);
  Kokkos::View<int*> info("info", nsys);
  for (int ts : {0, 3}) {
    kband::SolveOptions opt;
    opt.variant = kband::Variant::Registers;
    opt.segment_rows = rows;
    opt.team_size = ts;
    const std::string what = describe("pcr segments zero pivot", L::name(), type_name(T()), n, nsys, 0, false,
                                      kband::Variant::Registers) +
                             " team_size=" + std::to_string(ts);
    if (!run_solver(what, x, false, cs.d, info, nullptr, [&] { kband::pcr(exec, a, b, c, d, x, info, opt); }))
      continue;
    const std::vector<T> xh = download(x);
    const std::vector<int> ih = download_info(info);
    EXPECT_EQ(ih[s1], 2 * rows + 1) << what;
    EXPECT_GE(ih[s2], 5 * rows + 1) << what;
    EXPECT_LE(ih[s2], 6 * rows) << what;
    for (int s : {s1, s2}) EXPECT_TRUE(all_nan(xh.data() + cs.idx(s, 0), n)) << what << " s=" << s << ": x not NaN";
    check_against_reference(what, cs, xh, ih, Tol<T>::dominant, "pcr", [&](int s) { return s == s1 || s == s2; });
  }
}

TEST(PCRErrors, ArgumentsAreChecked) {
  using B = kband::ContiguousBatch<double>;
  Exec exec;
  const int nsys = 3, n = 8;
  const B a("a", nsys, n), b("b", nsys, n), c("c", nsys, n), d("d", nsys, n), x("x", nsys, n),
      d_short("d", nsys, n - 1);
  Kokkos::View<int*> info("info", nsys), info_long("info", nsys + 1);
  EXPECT_THROW(kband::pcr(exec, a, b, c, d_short, x, info), kband::Error);
  EXPECT_THROW(kband::pcr(exec, a, b, c, d, x, info_long), kband::Error);
  EXPECT_THROW(kband::pcr(exec, a, b, c, d, a, info), kband::Error);  // x aliases a
  kband::SolveOptions global;
  global.variant = kband::Variant::Global;
  EXPECT_THROW(kband::pcr(exec, a, b, c, d, x, info, global), kband::Error);  // not a pcr variant
  Kokkos::View<double*> v8("v8", n), v7("v7", n - 1);
  EXPECT_THROW((void)kband::PCRFactor<double>(exec, v7, v8, v8), kband::Error);
  EXPECT_THROW((void)kband::PCRFactor<double>(exec, Kokkos::View<double*>("e", 0), Kokkos::View<double*>("e", 0),
                                              Kokkos::View<double*>("e", 0)),
               kband::Error);
  kband::PCRFactor<double> f7(exec, v7, v7, v7);  // zeros: info > 0, but a valid object
  exec.fence();
  EXPECT_THROW(kband::pcr(exec, f7, d, x, info), kband::Error);  // n mismatch
  EXPECT_THROW(kband::pcr(exec, kband::PCRFactor<double>(), d, x, info), kband::Error);
  kband::PCRFactor<double> f8(exec, v8, v8, v8);
  EXPECT_THROW(kband::pcr(exec, f8, d, x, info_long), kband::Error);
  EXPECT_THROW(kband::pcr(exec, f8, d_short, x, info), kband::Error);
  EXPECT_THROW(kband::pcr(exec, f8, d, x, info, global), kband::Error);  // not a pcr variant
  exec.fence();
}

// ---------------------------------------------------------------------------
// kband::solve_tridiagonal
// ---------------------------------------------------------------------------
template <class C>
class SolveTridiagonal : public ::testing::Test {};
TYPED_TEST_SUITE(SolveTridiagonal, SolverConfigs, CfgNames);

/// Solves cs (ordinary, per-system) through solve_tridiagonal with `alg` and
/// checks the returned algorithm and the answer against xref.
template <class T, class L>
void solve_tridiagonal_case(const Case<T>& cs, kband::TridiagonalAlgorithm alg, double tol) {
  using B = typename L::template batch<T>;
  Exec exec;
  const int n = cs.n, nsys = cs.nsys;
  const B a = make_batch<B>("a", nsys, n, cs.a), b = make_batch<B>("b", nsys, n, cs.b),
          c = make_batch<B>("c", nsys, n, cs.c), d = make_batch<B>("d", nsys, n, cs.d), x("x", nsys, n);
  Kokkos::View<int*> info("info", nsys);
  const kband::TridiagonalAlgorithm chosen = kband::choose_tridiagonal(exec, layout_of<L>::value, nsys, n, sizeof(T));
  EXPECT_NE(chosen, kband::TridiagonalAlgorithm::Auto);
  if (!device_backend()) {
    EXPECT_EQ(chosen, kband::TridiagonalAlgorithm::Thomas) << "CPUs always use Thomas";
  }
  const kband::TridiagonalAlgorithm expected = alg == kband::TridiagonalAlgorithm::Auto ? chosen : alg;
  std::ostringstream os;
  os << "solve_tridiagonal(" << kband::algorithm_name(alg) << ") " << L::name() << " " << type_name(T()) << " n=" << n
     << " nsys=" << nsys;
  const std::string what = os.str();
  kband::TridiagonalOptions opt;
  opt.algorithm = alg;
  kband::TridiagonalAlgorithm used = kband::TridiagonalAlgorithm::Auto;
  // Only a forced PCR may be refused (scratch limit); Auto must pick a solver that works.
  if (!run_solver(what, x, false, cs.d, info, alg == kband::TridiagonalAlgorithm::PCR ? kScratchLimit : nullptr,
                  [&] { used = kband::solve_tridiagonal(exec, a, b, c, d, x, info, opt); }))
    return;
  EXPECT_EQ(used, expected) << what << ": used " << kband::algorithm_name(used) << ", choose_tridiagonal says "
                            << kband::algorithm_name(chosen);
  check_against_reference(what, cs, download(x), download_info(info), tol,
                          std::string("solve_tridiagonal_") + kband::algorithm_name(used));
}

TYPED_TEST(SolveTridiagonal, AlgorithmChoiceAndForcing) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  for (int n : {1, 5, 33, 100, 1000})
    for (int nsys : {1, 33})
      for (auto alg : {kband::TridiagonalAlgorithm::Auto, kband::TridiagonalAlgorithm::Thomas,
                       kband::TridiagonalAlgorithm::PCR, kband::TridiagonalAlgorithm::Hybrid})
        solve_tridiagonal_case<T, L>(get_case<T>(Solver::Thomas, Family::Dominant, n, nsys), alg, Tol<T>::dominant);
}

// Long contiguous systems: on GPUs choose_tridiagonal picks PCR (its
// Registers variant; the Scratch variant's rows would not fit on chip);
// whatever the choice, the answer must be right. The reference is the O(n) long double pivoted LU (DenseLU would
// need n^2 long doubles), checked against DenseLU in GTSVReference.
template <class T>
void long_contiguous_case(int n) {
  const int nsys = 3;
  Case<T> cs;
  cs.solver = Solver::Thomas;
  cs.family = Family::Dominant;
  cs.n = n;
  cs.nsys = nsys;
  Rng rng(mix_seed({sizeof(T), static_cast<std::uint64_t>(n), 3, 77}));
  cs.a.resize(static_cast<size_t>(nsys) * n);
  cs.b.resize(cs.a.size());
  cs.c.resize(cs.a.size());
  cs.d.resize(cs.a.size());
  cs.xref.resize(cs.a.size());
  for (int s = 0; s < nsys; ++s) {
    const size_t o = cs.idx(s, 0);
    generate_system(rng, Family::Dominant, n, false, cs.a.data() + o, cs.b.data() + o, cs.c.data() + o);
    for (int j = 0; j < n; ++j) cs.d[o + j] = static_cast<T>(rng.uniform(-1, 1));
    const TridiagLU lu(n, cs.a.data() + o, cs.b.data() + o, cs.c.data() + o);
    ASSERT_TRUE(lu.ok());
    const std::vector<real_ref> xr = lu.solve(cs.d.data() + o);
    std::copy(xr.begin(), xr.end(), cs.xref.begin() + o);
  }
  for (auto alg : {kband::TridiagonalAlgorithm::Auto, kband::TridiagonalAlgorithm::Thomas,
                   kband::TridiagonalAlgorithm::PCR, kband::TridiagonalAlgorithm::Hybrid})
    solve_tridiagonal_case<T, ContiguousTag>(cs, alg, Tol<T>::dominant);
}
TEST(SolveTridiagonalLong, Contiguous5000_double) { long_contiguous_case<double>(5000); }
TEST(SolveTridiagonalLong, Contiguous5000_float) { long_contiguous_case<float>(5000); }
// Thomas on GPUs: double past n = 4096 in two register segments of 16 rows
// a thread (teams of 256 threads at n = 8192), float in one of 16
TEST(SolveTridiagonalLong, Contiguous8192_double) { long_contiguous_case<double>(8192); }
TEST(SolveTridiagonalLong, Contiguous8192_float) { long_contiguous_case<float>(8192); }

}  // namespace
}  // namespace kband_test
