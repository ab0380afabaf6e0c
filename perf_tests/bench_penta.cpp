// kband-bench penta: batched pentadiagonal solvers against their peers, every
// figure measured in the same run on the same systems (see print_help()).
//
// Data: strictly diagonally dominant rows generated on the device from a hash
// of (seed, system, row) and regenerated on the host for the residual checks:
// a, b, d, e uniform in [-1, 1) (0 outside the matrix, as gpsv wants),
// c = 1 + u + |a| + |b| + |d| + |e|, y uniform in [-1, 1).
#include "bench_peers.hpp"
#include "bench_stream.hpp"
#include "bench_suites.hpp"

#if defined(KBAND_BENCH_HAVE_KOKKOSKERNELS) && defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40600 && \
    defined(__has_include)
#if __has_include(<KokkosBatched_Gbtrf.hpp>) && __has_include(<KokkosBatched_Gbtrs.hpp>)
#define KBAND_BENCH_KK_GBTRF 1
#include <KokkosBatched_Gbtrf.hpp>
#include <KokkosBatched_Gbtrs.hpp>
#endif
#endif
#ifndef KBAND_BENCH_KK_GBTRF
#define KBAND_BENCH_KK_GBTRF 0
#endif

#include <cstdio>
#include <cstring>
#include <functional>
#include <sstream>
#include <stdexcept>

namespace kband_bench {
namespace {

struct PentaOptions {
  std::vector<int> ns;
  std::vector<int> pcr_batches;
  std::string precision = "double";
  std::string json = "kband-bench-penta.json";
  long long points = kDevice ? (1LL << 27) : (1LL << 20);
  long long dense_elems = 1LL << 27;  // budget of the dense cuBLAS copies (matrix entries)
  int dense_max_n = 128;
  int reps = 10;
  int team_size = 0;  // SolveOptions::team_size of the penta and penta-shared rows (0: kband's choice)
  int blocks_per_team = 0;  // SolveOptions::blocks_per_team of those rows (Registers; 0: kband's choice)
  bool quick = false;
  std::string algos = "all";  // comma list of penta, shared, periodic, peers, dense, pcr
  bool has(const char* a) const {
    if (algos == "all") return true;
    const std::string list = "," + algos + ",";
    return list.find(std::string(",") + a + ",") != std::string::npos;
  }
};

void print_help() {
  std::printf(
      "usage: kband-bench penta [options]\n"
      "  --n LIST            system sizes (default 64,128,256,512,1024,2048,4096)\n"
      "  --points N          rows per configuration, nsys = N / n (default 2^27 on GPUs, 2^20 on hosts)\n"
      "  --pcr-batches LIST  batch sizes of the PCR-Penta vs elimination rows (default 16,256,4096,65536)\n"
      "  --dense-elems N     budget of dense matrix entries for cuBLAS getrf/getrs (default 2^27)\n"
      "  --precision P       double (default) or float\n"
      "  --reps R            timed repetitions per row (median reported; default 10)\n"
      "  --team-size T       SolveOptions::team_size of the penta and penta-shared rows (default 0:\n"
      "                      kband's choice)\n"
      "  --blocks-per-team B SolveOptions::blocks_per_team of those rows (Registers; default 0)\n"
      "  --algos LIST        rows to run, of: penta (per-system elimination), shared\n"
      "                      (penta-shared), periodic (the periodic rows of both, with\n"
      "                      penta or shared), peers (cuSPARSE gpsv, Kokkos Kernels gbtrf),\n"
      "                      dense (cuBLAS getrf/getrs and penta on its subset), pcr\n"
      "                      (PCR-Penta vs elimination), all (default)\n"
      "  --json FILE         JSON output (default kband-bench-penta.json; 'none' to skip)\n"
      "  --quick             smoke run: 2^16 points, n = 64,256, 2 reps\n"
      "  --help              this text\n"
      "Rows: penta (elimination, a thread per system; interleaved and grouped; variants\n"
      "auto/registers/global/scratch/window), penta-shared (PentadiagonalFactor; variants auto/registers/\n"
      "recompute/global), penta-periodic (periodic_penta; auto/global/scratch) and\n"
      "penta-shared-periodic (a periodic PentadiagonalFactor), cusparse-gpsvInterleavedBatch\n"
      "(same interleaved arrays, refreshed from pristine copies outside the timed region),\n"
      "kk-gbtrf+gbtrs (Kokkos Kernels banded LU, a thread per system, when built),\n"
      "cublas-getrf+getrsBatched (dense copies, n <= 128, with penta on the same subset),\n"
      "pcr-penta vs penta across n and batch size. bw/copy = bandwidth by the minimum data\n"
      "movement (7 arrays per point per-system, 2 shared) over the STREAM copy measured in\n"
      "the same run; t/copy = time per point over the copy's. Outputs are poisoned before\n"
      "timing and verified after it (sampled residuals); a failed check exits 1.\n");
}

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) v.push_back(static_cast<int>(item.compare(0, 2, "2^") == 0 ? 1LL << std::stoi(item.substr(2))
                                                                                 : std::stoll(item)));
  return v;
}

