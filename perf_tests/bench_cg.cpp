// kband-bench cg: Conjugate Gradient over CDS and dense matrices, seed 003's
// problems (1D Laplacian and 2D Poisson in CDS, dense SPD C^T C + 1e-3 I;
// b = ones, x0 = 0, tolerance 1e-8), beside the seed's A100 times (Tables 4-6).
//
// Every row is measured in this run: time to solution (median of the reps),
// iterations, time per iteration against the bandwidth floor (the bytes one
// iteration must move over the STREAM copy bandwidth measured here), and the
// Kokkos Kernels reference CG (KokkosSparse::spmv on the same matrix in CRS,
// KokkosBlas dot/axpby/update; compiled in with KBAND_BENCH_HAVE_KOKKOSKERNELS),
// timed per iteration over min(iterations, --ref-iters) steps. After timing,
// every solution is verified: status converged (or capped on purpose), x
// finite and the true residual ||b - A x|| / ||b|| at most 1e-4 (double),
// 1e-2 (float) or 8 eps ||A||_inf ||x|| / ||b|| (the rounding of A x; float
// on large grids), whichever is larger; the reference's
// residual after its steps must agree with kband's history. Exit 1 on a
// failed verification.
//
// Minimum data per iteration (elements of T per unknown, the "floor"):
//   CDS, plain CG: m (matrix) + 9 (x r/w, r read twice + written, p r/w, q w/r);
//   one reduction (CGReductions::One) m + 8, and m + 6 where it runs the
//   narrow-band kernel (x, r, p read and written; CGSolver::narrow_band())
//   CDS, line preconditioner: m + 10 (K1 reads z instead of r; the line kernel
//   reads r and q, writes r and z)
//   CDS, zebra preconditioner: ndiag + 6.5 per unknown of the grid (all
//   diagonals are read; an iteration works on the n/2 black rows: their
//   direction, product, residual and line solve, 13 vector elements and
//   ndiag diagonals a black row; the red rows' couplings, right-hand side
//   and line solve, 4 vector elements and ndiag - 3 diagonals a red row)
//   m = the diagonals the solver reads: the main and upper ones of a
//   symmetric matrix (CGSolver::upper_only(); 2D Poisson 3, 1D Laplacian 2),
//   else ndiag; 0 where those diagonals are constant and the solver
//   multiplies by their values (CGSolver::constant_diagonals(): the 1D
//   Laplacian, unless --read-matrix)
//   dense: (n + 1) / 2 (the matrix row's share of the upper triangle: A is
//   symmetric, and kband reads that half) + 9.
#include "bench_stream.hpp"
#include "bench_suites.hpp"

#if defined(KBAND_BENCH_HAVE_KOKKOSKERNELS)
#include <kband_CDS_KokkosKernels.hpp>

