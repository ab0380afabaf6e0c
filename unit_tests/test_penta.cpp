// kband::penta, periodic_penta, PentadiagonalFactor, pcr_penta and
// solve_pentadiagonal against the long double dense LU reference, info codes
// and argument errors.
//
// Accuracy bound: strictly diagonally dominant rows (test_penta_helpers.hpp),
// ||x - xref||_inf / ||xref||_inf <= Tol<T>::dominant (1e-13 double, 2e-5
// float), the bound of the tridiagonal tests. Observed maxima on Serial
// (Kokkos 3.4, g++ 12, Release) over the whole sweep: double 7.5e-16, float
// 3.3e-7 (printed at the end of the run, "penta*" keys): the bound keeps a
// margin of more than 50x for other backends' rounding, while a wrong row or
// a lost correction term gives errors of order 1.
//
// Every solve starts from outputs poisoned with NaN and info = -777; the
// entries outside an ordinary matrix hold NaN, so a solver that reads them as
// values fails. Refusals are accepted only when they name team scratch (long
// systems with Variant::Scratch or PCR on GPUs).
#include "test_penta_helpers.hpp"

#include <memory>

namespace kband_test {
namespace {

const std::vector<int>& penta_n_list() {
  static const std::vector<int> v{1, 2, 3, 4, 5, 6, 7, 11, 64, 1000};
  return v;
}
const std::vector<int>& penta_nsys_list() {
  static const std::vector<int> v{1, 7, kSZ + 1};
  return v;
}
constexpr const char* kScratchLimit = "team scratch";

// Auto*: solve_pentadiagonal (Auto, periodic, PCR forced, elimination forced)
enum class PSolver { PerSystem, Periodic, Shared, SharedPeriodic, PCR, Auto, AutoPeriodic, ForcePCR, ForceElim };
const char* psolver_name(PSolver s) {
  static const char* const names[] = {"penta",     "periodic_penta",      "penta_shared",
                                      "penta_shared_periodic", "pcr_penta", "solve_pentadiagonal",
                                      "solve_pentadiagonal(periodic)", "solve_pentadiagonal(pcr)",
                                      "solve_pentadiagonal(elimination)"};
  return names[static_cast<int>(s)];
}
bool psolver_periodic(PSolver s) {
  return s == PSolver::Periodic || s == PSolver::SharedPeriodic || s == PSolver::AutoPeriodic;
}
bool psolver_auto(PSolver s) { return static_cast<int>(s) >= static_cast<int>(PSolver::Auto); }
bool psolver_shared(PSolver s) { return s == PSolver::Shared || s == PSolver::SharedPeriodic; }

/// Factor of a shared case (checked: info 0).
template <class T>
kband::PentadiagonalFactor<T> make_factor(const PentaCase<T>& cs) {
  Exec exec;
  const auto a = make_vector("a1", cs.a), b = make_vector("b1", cs.b), c = make_vector("c1", cs.c),
             d = make_vector("d1", cs.d), e = make_vector("e1", cs.e);
  kband::PentadiagonalFactor<T> f(exec, a, b, c, d, e,
                                  cs.periodic ? kband::Boundary::Periodic : kband::Boundary::NonPeriodic);
  exec.fence();
  return f;
}

/// One solve of case (n, nsys) by `solver` in batch type B, with all checks;
/// returns whether the solver served it (a refusal must name `refusal`).
template <class T, class B>
bool run_penta(PSolver solver, const std::string& layout, int n, int nsys, kband::Variant variant, int team_size,
               bool inplace, int blocks = 0, const char* refusal = kScratchLimit, const PentaCase<T>* own = nullptr) {
  const bool periodic = psolver_periodic(solver), shared = psolver_shared(solver);
  if (periodic && n < 5) return false;
  const PentaCase<T>& cs = own != nullptr ? *own : get_penta_case<T>(n, nsys, shared, periodic);
  Exec exec;
  const B y = make_batch<B>("y", nsys, n, cs.y), x("x", nsys, n);
  Kokkos::View<int*> info("info", nsys);
  kband::SolveOptions opt;
  opt.variant = variant;
  opt.team_size = team_size;
  opt.blocks_per_team = blocks;
  const B& xo = inplace ? y : x;
  std::ostringstream os;
  os << psolver_name(solver) << " " << layout << " " << type_name(T()) << " n=" << n << " nsys=" << nsys
     << " variant=" << kband::variant_name(variant) << " team_size=" << team_size << " blocks=" << blocks
     << (inplace ? " in-place" : "");
  const std::string what = os.str();
  std::unique_ptr<PentaBatches<B>> p;
  kband::PentadiagonalFactor<T> factor;
  if (shared) {
    factor = make_factor(cs);
    EXPECT_EQ(factor.info(), 0) << what << ": factor of a regular matrix failed";
    if (factor.info() != 0) return false;
  } else {
    p.reset(new PentaBatches<B>(cs));
  }
  kband::PentadiagonalAlgorithm used = kband::PentadiagonalAlgorithm::Auto;
  kband::PentadiagonalOptions popt;
  popt.boundary = periodic ? kband::Boundary::Periodic : kband::Boundary::NonPeriodic;
  if (solver == PSolver::ForcePCR) popt.algorithm = kband::PentadiagonalAlgorithm::PCR;
  if (solver == PSolver::ForceElim) popt.algorithm = kband::PentadiagonalAlgorithm::Elimination;
  const auto call = [&] {
    switch (solver) {
      case PSolver::PerSystem: kband::penta(exec, p->a, p->b, p->c, p->d, p->e, y, xo, info, opt); break;
      case PSolver::Periodic: kband::periodic_penta(exec, p->a, p->b, p->c, p->d, p->e, y, xo, info, opt); break;
      case PSolver::PCR: kband::pcr_penta(exec, p->a, p->b, p->c, p->d, p->e, y, xo, info, opt); break;
      case PSolver::Shared:
      case PSolver::SharedPeriodic: kband::penta(exec, factor, y, xo, info, opt); break;
      default: used = kband::solve_pentadiagonal(exec, p->a, p->b, p->c, p->d, p->e, y, xo, info, popt); break;
    }
  };
  if (!run_solver(what, xo, inplace, cs.y, info, refusal, call)) return false;
  if (psolver_auto(solver)) {
    const auto expect = popt.algorithm != kband::PentadiagonalAlgorithm::Auto
                            ? popt.algorithm
                            : kband::choose_pentadiagonal(exec, kband::impl::batch_traits<B>::layout, nsys, n,
                                                          sizeof(T), popt.boundary);
    EXPECT_EQ(used, expect) << what;
  }
  int pad = 0;
  const std::vector<T> xh = download(xo, &pad);
  check_against_reference(what, cs, xh, download_info(info), Tol<T>::dominant, psolver_name(solver));
  EXPECT_EQ(pad, 0) << what << ": GroupedBatch padding written";
  if (p) {
    EXPECT_EQ(count_differences(download(p->a), cs.a) + count_differences(download(p->b), cs.b) +
                  count_differences(download(p->c), cs.c) + count_differences(download(p->d), cs.d) +
                  count_differences(download(p->e), cs.e),
              0)
        << what << ": a..e modified";
  }
  if (!inplace) {
    EXPECT_EQ(count_differences(download(y), cs.y), 0) << what << ": y modified";
  }
  return true;
}

template <class C>
class PentaAccuracy : public ::testing::Test {
 protected:
  using T = typename C::value_type;
  using L = typename C::layout;
  using B = typename L::template batch<T>;
  /// Every n and batch size of the issue, for the given variants / team sizes.
  static void sweep(PSolver solver, const std::vector<kband::Variant>& variants, const std::vector<int>& teams) {
    for (int n : penta_n_list())
      for (int nsys : penta_nsys_list()) {
        for (kband::Variant v : variants)
          for (int ts : teams) run_penta<T, B>(solver, L::name(), n, nsys, v, ts, false);
        run_penta<T, B>(solver, L::name(), n, nsys, variants.front(), teams.front(), true);
      }
  }
  /// Whether the backend serves per-system Variant::Registers at n rows
  /// (hosts: one chunk of kPentaRegisterRows rows).
  static bool registers_served(int n) {
    return n <= kband::impl::kPentaRegisterRows || kband::impl::is_device_exec<Exec>::value;
  }
};
TYPED_TEST_SUITE(PentaAccuracy, SolverConfigs, CfgNames);

TYPED_TEST(PentaAccuracy, PerSystem) { TestFixture::sweep(PSolver::PerSystem, all_variants(), {0}); }
TYPED_TEST(PentaAccuracy, Periodic) { TestFixture::sweep(PSolver::Periodic, all_variants(), {0}); }
TYPED_TEST(PentaAccuracy, SharedFactor) { TestFixture::sweep(PSolver::Shared, all_variants(), {0}); }
TYPED_TEST(PentaAccuracy, SharedFactorPeriodic) { TestFixture::sweep(PSolver::SharedPeriodic, all_variants(), {0}); }
// Shared factors in the variants that store no intermediate row: Registers
// (16 rows a thread) one row short of and past whole chunks, a last chunk of
// one row, teams that solve 3 blocks of systems in turn; Recompute (blocks
// of KBAND_RECOMPUTE_ROWS rows with two checkpoint rows each) at block
// boundaries, a last block of one and two rows. Both in place too. Every
// backend serves Recompute, and Registers when one chunk holds the system;
// a GPU serves Registers for every n here.
TYPED_TEST(PentaAccuracy, SharedRegistersAndRecompute) {
  using T = typename TestFixture::T;
  using L = typename TestFixture::L;
  using B = typename TestFixture::B;
  constexpr int M = kband::impl::kRegisterRowsShared, RB = KBAND_RECOMPUTE_ROWS;
  const bool device = kband::impl::is_device_exec<Exec>::value;
  for (PSolver solver : {PSolver::Shared, PSolver::SharedPeriodic})
    for (int n : {1, 2, 3, 5, 6, M - 1, M, M + 1, M + 2, 2 * M + 1, RB + 2, 2 * RB, 2 * RB + 1, 3 * RB + 2, 5 * M - 1,
                  257}) {
      if (psolver_periodic(solver) && n < 5) continue;
      for (int nsys : {1, kSZ + 1, 70}) {
        for (int blocks : {0, 3})
          for (bool inplace : {false, true}) {
            const bool served = run_penta<T, B>(solver, L::name(), n, nsys, kband::Variant::Registers, 0, inplace,
                                                blocks, "Variant::Registers");
            if (n <= M || device) EXPECT_TRUE(served) << psolver_name(solver) << " Registers n=" << n;
          }
        for (bool inplace : {false, true}) {
          const bool served =
              run_penta<T, B>(solver, L::name(), n, nsys, kband::Variant::Recompute, 0, inplace, 0, nullptr);
          EXPECT_TRUE(served) << psolver_name(solver) << " Recompute n=" << n;
        }
      }
    }
}
// Shared factors, periodic or not, Global and Auto, on batches whose CPU
// threads run full packs of LanePack::L systems as vectors
// (PentaShared::solve_packed: interleaved and grouped batches; two packs at
// once from KBAND_HOST_PAIR_ROWS rows on), with a remainder of lanes solved
// lane by lane; in place too. GPUs run the same cases through their own
// kernels.
TYPED_TEST(PentaAccuracy, SharedPacks) {
  using T = typename TestFixture::T;
  using L = typename TestFixture::L;
  using B = typename TestFixture::B;
  constexpr int pair = KBAND_HOST_PAIR_ROWS;
  for (PSolver solver : {PSolver::Shared, PSolver::SharedPeriodic})
    for (int n : {1, 2, 3, 5, 64, pair - 1, pair, pair + 3}) {
      if (psolver_periodic(solver) && n < 5) continue;
      for (int nsys : {16, 37, 70})
        for (kband::Variant v : {kband::Variant::Global, kband::Variant::Auto})
          for (bool inplace : {false, true}) {
            const bool served = run_penta<T, B>(solver, L::name(), n, nsys, v, 0, inplace, 0, nullptr);
            EXPECT_TRUE(served) << psolver_name(solver) << " " << L::name() << " n=" << n << " nsys=" << nsys;
          }
    }
}
// Per-system coefficients in the Registers variant (kPentaRegisterRows = 8
// rows a thread): systems of one chunk, one row short of and past whole
// chunks, a last chunk of one row, many chunks; teams of several systems and
// of one, teams that solve 3 blocks of systems in turn; in place too. Hosts
// serve systems of one chunk; a GPU every n here.
TYPED_TEST(PentaAccuracy, PerSystemRegisters) {
  using T = typename TestFixture::T;
  using L = typename TestFixture::L;
  using B = typename TestFixture::B;
  constexpr int M = kband::impl::kPentaRegisterRows;
  for (int n : {1, 2, 3, 4, 5, 6, M - 1, M, M + 1, M + 2, 2 * M + 1, 5 * M - 1, 64, 257, 1000})
    for (int nsys : {1, kSZ + 1, 70})
      for (int ts : {0, 32})
        for (int blocks : {0, 3})
          for (bool inplace : {false, true}) {
            if (inplace && (ts != 0 || blocks != 0)) continue;
            const bool served = run_penta<T, B>(PSolver::PerSystem, L::name(), n, nsys, kband::Variant::Registers,
                                                ts, inplace, blocks, "Variant::Registers");
            if (TestFixture::registers_served(n))
              EXPECT_TRUE(served) << "penta Registers n=" << n << " team_size=" << ts;
          }
}
// Per-system coefficients in the Scratch variant in the small teams Auto
// gives interleaved and grouped batches on GPUs (impl::penta_scratch_plan),
// whose forward pass there loads the next block of rows while it eliminates
// one (PentaPerSystem::forward_pipelined): n below, at, between and past
// whole blocks of thomas_unroll rows, one block and one row, the n where
// Auto's plans change (z in scratch or through x; wide and narrow teams) up
// to the largest it serves so; batches whose rows start on 128-byte lines
// (64 systems) and others; teams of 8, 16 and 32 threads and Auto; in place
// too.
TYPED_TEST(PentaAccuracy, PerSystemScratchTeams) {
  using T = typename TestFixture::T;
  using L = typename TestFixture::L;
  using B = typename TestFixture::B;
  constexpr int U = KBAND_UNROLL_FOUR_STREAMS;  // the GPUs' block of rows
  for (int n : {1, 3, U - 1, U, U + 1, 2 * U, 2 * U + 1, 3 * U, 3 * U + 5, 64, 100, 128, 145, 192})
    for (int nsys : {1, kSZ + 1, 64, 70})
      for (int ts : {0, 8, 16, 32})
        for (bool inplace : {false, true}) {
          if (inplace && ts != 8) continue;
          const kband::Variant v = ts == 0 ? kband::Variant::Auto : kband::Variant::Scratch;
          const bool served = run_penta<T, B>(PSolver::PerSystem, L::name(), n, nsys, v, ts, inplace, 0, nullptr);
          EXPECT_TRUE(served) << "penta " << kband::variant_name(v) << " n=" << n << " team_size=" << ts;
        }
}
// The Scratch variant where a team's three rows a thread (with periodic
// systems five) do not fit the on-chip scratch level but two (four) do: z
// then goes through x (interleaved and grouped batches; contiguous ones keep
// the larger level). n: the largest such, and one between the two limits.
TYPED_TEST(PentaAccuracy, PerSystemScratchZThroughX) {
  using T = typename TestFixture::T;
  using L = typename TestFixture::L;
  using B = typename TestFixture::B;
  const int ts = device_backend() ? 8 : 1;  // threads a team (hosts: 1)
  const size_t thread = static_cast<size_t>(kband::impl::thomas_lanes<Exec, B>::value) * sizeof(T) * ts;
  const size_t level0 = static_cast<size_t>(Kokkos::TeamPolicy<Exec>::scratch_size_max(0));
  for (PSolver solver : {PSolver::PerSystem, PSolver::Periodic}) {
    const int extra = solver == PSolver::Periodic ? 2 : 0;
    const int most = static_cast<int>(level0 / ((2 + extra) * thread));   // fits without z
    const int least = static_cast<int>(level0 / ((3 + extra) * thread)) + 1;  // does not with z
    ASSERT_LT(least, most);
    for (int n : {most, (least + most) / 2 | 1})
      for (int nsys : {1, kSZ + 1, 70})
        for (bool inplace : {false, true}) {
          const bool served =
              run_penta<T, B>(solver, L::name(), n, nsys, kband::Variant::Scratch, ts, inplace, 0, nullptr);
          EXPECT_TRUE(served) << psolver_name(solver) << " Scratch n=" << n;
        }
  }
}
// Zero entries inside the band: with e(s,j) = 0 the 4x4 transfer of row j
// is singular, while the Registers variant's map of Pluecker coordinates
// stays exact. Every variant against the reference.
TYPED_TEST(PentaAccuracy, PerSystemZeroBandEntries) {
  using T = typename TestFixture::T;
  using L = typename TestFixture::L;
  using B = typename TestFixture::B;
  for (int n : {3, 7, 9, 17, 64, 257}) {
    const int nsys = kSZ + 1;
    PentaCase<T> cs = get_penta_case<T>(n, nsys, false, false);
    for (int s = 0; s < nsys; ++s)
      for (int j = 0; j < n; ++j) {
        // every row where the pattern puts a zero, shifted per system
        const int js = j + s;
        if (js % 5 == 2 && j < n - 2) cs.e[cs.idx(s, j)] = T(0);
        if (js % 7 == 3 && j < n - 1) cs.d[cs.idx(s, j)] = T(0);
        if (js % 4 == 1 && j >= 2) cs.a[cs.idx(s, j)] = T(0);
        if (s % 3 == 0 && j >= 1 && j % 2 == 0) cs.b[cs.idx(s, j)] = T(0);
      }
    penta_reference(cs);
    for (kband::Variant v : {kband::Variant::Auto, kband::Variant::Global, kband::Variant::Scratch,
                             kband::Variant::Registers, kband::Variant::Window}) {
      if (v == kband::Variant::Registers && !TestFixture::registers_served(n)) continue;
      run_penta<T, B>(PSolver::PerSystem, L::name(), n, nsys, v, 0, false, 0, kScratchLimit, &cs);
    }
  }
}
// Variant::Window (kband_PentaWindow_impl.hpp) over every n and batch size,
// in place too; with weakly dominant systems next to strong ones in the same
// teams: those outgrow the ring and go on in the workspace (a caller's,
// full of a sentinel: a strong system leaves its rows untouched), across
// block and ring sizes.
TYPED_TEST(PentaAccuracy, PerSystemWindow) {
  TestFixture::sweep(PSolver::PerSystem, {kband::Variant::Window}, {0});
}
TYPED_TEST(PentaAccuracy, WindowLongLags) {
  using T = typename TestFixture::T;
  using B = typename TestFixture::B;
  constexpr int R = kband::impl::PentaWindowShape<T>::R, Bk = kband::impl::PentaWindowShape<T>::B;
  using WMap = kband::impl::WorkspaceMap<kband::impl::batch_traits<B>::layout, kband::impl::batch_traits<B>::sz>;
  Exec exec;
  for (int n : {Bk + 1, R - Bk, R + 3, 200, 701}) {
    const int nsys = kSZ + 3;
    PentaCase<T> cs = get_penta_case<T>(n, nsys, false, false);
    // odd systems: |c| exceeds the rest of its row by 2 % only (a lag of
    // hundreds of rows); even ones by 4-5 instead of get_penta_case's
    // 0.5-1.5 (a lag of at most some 34 rows in double, which the ring holds)
    for (int s = 0; s < nsys; ++s)
      for (int j = 0; j < n; ++j) {
        double sum = 0;
        for (int k : {0, 1, 3, 4}) {
          const T v = (*cs.diag(k))[cs.idx(s, j)];
          if (!std::isnan(static_cast<double>(v))) sum += std::fabs(static_cast<double>(v));
        }
        T& c = cs.c[cs.idx(s, j)];
        const double sign = c < 0 ? -1 : 1;
        c = static_cast<T>(s % 2 == 1 ? sign * (1.02 * sum + 1e-3) : c + sign * 3.5);
      }
    penta_reference(cs);
    const PentaBatches<B> p(cs);
    for (bool inplace : {false, true}) {
      const B y = make_batch<B>("y", nsys, n, cs.y), x("x", nsys, n);
      const B& xo = inplace ? y : x;
      Kokkos::View<int*> info("info", nsys);
      const T sentinel = T(12345);
      Kokkos::View<T*> ws("ws", kband::penta_workspace_size(xo));
      Kokkos::deep_copy(ws, sentinel);
      kband::SolveOptions opt;
      opt.variant = kband::Variant::Window;
      const std::string what = std::string("penta Window n=") + std::to_string(n) + (inplace ? " in place" : "");
      ASSERT_TRUE(run_solver(what, xo, inplace, cs.y, info, nullptr,
                             [&] { kband::penta(exec, p.a, p.b, p.c, p.d, p.e, y, xo, info, opt, ws); }));
      int pad = 0;
      const std::vector<T> xh = download(xo, &pad);
      check_against_reference(what, cs, xh, download_info(info), sizeof(T) >= 8 ? 1e-10 : 2e-3, "penta window");
      EXPECT_EQ(pad, 0) << what;
      auto hw = Kokkos::create_mirror_view(ws);
      Kokkos::deep_copy(hw, ws);
      const size_t ext = WMap::extent(nsys, n);
      int weak_spilled = 0;
      for (int s = 0; s < nsys; ++s) {
        bool touched = false;
        for (int j = 0; j < n; ++j)
          for (size_t buf : {size_t(0), ext})
            touched = touched || hw(buf + WMap::offset(s, nsys, n) + size_t(j) * WMap::row_stride(nsys, n)) != sentinel;
        if (s % 2 == 0) {
          EXPECT_FALSE(touched) << what << " s=" << s << ": a strong system left the ring";
        }
        weak_spilled += s % 2 == 1 && touched ? 1 : 0;
      }
      if (n > R && sizeof(T) >= 8) {
        EXPECT_EQ(weak_spilled, nsys / 2) << what << ": weak systems that went on in the workspace";
      }
    }
  }
}
TYPED_TEST(PentaAccuracy, PCR) { TestFixture::sweep(PSolver::PCR, {kband::Variant::Auto}, {0, 32}); }
TYPED_TEST(PentaAccuracy, SolvePentadiagonal) {
  for (PSolver s : {PSolver::Auto, PSolver::AutoPeriodic, PSolver::ForcePCR, PSolver::ForceElim})
    TestFixture::sweep(s, {kband::Variant::Auto}, {0});
}

// ---------------------------------------------------------------------------
// info codes
// ---------------------------------------------------------------------------
template <class C>
class PentaInfo : public ::testing::Test {};
TYPED_TEST_SUITE(PentaInfo, SolverConfigs, CfgNames);

/// Per-system solvers with two broken systems (s1, s2) out of nsys: s1 gets
/// entry `v1` at (row j1) of diagonal k1, s2 a whole zero row j2. The broken
/// systems must report info in [lo, hi] (exactly `exact1` / `exact2` when >
/// 0) with NaN x; the others must be solved.
template <class T, class B>
void broken_systems(PSolver solver, const std::string& layout, int n, int k1, int j1, T v1, int exact1, int j2,
                    int exact2, kband::Variant variant = kband::Variant::Auto, int nsys = 7, int s1 = 2,
                    int s2 = 6) {
  const bool periodic = solver == PSolver::Periodic;
  PentaCase<T> cs = get_penta_case<T>(n, nsys, false, periodic);
  (*cs.diag(k1))[cs.idx(s1, j1)] = v1;
  for (int k = 0; k < 5; ++k) (*cs.diag(k))[cs.idx(s2, j2)] = T(0);
  const PentaBatches<B> p(cs);
  const B x("x", nsys, n);
  Kokkos::View<int*> info("info", nsys);
  Exec exec;
  const std::string what = std::string(psolver_name(solver)) + " " + layout + " " + type_name(T()) +
                           " n=" + std::to_string(n) + " variant=" + kband::variant_name(variant);
  kband::SolveOptions opt;
  opt.variant = variant;
  const auto call = [&] {
    if (solver == PSolver::PerSystem) kband::penta(exec, p.a, p.b, p.c, p.d, p.e, p.y, x, info, opt);
    else if (solver == PSolver::Periodic) kband::periodic_penta(exec, p.a, p.b, p.c, p.d, p.e, p.y, x, info);
    else kband::pcr_penta(exec, p.a, p.b, p.c, p.d, p.e, p.y, x, info);
  };
  if (!run_solver(what, x, false, cs.y, info, kScratchLimit, call)) return;
  const std::vector<T> xh = download(x);
  const std::vector<int> ih = download_info(info);
  for (int s : {s1, s2}) {
    const int exact = s == s1 ? exact1 : exact2;
    if (exact > 0) EXPECT_EQ(ih[s], exact) << what << " s=" << s;
    EXPECT_GE(ih[s], 1) << what << " s=" << s;
    EXPECT_LE(ih[s], n) << what << " s=" << s;
    EXPECT_TRUE(all_nan(xh.data() + cs.idx(s, 0), n)) << what << " s=" << s << ": x not NaN";
  }
  check_against_reference(what, cs, xh, ih, Tol<T>::dominant, psolver_name(solver), [&](int s) { return s == s1 || s == s2; });
}

TYPED_TEST(PentaInfo, ZeroAndNonFinitePivots) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename L::template batch<T>;
  for (int n : {1, 2, 5, 11, 64}) {
    const int mid = n / 2;
    // elimination: c(s1, 0) = 0 is the pivot of row 1; a zero row j2 gives info j2 + 1
    broken_systems<T, B>(PSolver::PerSystem, L::name(), n, 2, 0, T(0), 1, mid, mid + 1);
    // a NaN on the diagonal of the last row
    broken_systems<T, B>(PSolver::PerSystem, L::name(), n, 2, n - 1, nan_value<T>(), n, mid, mid + 1);
    // PCR: some row of the broken systems, in [1, n]
    broken_systems<T, B>(PSolver::PCR, L::name(), n, 2, mid, nan_value<T>(), 0, n - 1, 0);
    if (n >= 5) {
      // periodic: c(s, 1) = 0 makes G singular (info 2); a zero row as above;
      // with 19 systems, in packs on CPUs (PentaPerSystem::solve_packed) and after
      // them, and a NaN on the last row's diagonal (info n)
      broken_systems<T, B>(PSolver::Periodic, L::name(), n, 2, 1, T(0), 2, mid, 0);
      broken_systems<T, B>(PSolver::Periodic, L::name(), n, 2, 1, T(0), 2, mid, 0, kband::Variant::Auto, 19, 3, 12);
      broken_systems<T, B>(PSolver::Periodic, L::name(), n, 2, n - 1, nan_value<T>(), n, mid, 0,
                           kband::Variant::Auto, 19, 9, 17);
    }
    // Global with 19 systems: on CPUs the broken systems lie in full packs of
    // 8 (PentaPerSystem::solve_packed), three more systems lane by lane
    const kband::Variant G = kband::Variant::Global;
    broken_systems<T, B>(PSolver::PerSystem, L::name(), n, 2, 0, T(0), 1, mid, mid + 1, G, 19, 2, 12);
    broken_systems<T, B>(PSolver::PerSystem, L::name(), n, 2, n - 1, nan_value<T>(), n, mid, mid + 1, G, 19, 9, 17);
  }
  // Window: a failing row after many rows were written (long systems), and
  // in the first and last blocks
  for (int n : {9, 64, 300}) {
    const kband::Variant W = kband::Variant::Window;
    broken_systems<T, B>(PSolver::PerSystem, L::name(), n, 2, n - 1, nan_value<T>(), n, n / 2, n / 2 + 1, W, 19, 2, 12);
    broken_systems<T, B>(PSolver::PerSystem, L::name(), n, 2, 0, T(0), 1, 2 * n / 3, 2 * n / 3 + 1, W);
  }
  // Registers: the failing row in the first, a middle and the last chunk, at
  // chunk boundaries; info names the elimination's row (hosts serve one
  // chunk only)
  constexpr int M = kband::impl::kPentaRegisterRows;
  const bool device = kband::impl::is_device_exec<Exec>::value;
  const kband::Variant R = kband::Variant::Registers;
  for (int n : {1, 5, M, 11, 64, 100}) {
    if (!(n <= M || device)) continue;
    const int mid = n / 2;
    broken_systems<T, B>(PSolver::PerSystem, L::name(), n, 2, 0, T(0), 1, mid, mid + 1, R);
    broken_systems<T, B>(PSolver::PerSystem, L::name(), n, 2, n - 1, nan_value<T>(), n, n - 1, n, R);
    if (n > 2 * M) {
      broken_systems<T, B>(PSolver::PerSystem, L::name(), n, 2, M, nan_value<T>(), M + 1, 2 * M - 1, 2 * M, R);
      broken_systems<T, B>(PSolver::PerSystem, L::name(), n, 2, M - 1, nan_value<T>(), M, M, M + 1, R);
    }
  }
}

// Periodic systems that are singular while every pivot of A' is not (each
// row sums to zero; every value the elimination and the Woodbury step
// compute is a small dyadic number, so det H is exactly 0 in float and
// double, with or without contracted multiply-adds): info = n and NaN for
// them, the others solved; on CPUs in packs of 8 (PentaPerSystem::solve_packed) and
// in the lanes after them; every variant that serves periodic systems.
TYPED_TEST(PentaInfo, PeriodicSingularCorrection) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename L::template batch<T>;
  constexpr int n = 5, nsys = 19;
  const T sa[n] = {-4, -2, -4, 2, -2}, sb[n] = {4, 4, -1, -4, 2}, sc[n] = {-1, 2, 7, -2, 0};
  const T sd[n] = {-1, -2, -1, 2, -1}, se[n] = {2, -2, -1, 2, 1};
  PentaCase<T> cs = get_penta_case<T>(n, nsys, false, true);
  const int singular[] = {2, 12, 17};
  for (int s : singular)
    for (int j = 0; j < n; ++j) {
      cs.a[cs.idx(s, j)] = sa[j];
      cs.b[cs.idx(s, j)] = sb[j];
      cs.c[cs.idx(s, j)] = sc[j];
      cs.d[cs.idx(s, j)] = sd[j];
      cs.e[cs.idx(s, j)] = se[j];
    }
  const PentaBatches<B> p(cs);
  const B x("x", nsys, n);
  Kokkos::View<int*> info("info", nsys);
  Exec exec;
  for (kband::Variant v : {kband::Variant::Auto, kband::Variant::Global, kband::Variant::Scratch}) {
    const std::string what = std::string("periodic_penta ") + L::name() + " " + type_name(T()) +
                             " singular corrections, variant=" + kband::variant_name(v);
    kband::SolveOptions opt;
    opt.variant = v;
    const auto call = [&] { kband::periodic_penta(exec, p.a, p.b, p.c, p.d, p.e, p.y, x, info, opt); };
    if (!run_solver(what, x, false, cs.y, info, kScratchLimit, call)) continue;
    const std::vector<T> xh = download(x);
    const std::vector<int> ih = download_info(info);
    for (int s : singular) {
      EXPECT_EQ(ih[s], n) << what << " s=" << s;
      EXPECT_TRUE(all_nan(xh.data() + cs.idx(s, 0), n)) << what << " s=" << s << ": x not NaN";
    }
    check_against_reference(what, cs, xh, ih, Tol<T>::dominant, "periodic_penta",
                            [&](int s) { return s == 2 || s == 12 || s == 17; });
  }
}