bool parse(int argc, char** argv, PentaOptions& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") return false;
    if (a == "--n") o.ns = parse_list(value());
    else if (a == "--points") o.points = parse_list(value()).at(0);
    else if (a == "--pcr-batches") o.pcr_batches = parse_list(value());
    else if (a == "--dense-elems") o.dense_elems = parse_list(value()).at(0);
    else if (a == "--precision") o.precision = value();
    else if (a == "--reps") o.reps = std::stoi(value());
    else if (a == "--team-size") o.team_size = std::stoi(value());
    else if (a == "--blocks-per-team") o.blocks_per_team = std::stoi(value());
    else if (a == "--json") o.json = value();
    else if (a == "--quick") o.quick = true;
    else if (a == "--algos") o.algos = value();
    else if (a.compare(0, 9, "--kokkos-") != 0) throw std::invalid_argument("unknown argument '" + a + "'");
  }
  if (o.precision != "double" && o.precision != "float") throw std::invalid_argument("--precision double|float");
  if (o.quick) {
    o.points = 1 << 16;
    o.reps = 2;
    if (o.ns.empty()) o.ns = {64, 256};
    if (o.pcr_batches.empty()) o.pcr_batches = {4, 64};
  }
  if (o.ns.empty()) o.ns = {64, 128, 256, 512, 1024, 2048, 4096};
  if (o.pcr_batches.empty()) o.pcr_batches = {16, 256, 4096, 65536};
  return true;
}

// ---------------------------------------------------------------------------
// Data
// ---------------------------------------------------------------------------
struct PentaGen {
  static constexpr std::int64_t kShared = -1;
  std::uint64_t seed = 7;
  int n = 0;
  bool periodic = false;  // the corner entries too (kband's periodic convention)
  KOKKOS_INLINE_FUNCTION double u01(std::int64_t s, int j, int which) const {
    const std::uint64_t h = mix64(seed ^ mix64(static_cast<std::uint64_t>(s) * 8 + static_cast<std::uint64_t>(which)) ^
                                  (static_cast<std::uint64_t>(j) << 40));
    return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
  }
  /// Off-diagonal k (0, 1, 3, 4 = a, b, d, e); 0 outside the matrix.
  KOKKOS_INLINE_FUNCTION double off(std::int64_t s, int j, int k) const {
    return !periodic && kband::penta_structural_zero(static_cast<kband::PentaArray>(k), j, n) ? 0.0
                                                                                              : 2.0 * u01(s, j, k) - 1.0;
  }
  /// k: 0..5 = a, b, c, d, e, y
  KOKKOS_INLINE_FUNCTION double v(std::int64_t s, int j, int k) const {
    if (k == 5) return 2.0 * u01(s, j, 5) - 1.0;
    if (k != 2) return off(s, j, k);
    double sum = 1.0 + u01(s, j, 2);
    for (int q = 0; q < 5; ++q) {
      const double o = q == 2 ? 0.0 : off(s, j, q);
      sum += o < 0 ? -o : o;
    }
    return sum;
  }
};

/// Fills six batches (any layout) over the flat index of their storage.
template <class T, class Ops>
struct FillPenta {
  typename Ops::batch a, b, c, d, e, y;
  PentaGen g;
  int nsys, n;
  bool shared;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    int s, j;
    if (!Ops::decode(k, nsys, n, s, j)) return;
    const std::int64_t cs = shared ? PentaGen::kShared : s;
    a(s, j) = static_cast<T>(g.v(cs, j, 0));
    b(s, j) = static_cast<T>(g.v(cs, j, 1));
    c(s, j) = static_cast<T>(g.v(cs, j, 2));
    d(s, j) = static_cast<T>(g.v(cs, j, 3));
    e(s, j) = static_cast<T>(g.v(cs, j, 4));
    y(s, j) = static_cast<T>(g.v(s, j, 5));
  }
};

template <class T>
struct FillSharedPenta {
  Kokkos::View<T*, Mem> a, b, c, d, e;
  PentaGen g;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t j) const {
    const int jj = static_cast<int>(j);
    Kokkos::View<T*, Mem> v[5] = {a, b, c, d, e};
    for (int k = 0; k < 5; ++k) v[k](jj) = static_cast<T>(g.v(PentaGen::kShared, jj, k));
  }
};

/// Max over sampled systems of ||A x - y||_inf / (||A||_inf ||x||_inf + ||y||_inf)
/// (A cyclic for g.periodic); +inf for a non-finite x. X(s, j) reads the host copy of the solution.
template <class X>
double sampled_residual(const PentaGen& g, bool shared, int nsys, int n, const X& x) {
  double worst = 0;
  const int step = nsys > 256 ? nsys / 256 : 1;
  for (int s = 0; s < nsys; s += step) {
    const std::int64_t cs = shared ? PentaGen::kShared : s;
    double rmax = 0, amax = 0, xmax = 0, ymax = 0;
    for (int j = 0; j < n; ++j) {
      const double xj = static_cast<double>(x(s, j));
      if (!std::isfinite(xj)) return HUGE_VAL;
      double r = -g.v(s, j, 5), row = 0;
      for (int k = 0; k < 5; ++k) {
        int col = j + k - 2;
        if (g.periodic) col = (col + n) % n;
        if (col < 0 || col >= n) continue;
        const double akj = g.v(cs, j, k);
        r += akj * static_cast<double>(x(s, col));
        row += std::fabs(akj);
      }
      rmax = std::max(rmax, std::fabs(r));
      amax = std::max(amax, row);
      xmax = std::max(xmax, std::fabs(xj));
      ymax = std::max(ymax, std::fabs(g.v(s, j, 5)));
    }
    worst = std::max(worst, rmax / (amax * xmax + ymax));
  }
  return worst;
}