#include <KokkosBlas1_axpby.hpp>
#include <KokkosBlas1_dot.hpp>
#include <KokkosBlas1_update.hpp>
#include <KokkosSparse_spmv.hpp>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace kband_bench {
namespace {

struct Options {
  std::string precision = "double";
  int min_log2 = 4;
  int max_cds_log2 = 0;      // 0: 20 on devices, 18 on hosts
  int max_dense_log2 = 0;    // 0: 12 on devices, 10 on hosts
  int laplace_full_log2 = 0; // 1D Laplacian solved to convergence up to 2^this (0: 20 devices, 14 hosts)
  int cap = 2000;            // iterations of the capped (per-iteration) 1D Laplacian rows
  int ref_iters = 0;         // reference CG steps (0: 2000 devices, 200 hosts)
  int reps = 3;
  int check_every = 32;
  double tol = 0;            // 0: 1e-8 (double), 1e-5 (float)
  std::vector<int> ns;       // explicit unknown counts (overrides the log2 ranges)
  std::string matrices = "laplace1d,poisson2d,dense";
  bool quick = false;
  std::string json = "kband-bench-cg.json";
  std::vector<kband::CGSweeps> sweeps{kband::CGSweeps::Auto};  // CGOptions::sweeps of each dense kband row, in order
  std::vector<int> items_div{0};  // CDS rows: CGOptions::work_items = ceil(n / K) for each K (0: kband's choice)
  std::vector<kband::CGReductions> reductions{kband::CGReductions::Auto};  // CDS rows: CGOptions::reductions, each
  std::string precs = "none,line,zebra";  // the 2D Poisson rows' preconditioners
  bool read_matrix = false;  // CGOptions::constant_diagonals = false in every kband row
};

void usage() {
  std::printf(
      "usage: kband-bench cg [options]\n"
      "  CG on seed 003's matrices (b = ones, x0 = 0): kband (plain; line and zebra preconditioners for 2D Poisson)\n"
      "  vs the Kokkos Kernels reference CG, per-iteration time vs the bandwidth floor, seed A100 times.\n"
      "  --n LIST              unknowns (default: even powers of two, 2^4 .. the maxima below)\n"
      "  --max-cds-log2 K      largest CDS size 2^K (default 20 GPU, 18 host; 24 for the >= 2^22 targets)\n"
      "  --max-dense-log2 K    largest dense size 2^K (default 12 GPU, 10 host)\n"
      "  --laplace-full-log2 K 1D Laplacian solved to convergence up to 2^K (default 20 GPU, 14 host);\n"
      "                        larger ones run --cap iterations (per-iteration figures only)\n"
      "  --cap N               iterations of capped rows (default 2000)\n"
      "  --ref-iters N         Kokkos Kernels reference CG steps timed (default 2000 GPU, 200 host)\n"
      "  --matrices LIST       subset of laplace1d,poisson2d,dense\n"
      "  --precision P         double (default) or float\n"
      "  --tol T               relative residual (default 1e-8 double, 1e-5 float)\n"
      "  --reps R              timed solves per row (default 3; 1 when a solve takes > 1 s)\n"
      "  --check-every K       host residual check interval (default 32)\n"
      "  --sweeps LIST         dense kband rows for each of auto (default), alternate, forward\n"
      "                        (CGOptions::sweeps); the first one feeds the targets\n"
      "  --work-items LIST     CDS kband rows for each of auto (default) or n/K (CGOptions::work_items\n"
      "                        = ceil(n / K), GPUs); the first one feeds the targets\n"
      "  --reductions LIST     CDS kband rows for each of auto (default), one, two (CGOptions::reductions;\n"
      "                        with --work-items: every pair); the first one feeds the targets\n"
      "  --precs LIST          2D Poisson rows: subset of none,line,zebra (default all three)\n"
      "  --read-matrix         kband rows read a matrix of constant diagonals (1D Laplacian) instead of\n"
      "                        multiplying by their values (CGOptions::constant_diagonals = false)\n"
      "  --quick               smoke run: 2^4 .. 2^10, dense to 2^8, 1 rep\n"
      "  --json FILE           results file (default kband-bench-cg.json; 'none' = off)\n"
      "  --help                this text\n");
}

/// A comma-separated list of names into their enum values; false (with a
/// message) on an unknown name or an empty list.
template <class E>
bool parse_names(const std::string& list, const char* opt, const std::vector<std::pair<std::string, E>>& names,
                 std::vector<E>& out) {
  out.clear();
  std::stringstream ss(list);
  std::string t;
  while (std::getline(ss, t, ',')) {
    auto it = std::find_if(names.begin(), names.end(), [&](const auto& nv) { return nv.first == t; });
    if (it == names.end()) {
      std::string all;
      for (const auto& nv : names) all += (all.empty() ? "" : ", ") + nv.first;
      std::fprintf(stderr, "kband-bench cg: %s takes %s\n", opt, all.c_str());
      return false;
    }
    out.push_back(it->second);
  }
  return !out.empty();
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&](const char* what) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "kband-bench cg: %s needs a value\n", what);
        std::exit(2);
      }
      return argv[++i];
    };
    auto inext = [&](const char* what) { return std::atoi(next(what).c_str()); };
    if (a == "--help" || a == "-h") {
      usage();
      std::exit(0);
    } else if (a == "--n") {
      std::stringstream ss(next("--n"));
      std::string t;
      while (std::getline(ss, t, ',')) o.ns.push_back(std::atoi(t.c_str()));
    } else if (a == "--max-cds-log2") o.max_cds_log2 = inext("--max-cds-log2");
    else if (a == "--max-dense-log2") o.max_dense_log2 = inext("--max-dense-log2");
    else if (a == "--laplace-full-log2") o.laplace_full_log2 = inext("--laplace-full-log2");
    else if (a == "--cap") o.cap = inext("--cap");
    else if (a == "--ref-iters") o.ref_iters = inext("--ref-iters");
    else if (a == "--matrices") o.matrices = next("--matrices");
    else if (a == "--precision") o.precision = next("--precision");
    else if (a == "--tol") o.tol = std::atof(next("--tol").c_str());
    else if (a == "--reps") o.reps = inext("--reps");
    else if (a == "--check-every") o.check_every = inext("--check-every");
    else if (a == "--sweeps") {
      using S = kband::CGSweeps;
      if (!parse_names<S>(next("--sweeps"), "--sweeps",
                          {{"auto", S::Auto}, {"alternate", S::Alternate}, {"forward", S::Forward}}, o.sweeps))
        return false;
    } else if (a == "--work-items") {
      o.items_div.clear();
      std::stringstream ss(next("--work-items"));
      std::string t;
      while (std::getline(ss, t, ',')) {
        const int k = t == "auto" ? 0 : (t.rfind("n/", 0) == 0 ? std::atoi(t.c_str() + 2) : -1);
        if (k < 0 || (k == 0 && t != "auto")) {
          std::fprintf(stderr, "kband-bench cg: --work-items takes auto and n/K entries\n");
          return false;
        }
        o.items_div.push_back(k);
      }
      if (o.items_div.empty()) return false;
    }
    else if (a == "--reductions") {
      using R = kband::CGReductions;
      if (!parse_names<R>(next("--reductions"), "--reductions", {{"auto", R::Auto}, {"one", R::One}, {"two", R::Two}},
                          o.reductions))
        return false;
    }
    else if (a == "--precs") o.precs = next("--precs");
    else if (a == "--quick") o.quick = true;
    else if (a == "--read-matrix") o.read_matrix = true;
    else if (a == "--json") o.json = next("--json");
    else {
      std::fprintf(stderr, "kband-bench cg: unknown option %s\n", a.c_str());
      usage();
      return false;
    }
  }
  if (o.precision != "double" && o.precision != "float") {
    std::fprintf(stderr, "kband-bench cg: --precision double|float\n");
    return false;
  }
  if (o.max_cds_log2 == 0) o.max_cds_log2 = o.quick ? 10 : (kDevice ? 20 : 18);
  if (o.max_dense_log2 == 0) o.max_dense_log2 = o.quick ? 8 : (kDevice ? 12 : 10);
  if (o.laplace_full_log2 == 0) o.laplace_full_log2 = o.quick ? 10 : (kDevice ? 20 : 14);
  if (o.ref_iters == 0) o.ref_iters = o.quick ? 50 : (kDevice ? 2000 : 200);
  if (o.quick) o.reps = 1;
  return o.reps >= 1 && o.cap >= 1 && o.check_every >= 1;
}

