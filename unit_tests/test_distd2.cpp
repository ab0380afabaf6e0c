// DistD2 on one rank: seed Figure 10, split counts and unequal subdomains
// against the shared-coefficient Thomas path and the long-double reference,
// the truncation check and the exact reduced solve, the phase API driven
// like the MPI layer drives it (one batch per subdomain), argument errors.
#include "test_distd2_common.hpp"

#include <cstdio>

namespace kband_test {
namespace compact {
namespace {

using kband::DistD2Line;
using kband::DistD2Options;
using kband::DistD2Plan;
using kband::DistD2Position;

/// Relative max-norm difference of two device results, per line.
template <class T, int SZ>
double rel_diff(const GB<T, SZ>& a, const GB<T, SZ>& b) {
  const auto ha = to_host(a), hb = to_host(b);
  std::vector<std::vector<real_ref>> r;
  for (const auto& l : hb) r.emplace_back(l.begin(), l.end());
  return max_rel_error(ha, r);
}

// Seed 002, Figure 10: first derivative of a smooth periodic function,
// n = 32 .. 256, periodic Thomas on the whole line vs DistD2 on 2 subdomains.
// With n/2 = 16 and 32 rows per subdomain the dropped entries are above
// double epsilon (the minimum is 40 rows): the plan refuses, and the exact
// reduced solve is used; 64 and 128 rows run plain DistD2. Observed on
// Serial: DistD2 - Thomas <= 4e-16 relative; both orders 6.00.
TEST(DistD2Figure10, FirstDerivativeTwoSubdomains) {
  const std::vector<int> ns{32, 64, 128, 256};
  std::vector<double> e_thomas, e_distd2;
  const int nsys = kSZ + 3;
  for (int n : ns) {
    const CompactScheme op = make_scheme(CompactOperator::FirstDerivative, true, n);
    const auto in = make_input<double>(nsys, n, true);
    const auto xt = apply_thomas(op, in);
    const bool short_sub = n / 2 < kband::distd2_min_rows<double>(op);
    if (short_sub) EXPECT_THROW(apply_distd2(op, in, {n / 2, n / 2}), kband::Error) << "n=" << n;
    const auto xd = apply_distd2(op, in, {n / 2, n / 2}, short_sub);
    const double d = rel_diff(xd, xt);
    record_error("double distd2 vs thomas (fig10)", d);
    EXPECT_LE(d, 1e-12) << "n=" << n;
    EXPECT_LE(scaled_ref_error(op, to_host(xd), to_host(in)), CTol<double>::ref) << "n=" << n;
    e_thomas.push_back(max_abs_error_exact(op, to_host(xt)));
    e_distd2.push_back(max_abs_error_exact(op, to_host(xd)));
    std::printf("  n=%4d  error thomas %.3e  distd2 %.3e  (%s)\n", n, e_thomas.back(), e_distd2.back(),
                short_sub ? "exact reduced" : "2x2 systems");
  }
  const double ot = observed_order(ns, e_thomas), od = observed_order(ns, e_distd2);
  std::printf("  observed order: thomas %.2f, distd2 %.2f\n", ot, od);
  EXPECT_GE(ot, 5.7);
  EXPECT_GE(od, 5.7);
}

struct SplitCase {
  CompactOperator op;
  bool periodic;
  std::vector<int> lengths;
};

/// DistD2 over `lengths` vs the Thomas path and the long-double reference.
template <class T, int SZ>
void check_split(const SplitCase& c, int nsys, bool exact_reduced = false, double alpha = 0.3) {
  int n = 0;
  for (int l : c.lengths) n += l;
  const CompactScheme op = make_scheme(c.op, c.periodic, n, alpha);
  const auto in = make_input<T, SZ>(nsys, n, c.periodic, 0.2, mix_seed({std::uint64_t(n), std::uint64_t(nsys)}));
  const auto xt = apply_thomas(op, in);
  const auto xd = apply_distd2(op, in, c.lengths, exact_reduced);
  int pad = 0;
  const auto hx = to_host(xd, &pad);
  EXPECT_EQ(pad, 0);
  std::string what = std::string(kband::compact_operator_name(c.op)) + (c.periodic ? " periodic" : " closed") +
                     " K=" + std::to_string(c.lengths.size()) + " n=" + std::to_string(n) +
                     " nsys=" + std::to_string(nsys) + (exact_reduced ? " exact" : "");
  const double eref = scaled_ref_error(op, hx, to_host(in));
  const double ethomas = scaled_ref_error(op, to_host(xt), to_host(in));
  record_error(std::string(type_name(T())) + " distd2 vs reference", eref);
  EXPECT_LE(eref, CTol<T>::ref) << what;
  // DistD2 and Thomas differ only by rounding: at most the larger of their
  // reference errors twice over
  const double d = rel_diff(xd, xt);
  std::vector<double> amp;
  reference(op, to_host(in), &amp);
  const double amax = *std::max_element(amp.begin(), amp.end());
  EXPECT_LE(d, 2 * amax * std::max(CTol<T>::ref, 2 * std::max(eref, ethomas))) << what;
}

std::vector<SplitCase> split_cases() {
  std::vector<SplitCase> v;
  const CompactOperator ops[] = {CompactOperator::FirstDerivative, CompactOperator::SecondDerivative,
                                 CompactOperator::Interpolation, CompactOperator::StaggeredDerivative};
  for (CompactOperator op : ops)
    for (bool per : {true, false}) {
      if (!per && (op == CompactOperator::Interpolation || op == CompactOperator::StaggeredDerivative)) continue;
      v.push_back({op, per, {45}});
      v.push_back({op, per, {44, 44}});
      v.push_back({op, per, {41, 50, 43}});
      v.push_back({op, per, {45, 41, 42, 47, 43, 41, 46}});
      v.push_back({op, per, {97, 41, 63, 50}});  // unequal
    }
  return v;
}

TEST(DistD2Split, DoubleEveryOperator) {
  for (const auto& c : split_cases()) check_split<double, kSZ>(c, 2 * kSZ + 3);
}
TEST(DistD2Split, OtherSZAndSmallBatches) {
  for (const auto& c : split_cases()) {
    check_split<double, kOtherSZ>(c, 1);
    check_split<double, kOtherSZ>(c, kOtherSZ + 1);
  }
}
TEST(DistD2Split, Float) {
  for (const auto& c : split_cases()) check_split<float, kSZ>(c, kSZ + 5);
}

TEST(DistD2Split, SingleSubdomainAwkwardLengths) {
  // K = 1 solves its own 2x2 system exactly: any n >= 3 (closed lines 5)
  for (int n : {3, 4, 5, 7, 9})
    for (bool per : {true, false}) {
      if (!per && n < 5) continue;
      check_split<double, kSZ>({CompactOperator::FirstDerivative, per, {n}}, kSZ - 1);
      check_split<float, kSZ>({CompactOperator::SecondDerivative, per, {n}}, 3);
    }
}

// Minimum subdomain lengths against the Toeplitz estimate of the notes,
// n >= 1 + ln(eps) / ln(rho), rho = (1 - sqrt(1 - 4 alpha^2)) / (2 alpha):
// double 40, 24, 21, 35, 179 as in the notes' table. (The notes' single
// precision column, 30, 18, 16, 27, 133, does not follow from that formula
// with float's epsilon 1.19e-7, which gives 18, 11, 10, 17, 80.) The plan
// measures the dropped entries themselves, which carry prefactors below 1:
// observed double 40, 23, 20, 34, 175; float 17, 11, 10, 16, 75.
TEST(DistD2Truncation, MinimumLengthsMatchTheToeplitzEstimate) {
  const CompactScheme ops[] = {CompactScheme::first_derivative(0.01), CompactScheme::second_derivative(0.01),
                               CompactScheme::staggered_derivative(0.01), CompactScheme::interpolation(0.3),
                               CompactScheme::interpolation(0.49)};
  const int notes_double[] = {40, 24, 21, 35, 179};
  int k = 0;
  for (const auto& op : ops) {
    const double a = op.alpha(), rho = (1 - std::sqrt(1 - 4 * a * a)) / (2 * a);
    const double est_d = 1 + std::log(std::numeric_limits<double>::epsilon()) / std::log(rho);
    const double est_f = 1 + std::log(static_cast<double>(std::numeric_limits<float>::epsilon())) / std::log(rho);
    const int d = kband::distd2_min_rows<double>(op), f = kband::distd2_min_rows<float>(op);
    std::printf("  %-28s alpha=%.4f  min rows double %d (estimate %.1f, notes %d), float %d (estimate %.1f)\n",
                kband::compact_operator_name(op.op()), a, d, est_d, notes_double[k], f, est_f);
    EXPECT_NEAR(d, notes_double[k], std::max(3.0, 0.05 * notes_double[k]));
    EXPECT_NEAR(d, est_d, std::max(3.0, 0.05 * est_d));
    EXPECT_NEAR(f, est_f, std::max(3.0, 0.1 * est_f));
    ++k;
  }
}

TEST(DistD2Truncation, FiresForInterpolation049AndNotForFirstDerivative64) {
  Exec exec;
  const CompactScheme interp = CompactScheme::interpolation(0.49);
  const int need = kband::distd2_min_rows<double>(interp);
  for (int n_local : {8, 40, 120, need - 1}) {
    try {
      DistD2Plan<double> p(exec, interp, n_local, DistD2Position::Interior);
      ADD_FAILURE() << "no truncation error for n_local=" << n_local;
    } catch (const kband::Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("minimum subdomain length is " + std::to_string(need)), std::string::npos) << m;
    }
  }
  EXPECT_NO_THROW(DistD2Plan<double>(exec, interp, need, DistD2Position::Interior));
  EXPECT_NO_THROW(DistD2Line<double>(exec, interp, {need, need + 5}));
  // first derivative, 64 rows per subdomain: far below epsilon, both precisions
  for (bool per : {true, false}) {
    const CompactScheme fd = make_scheme(CompactOperator::FirstDerivative, per, 4 * 64);
    EXPECT_NO_THROW(DistD2Line<double>(exec, fd, {64, 64, 64, 64})) << per;
    EXPECT_NO_THROW(DistD2Line<float>(exec, fd, {64, 64, 64, 64})) << per;
    const DistD2Plan<double> p(exec, fd, 64, DistD2Position::Interior);
    EXPECT_LT(p.dropped(), 1e-20);
  }
  // the single-rank call refuses too (through its plans), float as well
  const auto in = make_input<float>(5, 60, true);
  EXPECT_THROW(apply_distd2(interp, in, {30, 30}), kband::Error);
}

TEST(DistD2Truncation, ExactReducedSolveMatchesThomas) {
  // alpha = 0.49 interpolation on short subdomains (down to 3 rows), and
  // the first derivative on subdomains far below its minimum
  const std::vector<std::vector<int>> splits{{20, 17}, {30, 3, 25, 11}, {3, 3, 3, 3, 3, 3, 3}, {60, 60, 60}};
  for (const auto& s : splits) {
    check_split<double, kSZ>({CompactOperator::Interpolation, true, s}, kSZ + 2, true, 0.49);
    check_split<float, kSZ>({CompactOperator::Interpolation, true, s}, 3, true, 0.49);
    check_split<double, kOtherSZ>({CompactOperator::FirstDerivative, true, s}, kOtherSZ + 1, true);
    if (s[0] >= 5 && s.back() >= 5)
      check_split<double, kSZ>({CompactOperator::SecondDerivative, false, s}, kSZ, true);
  }
}

// The subdomains' outputs joined into one batch equal the single-rank
// distd2 of the whole line to ulps * epsilon (relative).
template <class T, int SZ>
void expect_joined_equal(Exec& exec, const CompactScheme& op, const GB<T, SZ>& whole, const std::vector<GB<T, SZ>>& out,
                         const std::vector<int>& len, double ulps, const char* what) {
  GB<T, SZ> joined = make_output<T, SZ>(whole.nsys(), whole.n());
  int off = 0;
  for (size_t k = 0; k < len.size(); ++k) {
    kband::distd2_copy_rows(exec, out[k], 0, joined, off, len[k]);
    off += len[k];
  }
  exec.fence();
  const auto single = apply_distd2(op, whole, len);
  EXPECT_LE(rel_diff(joined, single), ulps * std::numeric_limits<T>::epsilon())
      << "K=" << len.size() << " periodic=" << op.periodic() << " op=" << kband::compact_operator_name(op.op())
      << what;
}

// The phase API as the MPI layer uses it: every subdomain in its own batch
// (row0 = 0), halos and boundary buffers exchanged by copies between batches.
// split: the decoupling with zero halos, then their share added (the
// overlap of the halo exchange with the decoupling in kband::mpi).
template <class T, int SZ>
void run_phases(const CompactScheme& op, const std::vector<int>& len, int nsys, bool split = false) {
  Exec exec;
  const int K = static_cast<int>(len.size());
  int n = 0;
  for (int l : len) n += l;
  const auto whole = make_input<T, SZ>(nsys, n, op.periodic(), 0.1);
  std::vector<GB<T, SZ>> in, out, lo, hi, bnd, hc;
  std::vector<DistD2Plan<T>> plan;
  int off = 0;
  for (int k = 0; k < K; ++k) {
    const DistD2Position pos =
        K == 1 ? DistD2Position::Only
               : (k == 0 ? DistD2Position::First : (k == K - 1 ? DistD2Position::Last : DistD2Position::Interior));
    plan.emplace_back(exec, op, len[k], pos);
    in.emplace_back("in_k", nsys, len[k]);
    kband::distd2_copy_rows(exec, whole, off, in.back(), 0, len[k]);
    out.push_back(make_output<T, SZ>(nsys, len[k]));
    lo.push_back(make_output<T, SZ>(nsys, 2));
    hi.push_back(make_output<T, SZ>(nsys, 2));
    bnd.push_back(make_output<T, SZ>(nsys, 2));
    hc.push_back(make_output<T, SZ>(nsys, 1));
    off += len[k];
  }
  if (split)
    for (int k = 0; k < K; ++k) kband::distd2_decouple_interior(exec, plan[k], in[k], out[k], bnd[k]);
  for (int k = 0; k < K; ++k) {  // halo exchange
    const int kp = (k + K - 1) % K, kn = (k + 1) % K;
    if (plan[k].has_prev() || (K == 1 && op.periodic())) kband::distd2_copy_rows(exec, in[kp], len[kp] - 2, lo[k], 0, 2);
    if (plan[k].has_next() || (K == 1 && op.periodic())) kband::distd2_copy_rows(exec, in[kn], 0, hi[k], 0, 2);
  }
  for (int k = 0; k < K; ++k) {
    if (split) kband::distd2_add_halos(exec, plan[k], lo[k], hi[k], out[k], bnd[k], hc[k]);
    else kband::distd2_decouple(exec, plan[k], in[k], lo[k], hi[k], out[k], bnd[k]);
  }
  for (int k = 0; k < K; ++k) {
    const int kp = (k + K - 1) % K, kn = (k + 1) % K;
    kband::distd2_couple(exec, plan[k], bnd[k], bnd[kp], plan[kp].coupling(), bnd[kn], plan[kn].coupling(), out[k], 0,
                         split ? &hc[k] : nullptr);
  }
  // the same arithmetic (one subdomain: in one kernel there), up to the
  // compiler's contraction choices per kernel on GPUs; Serial: identical.
  // split: the halos' share is summed separately (a few roundings more)
  expect_joined_equal(exec, op, whole, out, len, split ? 256 : 64, split ? " split" : "");
}

TEST(DistD2Phases, SeparateBatchesEqualTheSingleRankCall) {
  for (bool per : {true, false}) {
    for (const std::vector<int>& len : std::vector<std::vector<int>>{{50}, {44, 47}, {45, 60, 41, 52}}) {
      int n = 0;
      for (int l : len) n += l;
      run_phases<double, kSZ>(make_scheme(CompactOperator::FirstDerivative, per, n), len, kSZ + 1);
      run_phases<float, kOtherSZ>(make_scheme(CompactOperator::SecondDerivative, per, n), len, 2);
    }
  }
}

TEST(DistD2Phases, HalosAddedAfterTheDecouplingEveryOperator) {
  for (bool per : {true, false})
    for (CompactOperator o : {CompactOperator::FirstDerivative, CompactOperator::SecondDerivative,
                              CompactOperator::Interpolation, CompactOperator::StaggeredDerivative})
      for (const std::vector<int>& len : std::vector<std::vector<int>>{{50}, {44, 47}, {45, 60, 41, 52}}) {
        int n = 0;
        for (int l : len) n += l;
        run_phases<double, kSZ>(make_scheme(o, per, n), len, kSZ + 3, true);
        run_phases<float, kOtherSZ>(make_scheme(o, per, n), len, 5, true);
      }
}

// The one-message mode of the MPI layer, on one process: each subdomain's
// decoupling writes its messages (end rows and interior boundary row), the
// coupling reads the neighbours' messages and its own end rows.
template <class T, int SZ>
void run_one_message(const CompactScheme& op, const std::vector<int>& len, int nsys) {
  Exec exec;
  const int K = static_cast<int>(len.size());
  int n = 0;
  for (int l : len) n += l;
  const auto whole = make_input<T, SZ>(nsys, n, op.periodic(), 0.1);
  std::vector<GB<T, SZ>> in, out, bnd, to_prev, to_next;
  std::vector<DistD2Plan<T>> plan;
  int off = 0;
  for (int k = 0; k < K; ++k) {
    const DistD2Position pos = k == 0 ? DistD2Position::First : (k == K - 1 ? DistD2Position::Last : DistD2Position::Interior);
    plan.emplace_back(exec, op, len[k], pos);
    ASSERT_LE(plan.back().far(), std::numeric_limits<T>::epsilon()) << "n_local=" << len[k];
    in.emplace_back("in_k", nsys, len[k]);
    kband::distd2_copy_rows(exec, whole, off, in.back(), 0, len[k]);
    out.push_back(make_output<T, SZ>(nsys, len[k]));
    bnd.push_back(make_output<T, SZ>(nsys, 2));
    to_prev.push_back(make_output<T, SZ>(nsys, 3));
    to_next.push_back(make_output<T, SZ>(nsys, 3));
    off += len[k];
  }
  for (int k = 0; k < K; ++k)
    kband::distd2_decouple_interior(exec, plan[k], in[k], out[k], bnd[k], 0, &to_prev[k], &to_next[k]);
  for (int k = 0; k < K; ++k) {
    const int kp = (k + K - 1) % K, kn = (k + 1) % K;
    kband::distd2_couple_one_message(exec, plan[k], in[k], bnd[k], to_next[kp], plan[kp].coupling(),
                                     plan[kp].last_edges(), to_prev[kn], plan[kn].coupling(), plan[kn].first_edges(),
                                     out[k]);
  }
  expect_joined_equal(exec, op, whole, out, len, 256, " one message");
}

TEST(DistD2Phases, OneMessagePerNeighbourEveryOperator) {
  for (bool per : {true, false})
    for (CompactOperator o : {CompactOperator::FirstDerivative, CompactOperator::SecondDerivative,
                              CompactOperator::Interpolation, CompactOperator::StaggeredDerivative})
      for (const std::vector<int>& len : std::vector<std::vector<int>>{{70, 75}, {66, 90, 71}}) {
        int n = 0;
        for (int l : len) n += l;
        run_one_message<double, kSZ>(make_scheme(o, per, n), len, kSZ + 3);
        run_one_message<float, kOtherSZ>(make_scheme(o, per, n), len, 5);
      }
}

// Long subdomains run most rows as lean blocks (DistD2Data::lean: scalar
// coefficients where the elimination has converged and the end couplings are
// below epsilon / 64); GPUs take whole blocks of 16 rows, so the subdomains
// here hold several, with block boundaries falling anywhere in the window.
TEST(DistD2Lean, WindowOfTheFirstDerivative) {
  Exec exec;
  const CompactScheme op = make_scheme(CompactOperator::FirstDerivative, true, 512);
  const DistD2Plan<double> p256(exec, op, 256, DistD2Position::Interior);
  const auto& d = p256.data();
  // rho = 0.382 for alpha = 1/3: the couplings fall below 2^-58 after about 42 rows
  EXPECT_GE(d.lean_lo, 30);
  EXPECT_LE(d.lean_lo, 60);
  EXPECT_GE(d.lean_hi, 200);
  EXPECT_LE(d.lean_hi, 253);
  const DistD2Plan<double> p48(exec, op, 48, DistD2Position::Interior);
  EXPECT_GT(p48.data().lean_lo, p48.data().lean_hi) << "48 rows leave no row that is lean";
}

TEST(DistD2Lean, LongSubdomainsEveryOperator) {
  const CompactOperator ops[] = {CompactOperator::FirstDerivative, CompactOperator::SecondDerivative,
                                 CompactOperator::Interpolation, CompactOperator::StaggeredDerivative};
  for (CompactOperator o : ops)
    for (bool per : {true, false}) {
      if (!per && (o == CompactOperator::Interpolation || o == CompactOperator::StaggeredDerivative)) continue;
      check_split<double, kSZ>({o, per, {517}}, kSZ + 7);
      check_split<double, kSZ>({o, per, {256, 301, 179}}, 2 * kSZ + 1);
      check_split<float, kOtherSZ>({o, per, {133, 250}}, 3);
    }
  for (bool per : {true, false})
    for (CompactOperator o : {CompactOperator::FirstDerivative, CompactOperator::SecondDerivative}) {
      const std::vector<int> len{211, 256};
      run_phases<double, kSZ>(make_scheme(o, per, 467), len, kSZ + 3, true);
      run_one_message<double, kSZ>(make_scheme(o, per, 467), len, kSZ + 3);
      run_one_message<float, kOtherSZ>(make_scheme(o, per, 467), len, 5);
    }
}

TEST(DistD2Phases, OneMessageRefusesShortSubdomains) {
  Exec exec;
  const auto op = make_scheme(CompactOperator::FirstDerivative, true, 24);
  kband::DistD2Options opt;
  opt.exact_reduced = true;  // a plan below the truncation bound
  DistD2Plan<double> plan(exec, op, 12, DistD2Position::Interior, opt);
  ASSERT_GT(plan.far(), std::numeric_limits<double>::epsilon());
  GB<double, kSZ> in("in", 3, 12), out("out", 3, 12), bnd("bnd", 3, 2), msg("msg", 3, 3);
  EXPECT_THROW(kband::distd2_couple_one_message(exec, plan, in, bnd, msg, plan.coupling(), plan.last_edges(), msg,
                                                plan.coupling(), plan.first_edges(), out),
               kband::Error);
  // a long subdomain next to the short one: its neighbour's far() counts too
  DistD2Plan<double> longer(exec, op, 80, DistD2Position::Interior, opt);
  ASSERT_LE(longer.far(), std::numeric_limits<double>::epsilon());
  GB<double, kSZ> in2("in2", 3, 80), out2("out2", 3, 80);
  EXPECT_THROW(kband::distd2_couple_one_message(exec, longer, in2, bnd, msg, plan.coupling(), plan.last_edges(), msg,
                                                longer.coupling(), longer.first_edges(), out2),
               kband::Error);
}

TEST(DistD2Errors, BadArguments) {
  Exec exec;
  const CompactScheme op = CompactScheme::first_derivative(0.01);
  const CompactScheme closed = CompactScheme::first_derivative(0.01, kband::Boundary::NonPeriodic);
  EXPECT_THROW(DistD2Plan<double>(exec, op, 2, DistD2Position::Only), kband::Error);
  EXPECT_THROW(DistD2Plan<double>(exec, closed, 4, DistD2Position::Only), kband::Error);
  EXPECT_THROW(DistD2Line<double>(exec, op, {}), kband::Error);
  const DistD2Plan<double> plan(exec, op, 50, DistD2Position::Interior);
  GB<double> in("in", 9, 50), out("out", 9, 50), two("two", 9, 2), three("three", 9, 3), other("other", 8, 50);
  try {
    kband::distd2_decouple(exec, plan, in, two, three, out, two);
    ADD_FAILURE() << "no error";
  } catch (const kband::Error& e) {
    EXPECT_NE(std::string(e.what()).find("halo_hi"), std::string::npos) << e.what();
  }
  EXPECT_THROW(kband::distd2_decouple(exec, plan, in, two, two, in, two), kband::Error);     // alias
  EXPECT_THROW(kband::distd2_decouple(exec, plan, in, two, two, other, two), kband::Error);  // nsys
  EXPECT_THROW(kband::distd2_decouple(exec, plan, in, two, two, out, two, 1), kband::Error);  // rows
  EXPECT_THROW(kband::distd2_couple(exec, plan, two, three, plan.coupling(), two, plan.coupling(), out),
               kband::Error);
  EXPECT_THROW(kband::distd2_decouple(exec, DistD2Plan<double>(), in, two, two, out, two), kband::Error);
  // exact-reduced plan with large dropped entries: couple refuses
  kband::DistD2Options opt;
  opt.exact_reduced = true;
  const DistD2Plan<double> shortp(exec, op, 10, DistD2Position::Interior, opt);
  GB<double> out10("out10", 9, 10);
  EXPECT_THROW(kband::distd2_couple(exec, shortp, two, two, shortp.coupling(), two, shortp.coupling(), out10),
               kband::Error);
  const DistD2Line<double> line(exec, op, {50, 50});
  EXPECT_THROW(kband::distd2(exec, line, in, out), kband::Error);  // line has 100 rows
}

}  // namespace
}  // namespace compact
}  // namespace kband_test
