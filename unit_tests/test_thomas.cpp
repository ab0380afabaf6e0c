// Accuracy of every Thomas solver and mode against the long double dense LU
// reference, on every layout, in float and double; in-place solves, caller
// workspaces and strided (subview) batches.
#include "kband_test_common.hpp"

namespace kband_test {
namespace {

template <class T, class L>
void accuracy_sweep(Solver solver) {
  for (Family fam : {Family::Dominant, Family::General})
    for (int n : n_list()) {
      if (n < min_n(solver)) continue;
      for (int nsys : nsys_list(L::sz)) {
        Problem<T, L> p(get_case<T>(solver, fam, n, nsys));
        if (is_shared(solver)) {
          ASSERT_EQ(p.factor.info(), 0) << "factor of a regular matrix failed";
        }
        for (kband::Variant v : thomas_variants()) p.solve_and_check(v);
      }
    }
}

// The general family really is far from diagonally dominant (about 46% of
// its rows are not).
TEST(ThomasFamilies, GeneralFamilyIsNotDiagonallyDominant) {
  long all_rows = 0, all_weak = 0;
  for (Solver solver : {Solver::Thomas, Solver::Periodic, Solver::Shared})
    for (int n : {7, 33, 100, 1000}) {
      const Case<double>& cs = get_case<double>(solver, Family::General, n, 7);
      const int ncoef = cs.shared() ? 1 : cs.nsys;
      long rows = 0, weak = 0;
      for (int s = 0; s < ncoef; ++s)
        for (int j = 0; j < n; ++j) {
          const size_t k = cs.coef(s, j);
          const bool has_a = cs.periodic() || j > 0, has_c = cs.periodic() || j < n - 1;
          const double off = (has_a ? std::fabs(cs.a[k]) : 0.0) + (has_c ? std::fabs(cs.c[k]) : 0.0);
          ++rows;
          weak += std::fabs(cs.b[k]) < off ? 1 : 0;
        }
      EXPECT_GE(static_cast<double>(weak) / rows, 0.2)
          << solver_name(solver) << " n=" << n << ": only " << weak << " of " << rows << " rows not dominant";
      all_rows += rows;
      all_weak += weak;
    }
  EXPECT_GE(static_cast<double>(all_weak) / all_rows, 0.4) << all_weak << " of " << all_rows;
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

// The Registers variant at chunk boundaries (M = 8 rows per thread for
// per-system coefficients, 16 for shared factors): one row past and short of
// whole chunks, a last chunk of one row, batches that leave a team partly
// idle, teams that solve several blocks of systems in turn. A backend must
// serve it when a chunk holds the system, and a GPU for every n here.
TYPED_TEST(ThomasAccuracy, RegistersChunkBoundaries) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  const long before = stats().register_solves, refused = stats().register_refusals;
  long expected_served = 0;
  for (Solver solver : {Solver::Thomas, Solver::Shared, Solver::SharedPeriodic})
    for (int n : {1, 4, 8, 9, 15, 16, 17, 24, 63, 64, 65, 129, 257}) {
      if (n < min_n(solver)) continue;
      const int m = is_shared(solver) ? kband::impl::kRegisterRowsShared : kband::impl::kRegisterRowsPerSystem;
      for (int nsys : {1, 3, L::sz + 1, 70})
        for (Family fam : {Family::Dominant, Family::General}) {
          Problem<T, L> p(get_case<T>(solver, fam, n, nsys));
          // kband's choice, and teams that solve 3 blocks of systems in turn
          for (int blocks : {0, 3}) {
            p.solve_and_check(kband::Variant::Registers, false, blocks);
            if (n <= m || kband::impl::is_device_exec<Exec>::value) ++expected_served;
          }
        }
    }
  // per-system coefficients beyond one segment's reach (interleaved n > 128,
  // grouped n > 512: two segments of 16 rows a thread in double, 32 in
  // float (16 for interleaved n <= 256), in teams of 128
  // threads for interleaved n <= 256; interleaved n > 1024: four segments;
  // served on GPUs only): an empty last chunk (257), whole and partial
  // segments, P = 4 (1025), four segments' middle ones in level-1 scratch
  // (1100, 2047, 2049; fewer systems: their references are slow)
  const std::vector<int> two = kband::impl::is_device_exec<Exec>::value
                                   ? std::vector<int>{129, 200, 256, 257, 288, 289, 511, 512, 513, 600, 1000, 1024,
                                                      1025, 1100, 2047, 2049}
                                   : std::vector<int>{};
  for (int n : two)
    for (int nsys : {1, 3, L::sz + 1, 70})
      for (Family fam : {Family::Dominant, Family::General}) {
        if (n > 1025 && (nsys == 1 || nsys == 70)) continue;
        Problem<T, L> p(get_case<T>(Solver::Thomas, fam, n, nsys));
        for (int blocks : {0, 3}) {
          p.solve_and_check(kband::Variant::Registers, false, blocks);
          ++expected_served;
        }
      }
  EXPECT_GE(stats().register_solves - before, expected_served);
  if (kband::impl::is_device_exec<Exec>::value) EXPECT_EQ(stats().register_refusals, refused);
}

// The Registers kernel of per-system Thomas in two and four segments,
// launched directly with systems of one chunk a segment (n <= M S: M = 16
// rows a thread in double, 32 in float), which every backend serves (host
// teams have one thread): each segment's last c' and y carried into the
// next, the middle segments' c' and y kept in level-1 scratch (four), and
// each segment's first x carried back, with segments that are full, partial
// (17, 31, 33, 47, 49, 65, 97, 127) or empty; in place too.
TYPED_TEST(ThomasAccuracy, RegistersSegmentsJoin) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename Problem<T, L>::B;
  constexpr int M = kband::impl::register_rows_segments<T>();
  const long before = stats().solves;
  long expected = 0;
  for (int segments : {2, 4})
    for (int n : {1, 2, 3, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 97, 127, 128}) {
      if (n > M * segments) continue;
      for (int nsys : {1, 3, L::sz + 1})
        for (Family fam : {Family::Dominant, Family::General})
          for (bool inplace : {false, true}) {
            Problem<T, L> p(get_case<T>(Solver::Thomas, fam, n, nsys));
            const std::string what = p.describe(kband::Variant::Registers, inplace) + " (" +
                                     std::to_string(segments) + " segments)";
            p.check_solve(what, inplace, [&](const B& xo) {
              if (segments == 2)
                p.template call_segments<2>(xo);
              else
                p.template call_segments<4>(xo);
              return true;
            });
            ++expected;
          }
    }
  EXPECT_EQ(stats().solves - before, expected);
}

// The shared-factor Registers kernel with long rows a thread (M = 32, 64)
// and no loads ahead, launched directly: systems of one chunk (n <= M) on
// every backend, longer ones on GPUs; periodic factors too; kband's choice
// of blocks a team and 3 blocks a team (each block's loads after the
// previous block's solve).
TYPED_TEST(ThomasAccuracy, SharedRegistersLongRows) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename Problem<T, L>::B;
  std::vector<int> ns{1, 2, 3, 17, 31, 32, 33, 63, 64};
  if (kband::impl::is_device_exec<Exec>::value) ns.insert(ns.end(), {65, 200, 1000, 2049});
  const long before = stats().solves;
  long expected = 0;
  for (Solver solver : {Solver::Shared, Solver::SharedPeriodic})
    for (int n : ns) {
      if (n < min_n(solver)) continue;
      for (int nsys : {1, L::sz + 1, 70})
        for (int blocks : {0, 3})
          for (int rows : {32, 64}) {
            const bool host = !kband::impl::is_device_exec<Exec>::value;
            if (host && n > rows) continue;
            Problem<T, L> p(get_case<T>(solver, Family::Dominant, n, nsys));
            const std::string what = p.describe(kband::Variant::Registers, false) +
                                     kband::impl::concat(" (", rows, " rows a thread, blocks ", blocks, ")");
            p.check_solve(what, false, [&](const B& xo) {
              if (rows == 32)
                p.template call_shared_registers<32, false>(xo, blocks);
              else
                p.template call_shared_registers<64, false>(xo, blocks);
              return true;
            });
            ++expected;
          }
    }
  EXPECT_EQ(stats().solves - before, expected);
}