/// Seed 003, CUDA Fortran on an A100: (seconds, iterations) per log2 size.
struct SeedPoint {
  double t;
  int iters;
};
const std::map<std::string, std::map<int, SeedPoint>>& seed_a100() {
  static const std::map<std::string, std::map<int, SeedPoint>> s = {
      {"laplace1d",
       {{4, {5.388e-4, 8}}, {6, {1.564e-3, 32}}, {8, {6.800e-3, 128}}, {10, {2.788e-2, 512}}, {12, {1.1109e-1, 2048}},
        {14, {4.526e-1, 8192}}, {16, {1.827, 32768}}, {18, {7.712, 131072}}, {20, {72.84, 524288}}}},
      {"poisson2d",
       {{4, {2.055e-4, 3}}, {6, {5.358e-4, 10}}, {8, {1.561e-3, 28}}, {10, {3.313e-3, 59}}, {12, {6.459e-3, 119}},
        {14, {1.351e-2, 239}}, {16, {2.751e-2, 470}}, {18, {6.022e-2, 941}}, {20, {0.3000, 1898}}}},
      {"dense", {{4, {8.985e-4, 18}}, {6, {5.011e-3, 104}}, {8, {3.126e-2, 524}}, {10, {2.047e-1, 2448}}, {12, {2.534, 9759}}}}};
  return s;
}

int log2_exact(long long n) {
  int k = 0;
  while ((1LL << k) < n) ++k;
  return (1LL << k) == n ? k : -1;
}

template <class T>
using Vec = Kokkos::View<T*, Mem>;

/// Sums for the true residual: ||b - Ax||^2, ||b||^2, ||x||^2, non-finite x entries.
struct Sums3 {
  double rr = 0, bb = 0, xx = 0, bad = 0;
  KOKKOS_INLINE_FUNCTION Sums3& operator+=(const Sums3& o) {
    rr += o.rr;
    bb += o.bb;
    xx += o.xx;
    bad += o.bad;
    return *this;
  }
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile Sums3& o) volatile {
    rr += o.rr;
    bb += o.bb;
    xx += o.xx;
    bad += o.bad;
  }
};
template <class T>
struct ResidualSums {
  Vec<T> b, ax, x;
  using value_type = Sums3;
  KOKKOS_INLINE_FUNCTION void operator()(const int i, Sums3& s) const {
    const double d = static_cast<double>(b(i)) - static_cast<double>(ax(i));
    s.rr += d * d;
    s.bb += static_cast<double>(b(i)) * static_cast<double>(b(i));
    s.xx += static_cast<double>(x(i)) * static_cast<double>(x(i));
    s.bad += (x(i) == x(i) && x(i) - x(i) == 0) ? 0.0 : 1.0;
  }
  KOKKOS_INLINE_FUNCTION void init(Sums3& s) const { s = Sums3(); }
  KOKKOS_INLINE_FUNCTION void join(Sums3& a, const Sums3& c) const { a += c; }
  KOKKOS_INLINE_FUNCTION void join(volatile Sums3& a, const volatile Sums3& c) const { a += c; }
};