#if KBAND_BENCH_KK_GBTRF
/// LAPACK band storage (ldab = 7 for kl = ku = 2) of every system, system index fastest.
template <class T>
struct FillBand {
  Kokkos::View<T***, Kokkos::LayoutLeft, Mem> ab;  // (nsys, 7, n)
  PentaGen g;
  int nsys, n;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    const int s = static_cast<int>(k % nsys), j = static_cast<int>(k / nsys);
    for (int r = 0; r < 7; ++r) ab(s, r, j) = T(0);
    // A(i, j) at ab(4 + i - j, j): row i = j + 2 - k' holds diagonal k' at column j
    for (int q = 0; q < 5; ++q) {
      const int i = j + 2 - q;
      if (i >= 0 && i < n) ab(s, 4 + i - j, j) = static_cast<T>(g.v(s, i, q));
    }
  }
};
template <class T>
struct KKGbtrfSolve {
  Kokkos::View<T***, Kokkos::LayoutLeft, Mem> ab;
  Kokkos::View<int**, Kokkos::LayoutLeft, Mem> piv;
  kband::InterleavedBatch<T, Mem> x;
  Kokkos::View<int*, Mem> info;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    namespace KB = KokkosBatched;
    const int s = static_cast<int>(k);
    auto a = Kokkos::subview(ab, s, Kokkos::ALL(), Kokkos::ALL());
    auto p = Kokkos::subview(piv, s, Kokkos::ALL());
    auto b = Kokkos::subview(x, s, Kokkos::ALL());
    int r = KB::SerialGbtrf<KB::Algo::Gbtrf::Unblocked>::invoke(a, p, 2, 2);
    if (r == 0) r = KB::SerialGbtrs<KB::Trans::NoTranspose, KB::Algo::Gbtrs::Unblocked>::invoke(a, p, b, 2, 2);
    info(s) = r;
  }
};
#endif

/// Dense column-major copies (nmat, n, n) of the first nmat systems (= row-major A^T).
template <class T>
struct FillDense {
  Kokkos::View<T***, Kokkos::LayoutRight, Mem> A;  // A(m, col, row): column-major matrix m
  Kokkos::View<T**, Kokkos::LayoutRight, Mem> x;   // (nmat, n) right-hand sides
  PentaGen g;
  int n;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    const int m = static_cast<int>(k / n), i = static_cast<int>(k % n);
    for (int col = 0; col < n; ++col) A(m, col, i) = T(0);
    for (int q = 0; q < 5; ++q) {
      const int col = i + q - 2;
      if (col >= 0 && col < n) A(m, col, i) = static_cast<T>(g.v(m, i, q));
    }
    x(m, i) = static_cast<T>(g.v(m, i, 5));
  }
};

#if KBAND_BENCH_CUSPARSE
/// cuSPARSE gpsvInterleavedBatch (algo 0, the only one): ds, dl, d, du, dw = a, b, c, d, e.
template <class T>
struct Gpsv;
template <>
struct Gpsv<double> {
  static cusparseStatus_t buffer(cusparseHandle_t h, int m, const double* ds, const double* dl, const double* d,
                                 const double* du, const double* dw, const double* x, int nb, size_t* sz) {
    return cusparseDgpsvInterleavedBatch_bufferSizeExt(h, 0, m, ds, dl, d, du, dw, x, nb, sz);
  }
  static cusparseStatus_t solve(cusparseHandle_t h, int m, double* ds, double* dl, double* d, double* du, double* dw,
                                double* x, int nb, void* buf) {
    return cusparseDgpsvInterleavedBatch(h, 0, m, ds, dl, d, du, dw, x, nb, buf);
  }
};
template <>
struct Gpsv<float> {
  static cusparseStatus_t buffer(cusparseHandle_t h, int m, const float* ds, const float* dl, const float* d,
                                 const float* du, const float* dw, const float* x, int nb, size_t* sz) {
    return cusparseSgpsvInterleavedBatch_bufferSizeExt(h, 0, m, ds, dl, d, du, dw, x, nb, sz);
  }
  static cusparseStatus_t solve(cusparseHandle_t h, int m, float* ds, float* dl, float* d, float* du, float* dw,
                                float* x, int nb, void* buf) {
    return cusparseSgpsvInterleavedBatch(h, 0, m, ds, dl, d, du, dw, x, nb, buf);
  }
};
#endif