// Auto on both sides of its Registers limits for per-system coefficients
// (GPUs: one segment for n <= 128 on interleaved batches and n <= 512 on
// grouped ones, two segments up to n = 1024 and 2048, four up to 2048 on
// interleaved ones; the other variants beyond; hosts: Global everywhere).
// n = 2048 runs on GPUs only, with fewer systems: its long double
// references would take minutes on a CI host.
TYPED_TEST(ThomasAccuracy, AutoAtRegistersLimits) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  const long before = stats().solves;
  long expected = 0;
  std::vector<int> ns{128, 129, 256, 257, 512, 513, 1024, 1025};
  if (kband::impl::is_device_exec<Exec>::value) ns.insert(ns.end(), {2048, 2049});
  for (int n : ns)
    for (int nsys : {1, L::sz + 1, 70})
      for (Family fam : {Family::Dominant, Family::General}) {
        if (n > 1025 && nsys != L::sz + 1) continue;
        Problem<T, L> p(get_case<T>(Solver::Thomas, fam, n, nsys));
        p.solve_and_check(kband::Variant::Auto);
        ++expected;
      }
  EXPECT_EQ(stats().solves - before, expected);
}

// The Recompute variant (shared factors) at block boundaries (16 rows): one
// row past and short of whole blocks, a last block of one row; in place too
// (pass 1 keeps y in x, where d is when x is d). Every backend serves it.
TYPED_TEST(ThomasAccuracy, RecomputeBlockBoundaries) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  constexpr int B = KBAND_RECOMPUTE_ROWS;
  const long before = stats().solves;
  long expected = 0;
  for (Solver solver : {Solver::Shared, Solver::SharedPeriodic})
    for (int n : {1, 2, 3, B - 1, B, B + 1, 2 * B - 1, 2 * B, 2 * B + 1, 5 * B + 3, 700}) {
      if (n < min_n(solver)) continue;
      for (int nsys : {1, L::sz + 1, 70})
        for (Family fam : {Family::Dominant, Family::General}) {
          Problem<T, L> p(get_case<T>(solver, fam, n, nsys));
          for (bool inplace : {false, true}) {
            p.solve_and_check(kband::Variant::Recompute, inplace);
            ++expected;
          }
        }
    }
  EXPECT_EQ(stats().solves - before, expected);
}