/// Largest row sum of |A(i, j)| (CDS: over the stored diagonals; dense: the row).
template <class T, class Mem>
double norm_inf(const kband::CDSMatrix<T, Mem>& A) {
  const auto d = A.data();
  double m = 0;
  Kokkos::parallel_reduce(
      "kband_bench::cg::norm_inf", Kokkos::RangePolicy<Exec>(0, A.n()),
      KOKKOS_LAMBDA(const int i, double& v) {
        double s = 0;
        for (int k = 0; k < static_cast<int>(d.extent(1)); ++k) {
          const double a = static_cast<double>(d(i, k));
          s += a < 0 ? -a : a;
        }
        v = s > v ? s : v;
      },
      Kokkos::Max<double>(m));
  return m;
}
template <class VA>
double norm_inf(const VA& A) {
  double m = 0;
  Kokkos::parallel_reduce(
      "kband_bench::cg::norm_inf", Kokkos::RangePolicy<Exec>(0, static_cast<int>(A.extent(0))),
      KOKKOS_LAMBDA(const int i, double& v) {
        double s = 0;
        for (int j = 0; j < static_cast<int>(A.extent(1)); ++j) {
          const double a = static_cast<double>(A(i, j));
          s += a < 0 ? -a : a;
        }
        v = s > v ? s : v;
      },
      Kokkos::Max<double>(m));
  return m;
}

/// ||b - A x||_2 / ||b||_2 on the device (one spmv), and whether x is finite;
/// `attainable`: 8 eps ||A||_inf ||x||_2 / ||b||_2, the size of the rounding
/// in A x alone (float 2D Poisson 2^18: 2.8e-2 true residual after the
/// recursive one fell below 1e-5; this bound: 0.085).
template <class T, class Matrix>
double true_residual(const Matrix& A, const Vec<T>& b, const Vec<T>& x, bool& finite, double& attainable) {
  const int n = static_cast<int>(b.extent(0));
  Vec<T> ax("kband_bench::cg::Ax", n);
  kband::spmv(Exec(), A, x, ax);
  Sums3 s;
  Kokkos::parallel_reduce("kband_bench::cg::residual", Kokkos::RangePolicy<Exec>(0, n), ResidualSums<T>{b, ax, x}, s);
  finite = s.bad == 0;
  attainable = 8 * static_cast<double>(std::numeric_limits<T>::epsilon()) * norm_inf(A) * std::sqrt(s.xx / s.bb);
  return std::sqrt(s.rr / s.bb);
}

/// Matrix elements a CG iteration reads per row: the main and upper
/// diagonals of a CDS matrix the solver reads from its upper half, else all
/// of them; half a dense row (the upper triangle).
template <class T, class Mem>
double matrix_elems_read(const kband::CDSMatrix<T, Mem>& A, bool upper_only) {
  int m = 0;
  for (int o : A.host_offsets()) m += (!upper_only || o >= 0) ? 1 : 0;
  return m;
}
template <class VA>
double matrix_elems_read(const VA& A, bool) {
  return (static_cast<double>(A.extent(0)) + 1) / 2;
}

#if defined(KBAND_BENCH_HAVE_KOKKOSKERNELS)
/// The Kokkos Kernels reference CG (textbook, one dot per reduction, host
/// scalars): `steps` iterations from x = 0; returns ||r|| / ||r0|| at the end.
template <class T, class Crs>
double kk_reference_cg(const Crs& A, const Vec<T>& b, const Vec<T>& x, const Vec<T>& r, const Vec<T>& p,
                       const Vec<T>& q, int steps) {
  Kokkos::deep_copy(x, T(0));
  KokkosSparse::spmv("N", T(1), A, x, T(0), q);
  KokkosBlas::update(T(1), b, T(-1), q, T(0), r);  // r = b - A x
  Kokkos::deep_copy(p, r);
  T rr = KokkosBlas::dot(r, r);
  const T rr0 = rr;
  for (int k = 0; k < steps && rr > 0; ++k) {
    KokkosSparse::spmv("N", T(1), A, p, T(0), q);
    const T alpha = rr / KokkosBlas::dot(p, q);
    KokkosBlas::axpby(alpha, p, T(1), x);
    KokkosBlas::axpby(-alpha, q, T(1), r);
    const T rr_new = KokkosBlas::dot(r, r);
    KokkosBlas::axpby(T(1), r, rr_new / rr, p);
    rr = rr_new;
  }
  return std::sqrt(static_cast<double>(rr) / static_cast<double>(rr0));
}
#endif

struct Target {
  std::string what;
  double limit, value;
  bool run;
  bool met() const { return run && value <= limit; }
};