// ---------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------
template <class T>
class PentaBench {
 public:
  explicit PentaBench(const PentaOptions& o) : o_(o) {}

  int run() {
    const std::int64_t maxp = std::max<std::int64_t>(o_.points, 1);
    copy_ = measure_copy<T>(exec_, maxp, std::max(o_.reps, 3));
    Row cr;
    cr.algo = "copy";
    cr.layout = "flat";
    cr.variant = "-";
    cr.precision = o_.precision;
    cr.points = maxp;
    cr.reps = o_.reps;
    cr.elems_per_point = 2;
    cr.elem_bytes = sizeof(T);
    cr.status = "ok";
    finish_row(cr, copy_.t, copy_);
    print_table_header();
    emit(cr);
    for (int n : o_.ns) {
      const int nsys = static_cast<int>(std::max<long long>(1, o_.points / n));
      interleaved_rows(n, nsys);
      grouped_rows(n, nsys);
      shared_rows<COps>(n, nsys);
      if (n <= o_.dense_max_n && o_.has("dense")) dense_rows(n, nsys);
      if (o_.has("pcr"))
        for (int nb : o_.pcr_batches) pcr_rows(n, nb);
    }
    summary();
    return failed_ ? 1 : 0;
  }
  const std::vector<Row>& rows() const { return rows_; }
  const std::vector<std::string>& summary_lines() const { return summary_; }

 private:
  using IOps = LayoutOps<T, kband::Layout::Interleaved>;
  using GOps = LayoutOps<T, kband::Layout::Grouped>;
  using COps = LayoutOps<T, kband::Layout::Contiguous>;
  using V1 = Kokkos::View<T*, Mem>;
  using InfoView = Kokkos::View<int*, Mem>;

  template <class Ops>
  struct Data {
    typename Ops::batch a, b, c, d, e, y, x;
    Data(int nsys, int n, const PentaGen& g, const Exec& exec, bool shared = false) {
      for (auto* p : {&a, &b, &c, &d, &e, &y, &x}) *p = Ops::alloc("kband_bench::penta", nsys, n);
      Kokkos::parallel_for("kband_bench::fill_penta", Policy(exec, 0, Ops::flat(nsys, n)),
                           FillPenta<T, Ops>{a, b, c, d, e, y, g, nsys, n, shared});
      exec.fence();
    }
  };

  PentaGen gen(int n, bool periodic = false) const {
    PentaGen g;
    g.n = n;
    g.periodic = periodic;
    return g;
  }

  Row base_row(const std::string& algo, const std::string& layout, const std::string& variant, int n, long long nsys,
               double elems) const {
    Row r;
    r.algo = algo, r.layout = layout, r.variant = variant, r.precision = o_.precision;
    r.n = n, r.nsys = nsys, r.points = nsys * n, r.reps = o_.reps, r.elems_per_point = elems;
    r.elem_bytes = sizeof(T);
    return r;
  }

  void emit(const Row& r) {
    print_row(r);
    rows_.push_back(r);
  }

  void na(Row r, const std::string& why) {
    r.status = "n/a";
    r.note = why;
    emit(r);
  }

  /// Times f (refresh untimed before each call), then checks the residual of
  /// the host copy read by `x` (poisoned before the first call by `poison`).
  template <class F, class R, class P, class X>
  void timed(Row r, F&& f, R&& refresh, P&& poison, X&& xread, bool shared, const std::string& note = "") {
    poison();
    Stats s;
    try {
      s = time_fenced(1, o_.reps, f, refresh);
    } catch (const kband::Error& e) {
      return na(r, e.what());
    }
    r.note = note;
    finish_row(r, s, copy_);
    r.residual = xread(shared);
    const double tol = sizeof(T) == 8 ? 1e-12 : 1e-5;
    r.status = r.residual <= tol ? "ok" : "FAIL";
    if (r.status != "ok") {
      failed_ = true;
      r.note += kband::impl::concat(" residual ", r.residual, " > ", tol);
    }
    emit(r);
  }

  template <class B>
  std::function<double(bool)> reader(const B& x, int nsys, int n, bool periodic = false) const {
    const PentaGen g = gen(n, periodic);
    return [x, nsys, n, g](bool shared) {
      auto h = Kokkos::create_mirror_view(x);
      Kokkos::deep_copy(h, x);
      return sampled_residual(g, shared, nsys, n, [&](int s, int j) { return h(s, j); });
    };
  }
  std::function<double(bool)> reader(const kband::GroupedBatch<T, kSZ, Mem>& x, int nsys, int n,
                                     bool periodic = false) const {
    const PentaGen g = gen(n, periodic);
    return [x, nsys, n, g](bool shared) {
      auto h = kband::create_mirror_view(x);
      kband::deep_copy(h, x);
      return sampled_residual(g, shared, nsys, n, [&](int s, int j) { return h(s, j); });
    };
  }

  template <class B>
  std::function<void()> nan_poison(const B& x) const {
    return [x] { Kokkos::deep_copy(x, std::numeric_limits<T>::quiet_NaN()); };
  }
  std::function<void()> nan_poison(const kband::GroupedBatch<T, kSZ, Mem>& x) const {
    return [x] { Kokkos::deep_copy(x.view(), std::numeric_limits<T>::quiet_NaN()); };
  }