// The Recompute variant (shared factors) in parts (SolveOptions::segment_rows
// asks for 2, 4, 8 or 16 parts, as far as parts of 16 rows go): parts of a
// whole block, a block and a row, not whole blocks; in place too (the parts'
// boundary values then go to a workspace, not to rows of x). Every backend
// serves it.
TYPED_TEST(ThomasAccuracy, RecomputeParts) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename L::template batch<T>;
  const long before = stats().solves;
  long expected = 0;
  for (Solver solver : {Solver::Shared, Solver::SharedPeriodic})
    for (int n : {16, 31, 32, 33, 47, 70, 100, 257, 1000})
      for (int parts : {2, 4, 16})
        for (int nsys : {1, L::sz + 1, 70})
          for (Family fam : {Family::Dominant, Family::General}) {
            Problem<T, L> p(get_case<T>(solver, fam, n, nsys));
            kband::SolveOptions opt;
            opt.variant = kband::Variant::Recompute;
            opt.segment_rows = (n + parts - 1) / parts;
            for (bool inplace : {false, true}) {
              p.check_solve(p.describe(opt.variant, inplace) + " segment_rows " + std::to_string(opt.segment_rows),
                            inplace, [&](const B& xo) {
                              kband::thomas(Exec(), p.factor, p.d, xo, p.info, opt);
                              Exec().fence();
                              return true;
                            });
              ++expected;
            }
          }
  EXPECT_EQ(stats().solves - before, expected);
}