// A singular shared matrix: the factor reports the row, every system gets the
// same info and NaN.
TYPED_TEST(PentaInfo, SharedFactor) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename L::template batch<T>;
  Exec exec;
  for (bool periodic : {false, true})
    for (int n : {1, 5, 11, 64}) {
      if (periodic && n < 5) continue;
      const int nsys = 7;
      PentaCase<T> cs = get_penta_case<T>(n, nsys, true, periodic);
      // ordinary: a zero last row (info n); periodic: c(1) = 0 (info 2)
      if (periodic) cs.c[1] = T(0);
      else
        for (int k = 0; k < 5; ++k) (*cs.diag(k))[n - 1] = T(0);
      const kband::PentadiagonalFactor<T> factor = make_factor(cs);
      const int expect = periodic ? 2 : n;
      EXPECT_EQ(factor.info(), expect) << "n=" << n << " periodic=" << periodic;
      const B y = make_batch<B>("y", nsys, n, cs.y), x("x", nsys, n);
      Kokkos::View<int*> info("info", nsys);
      for (kband::Variant v : {kband::Variant::Auto, kband::Variant::Global, kband::Variant::Registers,
                               kband::Variant::Recompute}) {
        kband::SolveOptions opt;
        opt.variant = v;
        const std::string what = std::string("shared zero pivot n=") + std::to_string(n) +
                                 " periodic=" + std::to_string(periodic) + " " + kband::variant_name(v);
        // hosts serve Registers for one chunk only
        const char* refusal = v == kband::Variant::Registers ? "Variant::Registers" : nullptr;
        if (!run_solver(what, x, false, cs.y, info, refusal, [&] { kband::penta(exec, factor, y, x, info, opt); })) {
          EXPECT_TRUE(v == kband::Variant::Registers && !kband::impl::is_device_exec<Exec>::value) << what;
          continue;
        }
        const std::vector<T> xh = download(x);
        for (int iv : download_info(info)) EXPECT_EQ(iv, expect) << what;
        EXPECT_TRUE(all_nan(xh.data(), nsys * n)) << what;
      }
    }
}