  /// penta and penta-periodic in every variant, then the shared rows, on
  /// layout Ops.
  template <class Ops>
  void kband_rows(int n, int nsys) {
    const std::string lname = kband::layout_name(Ops::layout);
    // penta, then penta-periodic (cyclic systems; no Registers variant)
    for (const bool periodic : {false, true}) {
      if (!o_.has("penta") || (periodic && !(o_.has("periodic") && n >= 5))) continue;
      Data<Ops> D(nsys, n, gen(n, periodic), exec_);
      InfoView info(noinit("kband_bench::info"), nsys);
      V1 ws(noinit("kband_bench::ws"),
            kband::penta_workspace_size(D.x, periodic ? kband::Boundary::Periodic : kband::Boundary::NonPeriodic));
      for (auto v : {kband::Variant::Auto, kband::Variant::Registers, kband::Variant::Global,
                     kband::Variant::Scratch, kband::Variant::Window}) {
        if (periodic && (v == kband::Variant::Registers || v == kband::Variant::Window)) continue;
        kband::SolveOptions opt;
        opt.variant = v;
        opt.team_size = o_.team_size;
        opt.blocks_per_team = o_.blocks_per_team;
        timed(base_row(periodic ? "penta-periodic" : "penta", lname, kband::variant_name(v), n, nsys, 7),
              [&] {
                if (periodic)
                  kband::periodic_penta(exec_, D.a, D.b, D.c, D.d, D.e, D.y, D.x, info, opt, ws);
                else
                  kband::penta(exec_, D.a, D.b, D.c, D.d, D.e, D.y, D.x, info, opt, ws);
              },
              [] {}, nan_poison(D.x), reader(D.x, nsys, n, periodic), false);
      }
    }
    shared_rows<Ops>(n, nsys);
  }

  /// penta-shared (one PentadiagonalFactor, every variant) on layout Ops:
  /// only y and x per system.
  template <class Ops>
  void shared_rows(int n, int nsys) {
    if (!o_.has("shared")) return;
    const std::string lname = kband::layout_name(Ops::layout);
    const int n1 = n;
    V1 sa(noinit("sa"), n1), sb(noinit("sb"), n1), sc(noinit("sc"), n1), sd(noinit("sd"), n1), se(noinit("se"), n1);
    const typename Ops::batch y = Ops::alloc("y", nsys, n), x = Ops::alloc("x", nsys, n);
    Kokkos::parallel_for("kband_bench::fill_penta", Policy(exec_, 0, Ops::flat(nsys, n)),
                         FillPenta<T, Ops>{x, x, x, x, x, y, gen(n), nsys, n, true});
    InfoView info(noinit("kband_bench::info"), nsys);
    for (const bool periodic : {false, true}) {
      if (periodic && !(o_.has("periodic") && n >= 5)) continue;
      Kokkos::parallel_for("kband_bench::fill_shared_penta", Policy(exec_, 0, n1),
                           FillSharedPenta<T>{sa, sb, sc, sd, se, gen(n, periodic)});
      const kband::PentadiagonalFactor<T, Mem> f(exec_, sa, sb, sc, sd, se,
                                                 periodic ? kband::Boundary::Periodic : kband::Boundary::NonPeriodic);
      for (auto v : {kband::Variant::Auto, kband::Variant::Registers, kband::Variant::Recompute,
                     kband::Variant::Global}) {
        kband::SolveOptions opt;
        opt.variant = v;
        opt.team_size = o_.team_size;
        opt.blocks_per_team = o_.blocks_per_team;
        timed(base_row(periodic ? "penta-shared-periodic" : "penta-shared", lname, kband::variant_name(v), n, nsys, 2),
              [&] { kband::penta(exec_, f, y, x, info, opt); }, [] {}, nan_poison(x), reader(x, nsys, n, periodic),
              true);
      }
    }
  }

  void grouped_rows(int n, int nsys) { kband_rows<GOps>(n, nsys); }