// In place, the Recompute variant in parts keeps the parts' boundary values
// in a workspace: a caller's of thomas_workspace_size(factor, x) elements,
// holding NaN, reused by a second solve, gives the right answer (a factor
// without parts, n < 32, needs none).
TYPED_TEST(ThomasAccuracy, RecomputePartsCallerWorkspace) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename L::template batch<T>;
  for (Solver solver : {Solver::Shared, Solver::SharedPeriodic})
    for (int n : {3, 70, 1000}) {
      const int nsys = 3 * L::sz - 1;
      const int parts = n >= 16 * 16 ? 16 : (n >= 4 * 16 ? 4 : 1);  // parts of at least 16 rows
      Problem<T, L> p(get_case<T>(solver, Family::Dominant, n, nsys));
      const size_t len = kband::thomas_workspace_size(p.factor, p.x);
      EXPECT_EQ(len, parts > 1 ? static_cast<size_t>(nsys) * parts * (solver == Solver::SharedPeriodic ? 3 : 2) : 0);
      Kokkos::View<T*> ws("ws", len);
      Kokkos::deep_copy(ws, nan_value<T>());
      kband::SolveOptions opt;
      opt.variant = kband::Variant::Recompute;
      opt.segment_rows = 16;
      for (int rep = 0; rep < 2; ++rep)
        p.check_solve(p.describe(opt.variant, true) + " in parts, caller workspace, rep " + std::to_string(rep), true,
                      [&](const B& xo) {
                        kband::thomas(Exec(), p.factor, p.d, xo, p.info, opt, ws);
                        Exec().fence();
                        return true;
                      });
    }
}