template <class T>
int run(const Options& o) {
  const Exec exec;
  const double tol = o.tol > 0 ? o.tol : (std::is_same<T, double>::value ? 1e-8 : 1e-5);
  std::printf("kband-bench cg: %s, Kokkos %d (%s), %s, tol %.0e\n", device_name().c_str(), KOKKOS_VERSION,
              Exec::name(), o.precision.c_str(), tol);
  // seed Table 2: memory per format
  std::vector<std::string> summary;
  auto say = [&](const std::string& s) {
    std::printf("%s\n", s.c_str());
    summary.push_back(s);
  };
  {
    auto L = kband::make_laplacian_1d<double>(exec, 2500);
    auto P = kband::make_poisson_2d<double>(exec, 50, 50);
    say(kband::impl::concat("memory (seed Table 2, 2500 x 2500 doubles): dense ", kband::dense_memory_bytes<double>(2500),
                            " B; 1D Laplace CDS ", L.memory_bytes(), " B, CRS ",
                            kband::crs_memory_bytes<double>(2500, 3 * 2500 - 2), " B; 2D Poisson CDS ", P.memory_bytes(),
                            " B, CRS ", kband::crs_memory_bytes<double>(2500, 5 * 2500 - 4 * 50), " B"));
  }
  // sizes
  auto sizes = [&](int maxlog) {
    std::vector<long long> v;
    if (!o.ns.empty()) {
      for (int n : o.ns) v.push_back(n);
    } else {
      for (int k = o.min_log2; k <= maxlog; k += 2) v.push_back(1LL << k);
    }
    return v;
  };
  long long nmax = 1;
  for (long long n : sizes(o.max_cds_log2)) nmax = std::max(nmax, n);
  const std::int64_t copy_n = std::max<std::int64_t>(nmax, kDevice ? (1 << 25) : (1 << 22));
  const CopyReference copy = measure_copy<T>(exec, copy_n, kDevice ? 20 : 5);
  say(kband::impl::concat("copy reference: ", fmt("%.1f", copy.gbs), " GB/s (", copy_n, " elements of ", sizeof(T),
                          " B)"));
  std::printf("\n%-10s %-9s %9s %10s %11s %11s %9s %9s %7s %9s %7s  %s\n", "matrix", "prec", "n", "iters", "time s",
              "seed A100 s", "us/iter", "floor us", "/floor", "KK us/it", "KK/kb", "check");
  std::vector<Row> rows;
  std::vector<Target> targets;
  bool ok_all = true;
  std::map<std::string, double> per_iter_kband, per_iter_kk, floor_us;  // key: matrix/log2

  auto wanted = [&](const char* m) { return o.matrices.find(m) != std::string::npos; };

  // One CDS or dense problem: kband CG (given preconditioner), then the
  // reference. vec_elems: the vector elements an iteration moves per row.
  // sw: CGOptions::sweeps; div: CGOptions::work_items = ceil(n / div) (0:
  // kband's choice); with_ref: also time the reference.
  auto bench = [&](const std::string& mname, long long n, const auto& A, kband::CGPreconditioner prec,
                   double vec_elems, int cap, auto&& make_crs, const kband::CGSweeps sw, const int div,
                   const kband::CGReductions red, const bool with_ref) {
    const int ni = static_cast<int>(n);
    Vec<T> b("kband_bench::cg::b", ni), x("kband_bench::cg::x", ni);
    Kokkos::deep_copy(b, T(1));
    using Matrix = std::decay_t<decltype(A)>;
    kband::CGSolver<Exec, Matrix> solver(exec, A, prec);
    kband::CGOptions opt;
    opt.tol = tol;
    opt.check_every = o.check_every;
    opt.sweeps = sw;
    opt.work_items = div > 0 ? static_cast<int>((n + div - 1) / div) : 0;
    opt.reductions = red;
    opt.constant_diagonals = !o.read_matrix;
    // (constant diagonals: the matrix is not read)
    const bool cdiag = solver.constant_diagonals() && !o.read_matrix;
    // CDS: the 1D Laplacian needs n/2; dense: about 2.4 n in the seed (loss of orthogonality)
    opt.max_iterations = cap > 0 ? cap : (mname == "dense" ? 10 : 2) * ni + 1000;
    kband::CGResult res;
    Kokkos::deep_copy(x, T(0));
    Kokkos::fence();
    Kokkos::Timer t0;
    res = solver.solve(exec, b, x, opt);
    const double first = t0.seconds();
    Stats st;
    int reps = 1;
    if (first > 1.0 || o.reps == 1) {
      st.med = st.min = st.max = first;
    } else {
      reps = o.reps;
      st = time_fenced(0, reps, [&] { res = solver.solve(exec, b, x, opt); }, [&] { Kokkos::deep_copy(x, T(0)); });
    }
    const int its = std::max(1, res.iterations);
    // the one-reduction form reads r and q and writes them back: one vector
    // fewer than the two kernels (CGReductions)
    // (the zebra's floor stays that of its three-kernel form: its
    // one-reduction form moves about as many elements, in two kernels)
    // (the narrow-band kernel: r and p in place, q not stored: 6 vectors)
    if (res.reductions == kband::CGReductions::One && prec != kband::CGPreconditioner::Zebra)
      vec_elems -= solver.narrow_band(!o.read_matrix) && div == 0 ? 3 : 1;
    const double elems_per_row = (cdiag ? 0.0 : matrix_elems_read(A, solver.upper_only())) + vec_elems;
    // verification after timing (x of the last timed solve)
    bool finite = false;
    double attainable = 0;
    const double tres = true_residual<T>(A, b, x, finite, attainable);
    const bool capped = cap > 0;
    const bool status_ok = capped ? res.status == kband::CGStatus::MaxIterations || res.converged() : res.converged();
    // float: the rounding of A x alone can exceed 1e-2 on large grids
    const double res_bound = std::max(std::is_same<T, double>::value ? 1e-4 : 1e-2, attainable);
    const bool ok = finite && status_ok && (capped || tres <= res_bound);
    Row r;
    r.algo = prec == kband::CGPreconditioner::None ? "cg-kband" : std::string("cg-kband-") + kband::cg_preconditioner_name(prec);
    r.layout = mname;
    const char* swname = sw == kband::CGSweeps::Auto ? "auto" : (sw == kband::CGSweeps::Alternate ? "alternate" : "forward");
    const std::string pname = std::string(kband::cg_preconditioner_name(prec)) +
                              (mname != "dense" || sw == kband::CGSweeps::Auto
                                   ? ""
                                   : (sw == kband::CGSweeps::Alternate ? "/alt" : "/fw")) +
                              (div > 0 ? "/n" + std::to_string(div) : std::string()) +
                              (red == kband::CGReductions::Auto ? "" : (red == kband::CGReductions::One ? "/one" : "/two")) +
                              (solver.constant_diagonals() && o.read_matrix ? "/read" : "");
    r.variant = pname;
    r.precision = o.precision;
    r.n = ni;
    r.nsys = res.iterations;
    r.points = static_cast<long long>(n) * its;
    r.reps = reps;
    r.elems_per_point = elems_per_row;
    r.elem_bytes = sizeof(T);
    finish_row(r, st, copy);
    r.residual = tres;
    r.status = ok ? "ok" : "FAIL";
    const int lg = log2_exact(n);
    const auto& seed = seed_a100().at(mname);
    const auto sp = seed.find(lg);
    const double us_iter = st.med / its * 1e6;
    const double floor = elems_per_row * static_cast<double>(n) * sizeof(T) / (copy.gbs * 1e9) * 1e6;
    std::ostringstream note;
    note << "iters=" << res.iterations << " (" << res.message() << "), matrix elems/row=" << (elems_per_row - vec_elems)
         << (cdiag ? " (constant diagonals, multiplied by their values)" : (solver.upper_only() ? " (upper half)" : ""))
         << ", us/iter=" << fmt("%.3f", us_iter)
         << ", floor_us=" << fmt("%.3f", floor) << ", true_res=" << fmt("%.1e", tres) << " (bound "
         << fmt("%.1e", res_bound) << ")";
    if (sp != seed.end()) note << ", seed_a100_s=" << sp->second.t << ", seed_iters=" << sp->second.iters;
    if (capped) note << ", capped at " << cap << " iterations";
    if (mname == "dense") note << ", sweeps " << swname;
    if (div > 0) note << ", work_items n/" << div;
    note << ", " << (res.reductions == kband::CGReductions::One ? "one reduction" : "two reductions") << " per iteration";
    if (res.reductions == kband::CGReductions::One && solver.narrow_band(!o.read_matrix) && div == 0)
      note << " (narrow-band kernel)";
    if (solver.lines() > 0) note << ", lines=" << solver.lines() << "x" << solver.line_length();
    if (prec == kband::CGPreconditioner::Zebra) note << ", iterations on the black lines' Schur complement";
    // the Kokkos Kernels reference on the same matrix in CRS
    double kk_us = 0;
#if defined(KBAND_BENCH_HAVE_KOKKOSKERNELS)
    if (prec == kband::CGPreconditioner::None && with_ref) {
      const auto crs = make_crs();
      Vec<T> xr("kband_bench::cg::xr", ni), rr("kband_bench::cg::rr", ni), pr("kband_bench::cg::pr", ni),
          qr("kband_bench::cg::qr", ni);
      const int steps = std::min(o.ref_iters, std::max(1, res.iterations));
      double rel = 0;
      const Stats sk = time_fenced(kDevice ? 1 : 0, 1, [&] { rel = kk_reference_cg<T>(crs, b, xr, rr, pr, qr, steps); });
      kk_us = sk.med / steps * 1e6;
      const double mine = steps < static_cast<int>(res.history.size()) ? res.history[steps] : res.relative_residual;
      // the same recurrence in another summation order: the residuals agree to
      // a few digits (a factor 10 flags a broken reference or kernel). Not on
      // the dense C^T C + 1e-3 I matrices: their condition number (~1e3 n^2)
      // lets rounding differences between two correct CGs grow by orders of
      // magnitude within a few hundred steps (H200: 4.9e-7 vs 8.5e-9 after 521
      // steps at n = 256, both converging); there the reference must only
      // stay finite and reduce the residual.
      const bool ill = mname == "dense";
      const bool agree = std::isfinite(rel) &&
                         (ill ? rel < 1 : (rel <= 10 * mine + 1e-12) && (mine <= 10 * rel + 1e-12));
      note << ", kk_ref_us_per_iter=" << fmt("%.3f", kk_us) << " over " << steps << " steps (res " << fmt("%.2e", rel)
           << " vs kband " << fmt("%.2e", mine) << ")";
      Row k = r;
      k.algo = "cg-kk-ref";
      k.nsys = steps;
      k.points = static_cast<long long>(n) * steps;
      k.reps = 1;
      finish_row(k, sk, copy);
      k.residual = rel;
      k.status = agree ? "ok" : "FAIL";
      k.note = "KokkosSparse::spmv (CRS) + KokkosBlas dot/axpby/update, per-iteration figures";
      rows.push_back(k);
      ok_all = ok_all && agree;
      if (!agree) r.status = "FAIL";
    }
#else
    (void)make_crs;
    (void)with_ref;
#endif
    r.note = note.str();
    ok_all = ok_all && r.status == "ok";
    rows.push_back(r);
    std::printf("%-10s %-9s %9lld %10d %11.4e %11s %9.2f %9.2f %7.2f %9s %7s  %s%s\n", mname.c_str(),
                pname.c_str(), n, res.iterations, st.med,
                sp != seed.end() ? fmt("%.4e", sp->second.t).c_str() : "-", us_iter, floor, us_iter / floor,
                kk_us > 0 ? fmt("%.2f", kk_us).c_str() : "-", kk_us > 0 ? fmt("%.2f", kk_us / us_iter).c_str() : "-",
                r.status.c_str(), capped ? " (capped)" : "");
    std::fflush(stdout);
    const std::string key = mname + "/" + std::to_string(lg) + "/" + pname;
    per_iter_kband[key] = us_iter;
    per_iter_kk[key] = kk_us;
    floor_us[key] = floor;
    return st.med;
  };

  // bench() once per --sweeps entry (dense matrices) or (--work-items,
  // --reductions) pair (CDS); the first one's time (and the reference)
  // (line rows run two reductions whatever they are asked: the first
  // --reductions entry only)
  auto variants = [&](const std::string& mname, long long n, const auto& A, const kband::CGPreconditioner prec,
                      auto&&... args) {
    double first = 0;
    const bool dense = mname == "dense";
    const bool one_applies = prec != kband::CGPreconditioner::Line;
    const size_t nr = one_applies ? o.reductions.size() : 1;
    const size_t runs = dense ? o.sweeps.size() : o.items_div.size() * nr;
    for (size_t i = 0; i < runs; ++i) {
      const double t = bench(mname, n, A, prec, args..., dense ? o.sweeps[i] : o.sweeps[0],
                             dense ? 0 : o.items_div[i / nr], dense ? kband::CGReductions::Auto : o.reductions[i % nr],
                             i == 0);
      if (i == 0) first = t;
    }
    return first;
  };
  std::map<std::string, double> solve_time;
  if (wanted("laplace1d"))
    for (long long n : sizes(o.max_cds_log2)) {
      const auto A = kband::make_laplacian_1d<T>(exec, static_cast<int>(n));
      const int lg = log2_exact(n);
      const int cap = (lg < 0 || lg > o.laplace_full_log2) ? o.cap : 0;
      const double t = variants("laplace1d", n, A, kband::CGPreconditioner::None, 9.0, cap, [&] {
#if defined(KBAND_BENCH_HAVE_KOKKOSKERNELS)
        return kband::cds_to_crs(exec, A);
#endif
      });
      if (cap == 0) solve_time["laplace1d/" + std::to_string(lg)] = t;
    }
  if (wanted("poisson2d"))
    for (long long n : sizes(o.max_cds_log2)) {
      const int N = static_cast<int>(std::lround(std::sqrt(static_cast<double>(n))));
      if (static_cast<long long>(N) * N != n) {
        std::printf("poisson2d: n=%lld is not a square, skipped\n", n);
        continue;
      }
      const auto A = kband::make_poisson_2d<T>(exec, N, N);
      auto crs = [&] {
#if defined(KBAND_BENCH_HAVE_KOKKOSKERNELS)
        return kband::cds_to_crs(exec, A);
#endif
      };
      const int lg = log2_exact(n);
      auto prec_wanted = [&](const char* p) { return o.precs.find(p) != std::string::npos; };
      if (prec_wanted("none"))
        solve_time["poisson2d/" + std::to_string(lg)] =
            variants("poisson2d", n, A, kband::CGPreconditioner::None, 9.0, 0, crs);
      if (prec_wanted("line"))
        solve_time["poisson2d-line/" + std::to_string(lg)] =
            variants("poisson2d", n, A, kband::CGPreconditioner::Line, 10.0, 0, crs);
      if (prec_wanted("zebra") && N >= 2)
        solve_time["poisson2d-zebra/" + std::to_string(lg)] =
            variants("poisson2d", n, A, kband::CGPreconditioner::Zebra, 6.5, 0, crs);
    }
  if (wanted("dense"))
    for (long long n : sizes(o.max_dense_log2)) {
      const auto A = kband::make_random_spd<T>(exec, static_cast<int>(n), 2025);
      const int lg = log2_exact(n);
      solve_time["dense/" + std::to_string(lg)] =
          variants("dense", n, A, kband::CGPreconditioner::None, 9.0, 0, [&] {
#if defined(KBAND_BENCH_HAVE_KOKKOSKERNELS)
            return kband::cds_to_crs(exec, kband::cds_from_dense(exec, A, 0.0));
#endif
          });
    }

  // targets (H100/H200, double, tol 1e-8); reported on every backend
  auto target = [&](const std::string& what, const std::string& key, double limit) {
    const auto it = solve_time.find(key);
    targets.push_back({what, limit, it == solve_time.end() ? 0.0 : it->second, it != solve_time.end()});
  };
  target("2D Poisson 2^20 unpreconditioned <= 0.100 s (seed 0.300 s)", "poisson2d/20", 0.100);
  {
    // kband's two line preconditioners both solve the grid lines exactly with
    // the batched tridiagonal solver: block-Jacobi lines (Line) and the zebra
    // (red-black line Gauss-Seidel, CG on the black lines' Schur complement).
    // The target takes the faster; the line shows both.
    const auto l = solve_time.find("poisson2d-line/20"), z = solve_time.find("poisson2d-zebra/20");
    const bool hl = l != solve_time.end(), hz = z != solve_time.end();
    const bool zebra = hz && (!hl || z->second <= l->second);
    std::string what = "2D Poisson 2^20 line-preconditioned <= 0.050 s";
    if (hl || hz)
      what += kband::impl::concat(" (", zebra ? "zebra" : "block-Jacobi lines", "; zebra ",
                                  hz ? fmt("%.4g", z->second) : std::string("not run"), " s, block-Jacobi lines ",
                                  hl ? fmt("%.4g", l->second) : std::string("not run"), " s)");
    targets.push_back({what, 0.050, zebra ? (hz ? z->second : 0.0) : (hl ? l->second : 0.0), hl || hz});
  }
  target("1D Laplacian 2^20 <= 12 s (seed 72.84 s)", "laplace1d/20", 12.0);
  target("dense SPD 2^12 <= 0.5 s (seed 2.534 s)", "dense/12", 0.5);
  for (const auto& kv : per_iter_kband) {
    const int lg = std::atoi(kv.first.substr(kv.first.find('/') + 1).c_str());
    if (lg < 22 || kv.first.find("/none") == std::string::npos || kv.first.find("dense") == 0) continue;
    targets.push_back({kv.first + ": time per iteration <= 1.3x floor", 1.3, kv.second / floor_us[kv.first], true});
    const double kk = per_iter_kk[kv.first];
    targets.push_back({kv.first + ": kband >= 1.5x faster per iteration than KK (KK/kband >= 1.5; value = kband/KK <= 0.667)",
                       1.0 / 1.5, kk > 0 ? kv.second / kk : 0.0, kk > 0});
  }
  std::printf("\ntargets (%s; they are set for an H100/H200 in double precision):\n",
              kDevice ? "this run is on a device" : "this run is on a host");
  for (const auto& t : targets)
    say(kband::impl::concat("target ", t.what, ": ",
                            t.run ? kband::impl::concat(fmt("%.4g", t.value), t.met() ? " met" : " NOT met") : "not run"));

  Meta meta;
  meta.kv["exec_space"] = Exec::name();
  meta.kv["device"] = device_name();
  meta.kv["kokkos_version"] = std::to_string(KOKKOS_VERSION);
  meta.kv["precision"] = o.precision;
  meta.kv["tol"] = fmt("%.1e", tol);
  meta.kv["copy_gbs"] = fmt("%.2f", copy.gbs);
  meta.kv["check_every"] = std::to_string(o.check_every);
  meta.kv["suite"] = "cg";
#if defined(KBAND_BENCH_HAVE_KOKKOSKERNELS)
  meta.kv["kokkos_kernels"] = "yes";
#else
  meta.kv["kokkos_kernels"] = "no";
#endif
  if (o.json != "none") {
    if (write_json(o.json, meta, rows, summary)) std::printf("results: %s\n", o.json.c_str());
    else std::fprintf(stderr, "kband-bench cg: cannot write %s\n", o.json.c_str());
  }
  if (!ok_all) std::printf("VERIFICATION FAILED\n");
  return ok_all ? 0 : 1;
}

}  // namespace

int cg_main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  return o.precision == "float" ? run<float>(o) : run<double>(o);
}

}  // namespace kband_bench