  void interleaved_rows(int n, int nsys) {
    kband_rows<IOps>(n, nsys);
    if (!o_.has("peers")) return;
    Data<IOps> D(nsys, n, gen(n), exec_);
    InfoView info(noinit("kband_bench::info"), nsys);
    (void)info;
#if KBAND_BENCH_CUSPARSE
    {
      // gpsv may overwrite its inputs: working copies refreshed outside timing
      using B = typename IOps::batch;
      B w[6];
      for (auto& b : w) b = IOps::alloc("kband_bench::gpsv", nsys, n);
      const B* src[6] = {&D.a, &D.b, &D.c, &D.d, &D.e, &D.y};
      CusparseContext ctx(exec_);
      size_t bytes = 0;
      cusparseStatus_t st = Gpsv<T>::buffer(ctx.handle(), n, w[0].data(), w[1].data(), w[2].data(), w[3].data(),
                                            w[4].data(), w[5].data(), nsys, &bytes);
      std::string err;
      void* buf = st == CUSPARSE_STATUS_SUCCESS ? ctx.buffer(bytes, err) : nullptr;
      const Row r = base_row("cusparse-gpsvInterleavedBatch", "interleaved", "-", n, nsys, 7);
      if (!buf) {
        na(r, st != CUSPARSE_STATUS_SUCCESS ? cusparse_error(st) : err);
      } else {
        cusparseStatus_t call = CUSPARSE_STATUS_SUCCESS;
        timed(
            r,
            [&] {
              const cusparseStatus_t c = Gpsv<T>::solve(ctx.handle(), n, w[0].data(), w[1].data(), w[2].data(),
                                                        w[3].data(), w[4].data(), w[5].data(), nsys, buf);
              if (c != CUSPARSE_STATUS_SUCCESS) call = c;
            },
            [&] {
              for (int k = 0; k < 6; ++k) Kokkos::deep_copy(exec_, w[k], *src[k]);
            },
            [] {}, reader(w[5], nsys, n), false, "algo 0 (QR); inputs refreshed untimed");
        if (call != CUSPARSE_STATUS_SUCCESS) {
          rows_.back().status = "FAIL";
          rows_.back().note += std::string(" ") + cusparse_error(call);
          failed_ = true;
        }
      }
    }
#else
    na(base_row("cusparse-gpsvInterleavedBatch", "interleaved", "-", n, nsys, 7),
       "not built (needs a CUDA Kokkos and KBAND_ENABLE_CUDA_PEERS)");
#endif
#if KBAND_BENCH_KK_GBTRF
    {
      Kokkos::View<T***, Kokkos::LayoutLeft, Mem> ab0(noinit("kband_bench::ab0"), nsys, 7, n),
          ab(noinit("kband_bench::ab"), nsys, 7, n);
      Kokkos::View<int**, Kokkos::LayoutLeft, Mem> piv(noinit("kband_bench::piv"), nsys, n);
      Kokkos::parallel_for("kband_bench::fill_band", Policy(exec_, 0, static_cast<std::int64_t>(nsys) * n),
                           FillBand<T>{ab0, gen(n), nsys, n});
      timed(base_row("kk-gbtrf+gbtrs", "interleaved", "-", n, nsys, 7),
            [&] {
              Kokkos::parallel_for("kband_bench::kk_gbtrf", Policy(exec_, 0, nsys), KKGbtrfSolve<T>{ab, piv, D.x, info});
            },
            [&] {
              Kokkos::deep_copy(exec_, ab, ab0);
              Kokkos::deep_copy(exec_, D.x, D.y);
            },
            [] {}, reader(D.x, nsys, n), false, "partial pivoting; band storage (ldab 7) refreshed untimed");
    }
#else
    na(base_row("kk-gbtrf+gbtrs", "interleaved", "-", n, nsys, 7),
       "not built (needs Kokkos Kernels >= 4.6 with KokkosBatched::SerialGbtrf)");
#endif
  }

  /// cuBLAS dense getrf + getrs on the first nmat systems, and penta on the same ones.
  void dense_rows(int n, int nsys) {
    const int nmat = static_cast<int>(std::max<long long>(1, std::min<long long>(nsys, o_.dense_elems / (1LL * n * n))));
    Data<IOps> D(nmat, n, gen(n), exec_);
    InfoView info(noinit("kband_bench::info"), nmat);
    timed(base_row("penta(dense subset)", "interleaved", "auto", n, nmat, 7),
          [&] { kband::penta(exec_, D.a, D.b, D.c, D.d, D.e, D.y, D.x, info); }, [] {}, nan_poison(D.x),
          reader(D.x, nmat, n), false, "the systems of the cuBLAS row");
#if KBAND_BENCH_CUBLAS
    Kokkos::View<T***, Kokkos::LayoutRight, Mem> A0(noinit("kband_bench::dense0"), nmat, n, n),
        A(noinit("kband_bench::dense"), nmat, n, n);
    Kokkos::View<T**, Kokkos::LayoutRight, Mem> x0(noinit("kband_bench::dx0"), nmat, n), x(noinit("kband_bench::dx"), nmat, n);
    Kokkos::parallel_for("kband_bench::fill_dense", Policy(exec_, 0, static_cast<std::int64_t>(nmat) * n),
                         FillDense<T>{A0, x0, gen(n), n});
    Kokkos::View<int*, Mem> piv(noinit("kband_bench::cublas_piv"), static_cast<size_t>(nmat) * n);
    exec_.fence();
    CublasBatch<T> cb(exec_, A.data(), x.data(), nmat, n);
    cublasStatus_t call = CUBLAS_STATUS_SUCCESS;
    int getrs_info = 0;
    timed(base_row("cublas-getrf+getrsBatched", "dense", "-", n, nmat, 7),
          [&] {
            cublasStatus_t r = CublasGetrf<T>::getrf(cb.handle(), n, cb.a(), n, piv.data(), info.data(), nmat);
            if (r == CUBLAS_STATUS_SUCCESS)
              r = CublasGetrf<T>::getrs(cb.handle(), n, const_cast<const T* const*>(cb.a()), n, piv.data(), cb.b(),
                                         n, &getrs_info, nmat);
            if (r != CUBLAS_STATUS_SUCCESS) call = r;
          },
          [&] {
            Kokkos::deep_copy(exec_, A, A0);
            Kokkos::deep_copy(exec_, x, x0);
          },
          [] {}, reader(x, nmat, n), false, "partial pivoting; dense copies refreshed untimed; bw by 7 arrays/point");
    if (call != CUBLAS_STATUS_SUCCESS || getrs_info != 0) {
      rows_.back().status = "FAIL";
      failed_ = true;
    }
#else
    na(base_row("cublas-getrf+getrsBatched", "dense", "-", n, nmat, 7),
       "not built (needs a CUDA Kokkos and KBAND_ENABLE_CUDA_PEERS)");
#endif
  }