// x is the same batch as d.
TYPED_TEST(ThomasAccuracy, InPlace) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  for (Solver solver : {Solver::Thomas, Solver::Periodic, Solver::Shared, Solver::SharedPeriodic})
    for (int n : n_list()) {
      if (n < min_n(solver)) continue;
      for (int nsys : {1, L::sz + 1}) {
        Problem<T, L> p(get_case<T>(solver, Family::Dominant, n, nsys));
        for (kband::Variant v : thomas_variants()) p.solve_and_check(v, /*inplace=*/true);
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
TYPED_TEST(ThomasAccuracy, StridedSubviews) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using P = Padded<T, L>;
  Exec exec;
  const T sentinel = T(777.125);
  for (Solver solver : {Solver::Thomas, Solver::Periodic, Solver::Shared})
    for (int n : {3, 7, 33, 70}) {
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
      for (const P* p : {&a, &b, &c, &d}) before.push_back(view_bytes(p->parent));
      Kokkos::View<int*> info("info", nsys);
      Kokkos::deep_copy(info, kInfoPoison);
      if (solver == Solver::Thomas)
        kband::thomas(exec, a.sub, b.sub, c.sub, d.sub, x.sub, info);
      else if (solver == Solver::Periodic)
        kband::periodic_thomas(exec, a.sub, b.sub, c.sub, d.sub, x.sub, info);
      else {
        // n = 70: the Recompute variant in four parts (their boundary values
        // go to rows of the strided x) rather than Auto's choice
        kband::SolveOptions opt;
        if (n == 70) {
          opt.variant = kband::Variant::Recompute;
          opt.segment_rows = 16;
        }
        kband::thomas(exec, shared_p.factor, d.sub, x.sub, info, opt);
      }
      exec.fence();
      int k = 0;
      for (const P* p : {&a, &b, &c, &d}) {
        EXPECT_TRUE(view_bytes(p->parent) == before[k]) << what << ": input " << "abcd"[k] << " modified";
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

// Hosts: Auto keeps a thread's rows of per-system thomas and penta in team
// scratch (vector packs) only while they fit the backend's team scratch
// (Serial: 20 MB); past that it takes Global with a workspace instead of
// failing. One pack of 8 systems just past the limit, grouped thomas and
// contiguous penta, against a known solution (x_j = sin(0.001 j + s)).
TEST(HostPacks, AutoPastTeamScratch) {
  if (kband::impl::is_device_exec<Exec>::value) GTEST_SKIP() << "a host rule";
  using T = double;
  Exec exec;
  const size_t max1 = static_cast<size_t>(Kokkos::TeamPolicy<Exec>::scratch_size_max(1));
  const auto xs = [](int s, int j) { return std::sin(0.001 * j + s); };
  // every system solved (info 0) and x within 1e-13 of xs
  const auto check = [&](const auto& x, const Kokkos::View<int*>& info, int nsys, int n, const char* what) {
    double err = 0;
    for (int s = 0; s < nsys; ++s) {
      EXPECT_EQ(info(s), 0) << what;
      for (int j = 0; j < n; ++j) {
        const double q = std::abs(x(s, j) - xs(s, j));
        if (!(q <= err)) err = q;  // a NaN (unwritten x) stays
      }
    }
    EXPECT_LT(err, 1e-13) << what << " n=" << n;
  };
  {
    const int n = static_cast<int>(max1 / (8 * sizeof(T))) + 1, nsys = 8;  // one row of c' a lane
    ASSERT_FALSE((kband::impl::host_rows_fit_scratch<Exec, T>(n, 8, 1)));
    using B = kband::GroupedBatch<T, 8>;
    B a("a", nsys, n), b("b", nsys, n), c("c", nsys, n), d("d", nsys, n), x("x", nsys, n);
    Kokkos::View<int*> info("info", nsys);
    for (int s = 0; s < nsys; ++s)
      for (int j = 0; j < n; ++j) {
        a(s, j) = j > 0 ? -1.0 : 0.0;
        c(s, j) = j < n - 1 ? -1.5 : 0.0;
        b(s, j) = 4.0 + 0.1 * s;
        x(s, j) = nan_value<T>();
        d(s, j) = b(s, j) * xs(s, j) + (j > 0 ? a(s, j) * xs(s, j - 1) : 0.0) +
                  (j < n - 1 ? c(s, j) * xs(s, j + 1) : 0.0);
      }
    kband::thomas(exec, a, b, c, d, x, info);
    exec.fence();
    check(x, info, nsys, n, "thomas grouped");
  }
  {
    const int n = static_cast<int>(max1 / (8 * 2 * sizeof(T))) + 1, nsys = 8;  // p, q a lane
    ASSERT_FALSE((kband::impl::host_rows_fit_scratch<Exec, T>(n, 8, 2)));
    using B = kband::ContiguousBatch<T>;
    B a("a", nsys, n), b("b", nsys, n), c("c", nsys, n), d("d", nsys, n), e("e", nsys, n), y("y", nsys, n),
        x("x", nsys, n);
    Kokkos::View<int*> info("info", nsys);
    for (int s = 0; s < nsys; ++s)
      for (int j = 0; j < n; ++j) {
        a(s, j) = j > 1 ? 0.5 : 0.0;
        b(s, j) = j > 0 ? -1.0 : 0.0;
        c(s, j) = 6.0 + 0.1 * s;
        d(s, j) = j < n - 1 ? -1.5 : 0.0;
        e(s, j) = j < n - 2 ? 0.25 : 0.0;
        x(s, j) = nan_value<T>();
        double r = c(s, j) * xs(s, j);
        if (j > 1) r += a(s, j) * xs(s, j - 2);
        if (j > 0) r += b(s, j) * xs(s, j - 1);
        if (j < n - 1) r += d(s, j) * xs(s, j + 1);
        if (j < n - 2) r += e(s, j) * xs(s, j + 2);
        y(s, j) = r;
      }
    kband::penta(exec, a, b, c, d, e, y, x, info);
    exec.fence();
    check(x, info, nsys, n, "penta contiguous");
  }
}

}  // namespace
}  // namespace kband_test