// ---------------------------------------------------------------------------
// Argument errors: kband::Error naming the problem, nothing written.
// ---------------------------------------------------------------------------
template <class F>
void expect_error(const std::string& what, const char* token, const Kokkos::View<int*>& info, F&& f) {
  poison_info(info);
  try {
    f();
    Exec().fence();
    ADD_FAILURE() << what << ": no kband::Error";
  } catch (const kband::Error& e) {
    EXPECT_NE(std::string(e.what()).find(token), std::string::npos) << what << ": message '" << e.what() << "'";
  }
  for (int v : download_info(info)) EXPECT_EQ(v, kInfoPoison) << what << ": info written";
}

TEST(PentaErrors, BadArguments) {
  using T = double;
  using B = kband::ContiguousBatch<T>;
  Exec exec;
  const int nsys = 3, n = 6;
  const PentaCase<T>& cs = get_penta_case<T>(n, nsys, false, false);
  const PentaBatches<B> p(cs);
  const B x("x", nsys, n), e5("e5", nsys, n - 1), x4("x4", nsys, 4);
  const kband::InterleavedBatch<T> yi("yi", nsys, n);
  Kokkos::View<int*> info("info", nsys), info2("info2", nsys + 1);
  expect_error("e extent", "argument 'e'", info, [&] { kband::penta(exec, p.a, p.b, p.c, p.d, e5, p.y, x, info); });
  expect_error("info extent", "argument 'info'", info2,
               [&] { kband::penta(exec, p.a, p.b, p.c, p.d, p.e, p.y, x, info2); });
  expect_error("layout", "argument 'y' is interleaved", info,
               [&] { kband::penta(exec, p.a, p.b, p.c, p.d, p.e, yi, x, info); });
  expect_error("alias", "must not alias", info, [&] { kband::penta(exec, p.a, p.b, p.c, p.d, p.e, p.y, p.c, info); });
  expect_error("alias a", "x must not alias a, b, c, d or e (it may alias y)", info,
               [&] { kband::penta(exec, p.a, p.b, p.c, p.d, p.e, p.y, p.a, info); });
  expect_error("alias e", "must not alias", info, [&] { kband::penta(exec, p.a, p.b, p.c, p.d, p.e, p.y, p.e, info); });
  expect_error("pcr alias", "must not alias", info,
               [&] { kband::pcr_penta(exec, p.a, p.b, p.c, p.d, p.e, p.y, p.e, info); });
  {
    const B a4("a4", nsys, 4), b4("b4", nsys, 4), c4("c4", nsys, 4), d4("d4", nsys, 4), e4("e4", nsys, 4),
        y4("y4", nsys, 4);
    expect_error("periodic n=4", "the minimum is 5", info,
                 [&] { kband::periodic_penta(exec, a4, b4, c4, d4, e4, y4, x4, info); });
  }
  kband::PentadiagonalOptions po;
  po.algorithm = kband::PentadiagonalAlgorithm::PCR;
  po.boundary = kband::Boundary::Periodic;
  expect_error("pcr periodic", "does not solve periodic", info,
               [&] { kband::solve_pentadiagonal(exec, p.a, p.b, p.c, p.d, p.e, p.y, x, info, po); });
  // factors
  const Kokkos::View<T*> v4("v4", 4), v6("v6", 6), v5("v5", 5);
  EXPECT_THROW(kband::PentadiagonalFactor<T>(exec, v6, v6, v6, v5, v6), kband::Error);
  EXPECT_THROW(kband::PentadiagonalFactor<T>(exec, v4, v4, v4, v4, v4, kband::Boundary::Periodic), kband::Error);
  const kband::PentadiagonalFactor<T> f5 = [&] {
    const PentaCase<T>& c5 = get_penta_case<T>(5, 1, true, false);
    return make_factor(c5);
  }();
  expect_error("factor n", "built for n=5", info, [&] { kband::penta(exec, f5, p.y, x, info); });
  expect_error("empty factor", "default-constructed", info,
               [&] { kband::penta(exec, kband::PentadiagonalFactor<T>(), p.y, x, info); });
  // nothing was written into x by the refused calls
  for (T v : download(x)) EXPECT_EQ(v, T(0));
}