  /// PCR-Penta (contiguous) vs elimination (contiguous and interleaved) for nb systems.
  void pcr_rows(int n, int nb) {
    if (static_cast<long long>(nb) * n > std::max<long long>(o_.points, 1LL << 22)) return;
    const std::string tag = kband::impl::concat("batch ", nb);
    {
      Data<COps> D(nb, n, gen(n), exec_);
      InfoView info(noinit("kband_bench::info"), nb);
      timed(base_row("pcr-penta", "contiguous", "-", n, nb, 7),
            [&] { kband::pcr_penta(exec_, D.a, D.b, D.c, D.d, D.e, D.y, D.x, info); }, [] {}, nan_poison(D.x),
            reader(D.x, nb, n), false, tag);
      timed(base_row("penta", "contiguous", "auto", n, nb, 7),
            [&] { kband::penta(exec_, D.a, D.b, D.c, D.d, D.e, D.y, D.x, info); }, [] {}, nan_poison(D.x),
            reader(D.x, nb, n), false, tag);
      kband::PentadiagonalAlgorithm used = kband::PentadiagonalAlgorithm::Auto;
      timed(base_row("solve_pentadiagonal", "contiguous", "auto", n, nb, 7),
            [&] { used = kband::solve_pentadiagonal(exec_, D.a, D.b, D.c, D.d, D.e, D.y, D.x, info); }, [] {},
            nan_poison(D.x), reader(D.x, nb, n), false, tag);
      rows_.back().note += std::string(" -> ") + kband::algorithm_name(used);
    }
    Data<IOps> D(nb, n, gen(n), exec_);
    InfoView info(noinit("kband_bench::info"), nb);
    timed(base_row("penta", "interleaved", "auto", n, nb, 7),
          [&] { kband::penta(exec_, D.a, D.b, D.c, D.d, D.e, D.y, D.x, info); }, [] {}, nan_poison(D.x),
          reader(D.x, nb, n), false, tag);
  }

  // -------------------------------------------------------------------------
  const Row* find(const std::string& algo, const std::string& layout, const std::string& variant, int n,
                  long long nsys = -1) const {
    for (const Row& r : rows_)
      if (r.algo == algo && r.layout == layout && r.n == n && r.status == "ok" &&
          (variant.empty() || r.variant == variant) && (nsys < 0 || r.nsys == nsys))
        return &r;
    return nullptr;
  }
  const Row* best(const std::string& algo, const std::string& layout, int n, long long nsys = -1) const {
    const Row* b = nullptr;
    for (const Row& r : rows_)
      if (r.algo == algo && r.layout == layout && r.n == n && r.status == "ok" && (nsys < 0 || r.nsys == nsys) &&
          (!b || r.t_med < b->t_med))
        b = &r;
    return b;
  }
  void say(const std::string& s) {
    std::printf("%s\n", s.c_str());
    summary_.push_back(s);
  }
  /// "n=..: ratio" over n of peer time / kband time on the same systems.
  void ratio_line(const std::string& what, const std::string& kalgo, const std::string& klayout,
                  const std::string& peer, const std::string& player, bool same_nsys) {
    std::ostringstream os;
    double lo = HUGE_VAL, hi = 0;
    for (int n : o_.ns) {
      const Row* p = best(peer, player, n);
      const Row* k = p ? best(kalgo, klayout, n, same_nsys ? p->nsys : -1) : nullptr;
      if (!p || !k) continue;
      const double r = p->t_med / k->t_med;
      lo = std::min(lo, r), hi = std::max(hi, r);
      os << " n=" << n << ": " << fmt("%.2f", r);
    }
    if (hi == 0) return say(what + ": n/a (peer not built or no ok rows)");
    say(what + " (peer time / kband time):" + os.str() + fmt("  [min %.2f", lo) + fmt(", max %.2f]", hi));
  }
  void bw_line(const std::string& what, const std::string& algo, const std::string& layout, double target) {
    std::ostringstream os;
    double lo = HUGE_VAL;
    for (int n : o_.ns) {
      const Row* k = best(algo, layout, n, std::max<long long>(1, o_.points / n));
      if (!k) continue;
      lo = std::min(lo, k->bw_ratio);
      os << " n=" << n << ": " << fmt("%.2f", k->bw_ratio);
    }
    if (lo == HUGE_VAL) return;
    say(what + " bw/copy (best variant):" + os.str() +
        fmt("  [min %.2f; target ", lo) + fmt("%.2f: ", target) + (lo >= target ? "met]" : "NOT met]"));
  }

  void summary() {
    std::printf("\nsummary (%s, %s):\n", device_name().c_str(), o_.precision.c_str());
    summary_.push_back("device " + device_name());
    ratio_line("penta interleaved vs cuSPARSE gpsvInterleavedBatch", "penta", "interleaved",
               "cusparse-gpsvInterleavedBatch", "interleaved", true);
    ratio_line("penta interleaved vs Kokkos Kernels gbtrf+gbtrs", "penta", "interleaved", "kk-gbtrf+gbtrs",
               "interleaved", true);
    ratio_line("penta (dense subset) vs cuBLAS getrf+getrsBatched", "penta(dense subset)", "interleaved",
               "cublas-getrf+getrsBatched", "dense", true);
    bw_line("penta interleaved", "penta", "interleaved", 0.70);
    bw_line("penta grouped", "penta", "grouped", 0.70);
    bw_line("penta-shared interleaved", "penta-shared", "interleaved", 0.85);
    bw_line("penta-shared grouped", "penta-shared", "grouped", 0.85);
    bw_line("penta-shared contiguous", "penta-shared", "contiguous", 0.85);
    // PCR-Penta vs elimination: which to pick when
    for (int nb : o_.pcr_batches) {
      std::ostringstream os;
      bool any = false;
      for (int n : o_.ns) {
        const Row* p = find("pcr-penta", "contiguous", "", n, nb);
        const Row* c = find("penta", "contiguous", "auto", n, nb);
        const Row* i = find("penta", "interleaved", "auto", n, nb);
        if (!p || !c || !i) continue;
        any = true;
        os << " n=" << n << ": " << fmt("%.2f", c->t_med / p->t_med) << "/" << fmt("%.2f", i->t_med / p->t_med);
      }
      if (any)
        say(kband::impl::concat("batch ", nb, ": elimination time / PCR-Penta time (contiguous/interleaved elimination;"
                                              " > 1: PCR-Penta faster):") +
            os.str());
    }
    say("pick: elimination (penta, interleaved or grouped) when the batch gives every GPU thread a system; "
        "PCR-Penta for few, contiguous systems (see the batch lines); solve_pentadiagonal picks between them.");
  }

  static auto noinit(const char* l) { return Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(l)); }

  const PentaOptions& o_;
  Exec exec_;
  CopyReference copy_{};
  std::vector<Row> rows_;
  std::vector<std::string> summary_;
  bool failed_ = false;
};


template <class T>
int run_suite(const PentaOptions& o, Meta& meta, std::vector<Row>& rows, std::vector<std::string>& summary) {
  PentaBench<T> b(o);
  const int rc = b.run();
  rows = b.rows();
  summary = b.summary_lines();
  (void)meta;
  return rc;
}

}  // namespace

int penta_main(int argc, char** argv) {
  PentaOptions o;
  try {
    if (!parse(argc, argv, o)) {
      print_help();
      return 0;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kband-bench penta: %s (try --help)\n", e.what());
    return 2;
  }
  Meta meta;
  meta.kv["suite"] = "penta";
  meta.kv["exec_space"] = Exec::name();
  meta.kv["device"] = device_name();
  meta.kv["kokkos_version"] = std::to_string(KOKKOS_VERSION);
  meta.kv["precision"] = o.precision;
  meta.kv["points"] = std::to_string(o.points);
  meta.kv["reps"] = std::to_string(o.reps);
  meta.kv["grouped_sz"] = std::to_string(kSZ);
  meta.kv["cusparse"] = KBAND_BENCH_CUSPARSE ? "yes" : "no";
  meta.kv["cublas"] = KBAND_BENCH_CUBLAS ? "yes" : "no";
  meta.kv["kokkos_kernels_gbtrf"] = KBAND_BENCH_KK_GBTRF ? "yes" : "no";
  std::printf("kband-bench penta on %s (%s), %s, %lld points per configuration, %d reps\n", device_name().c_str(),
              Exec::name(), o.precision.c_str(), o.points, o.reps);
  std::vector<Row> rows;
  std::vector<std::string> summary;
  int rc = 0;
  Kokkos::Timer wall;
  try {
    rc = o.precision == "float" ? run_suite<float>(o, meta, rows, summary) : run_suite<double>(o, meta, rows, summary);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kband-bench penta: error: %s\n", e.what());
    rc = 2;
  }
  meta.kv["wall_s"] = fmt("%.2f", wall.seconds());
  if (!o.json.empty() && o.json != "none") {
    if (write_json(o.json, meta, rows, summary)) std::printf("wrote %s\n", o.json.c_str());
    else {
      std::fprintf(stderr, "kband-bench penta: cannot write %s\n", o.json.c_str());
      rc = rc ? rc : 2;
    }
  }
  return rc;
}

}  // namespace kband_bench