// choose_pentadiagonal: elimination on the host and for periodic systems.
// The Scratch teams Auto gives per-system penta on GPUs for interleaved and
// grouped batches (impl::penta_scratch_plan): wide (128 bytes of a row a
// warp's load) with three rows a thread within 36 KB (24 KB where rows miss
// 128-byte lines), wide with two where rows start on lines, narrow (64
// bytes) with three; a caller's team size with three rows, else two, where
// they fit 36 KB. rows_on_lines: the data and the rows' distance in 128-byte
// steps.
TEST(PentaChoice, ScratchTeams) {
  using kband::impl::penta_scratch_plan;
  const auto plan = [](kband::impl::PentaScratchPlan p) { return std::make_pair(p.team, p.z_scratch); };
  const auto three = [](int t) { return std::make_pair(t, true); };
  const auto two = [](int t) { return std::make_pair(t, false); };
  EXPECT_EQ(plan(penta_scratch_plan<double>(1)), three(16));
  EXPECT_EQ(plan(penta_scratch_plan<double>(64, 0, false)), three(16));
  EXPECT_EQ(plan(penta_scratch_plan<double>(65, 0, false)), three(8));
  EXPECT_EQ(plan(penta_scratch_plan<double>(96)), three(16));
  EXPECT_EQ(plan(penta_scratch_plan<double>(96, 0, false)), three(8));
  EXPECT_EQ(plan(penta_scratch_plan<double>(97)), two(16));
  EXPECT_EQ(plan(penta_scratch_plan<double>(144)), two(16));
  EXPECT_EQ(plan(penta_scratch_plan<double>(144, 0, false)), three(8));
  EXPECT_EQ(plan(penta_scratch_plan<double>(145)), three(8));
  EXPECT_EQ(plan(penta_scratch_plan<double>(192)), three(8));
  EXPECT_EQ(penta_scratch_plan<double>(193).team, 0);
  EXPECT_EQ(penta_scratch_plan<double>(193, 0, false).team, 0);
  EXPECT_EQ(plan(penta_scratch_plan<float>(64)), three(32));
  EXPECT_EQ(plan(penta_scratch_plan<float>(96)), three(32));
  EXPECT_EQ(plan(penta_scratch_plan<float>(128)), two(32));
  EXPECT_EQ(plan(penta_scratch_plan<float>(128, 0, false)), three(16));
  EXPECT_EQ(plan(penta_scratch_plan<float>(192)), three(16));
  EXPECT_EQ(penta_scratch_plan<float>(193).team, 0);
  EXPECT_EQ(plan(penta_scratch_plan<double>(64, 4)), three(4));
  EXPECT_EQ(plan(penta_scratch_plan<double>(64, 32)), two(32));
  EXPECT_EQ(plan(penta_scratch_plan<double>(256, 4)), three(4));
  EXPECT_EQ(penta_scratch_plan<double>(1000, 4).team, 0);
  using kband::impl::rows_on_lines;
  // batches over storage whose first element sits on a 128-byte line (`at`)
  // or 64 bytes past one
  Kokkos::View<double*> buf("buf", 4096);
  const auto at = [&](size_t off) {
    const std::uintptr_t p = reinterpret_cast<std::uintptr_t>(buf.data());
    return reinterpret_cast<double*>((p + 127) / 128 * 128 + off);
  };
  using ID = kband::InterleavedBatch<double>;
  using IF = kband::InterleavedBatch<float>;
  const ID i16(at(0), 16, 5), i17(at(0), 17, 5), i16off(at(64), 16, 5);
  const IF f32(reinterpret_cast<float*>(at(0)), 32, 5), f16(reinterpret_cast<float*>(at(0)), 16, 5);
  EXPECT_TRUE(rows_on_lines(i16, f32));
  EXPECT_FALSE(rows_on_lines(i16, i17));
  EXPECT_FALSE(rows_on_lines(i16off));
  EXPECT_FALSE(rows_on_lines(f16));
  using G16 = kband::GroupedBatch<double, 16>;
  using G8 = kband::GroupedBatch<double, 8>;
  EXPECT_TRUE(rows_on_lines(G16(G16::view_type(at(0), 2, 5), 20)));
  EXPECT_FALSE(rows_on_lines(G16(G16::view_type(at(64), 2, 5), 20)));
  EXPECT_FALSE(rows_on_lines(G8(G8::view_type(at(0), 3, 5), 20)));
}

TEST(PentaErrors, ChooseAlgorithm) {
  Exec exec;
  const bool dev = device_backend();
  for (int nsys : {1, 100000}) {
    const auto alg = kband::choose_pentadiagonal(exec, kband::Layout::Contiguous, nsys, 64);
    if (!dev || nsys == 100000) {
      EXPECT_EQ(alg, kband::PentadiagonalAlgorithm::Elimination) << nsys;
    } else {
      EXPECT_EQ(alg, kband::PentadiagonalAlgorithm::PCR) << nsys;
    }
    EXPECT_EQ(kband::choose_pentadiagonal(exec, kband::Layout::Contiguous, nsys, 64, 8, kband::Boundary::Periodic),
              kband::PentadiagonalAlgorithm::Elimination);
  }
  EXPECT_STREQ(kband::algorithm_name(kband::PentadiagonalAlgorithm::PCR), "pcr");
  EXPECT_STREQ(kband::algorithm_name(kband::PentadiagonalAlgorithm::Elimination), "elimination");
}

}  // namespace
}  // namespace kband_test
