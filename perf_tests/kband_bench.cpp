// kband-bench: bandwidth-normalised benchmark of kband's batched Thomas solvers
// against STREAM copy/scale, a naive x-direction Thomas and library peers;
// also kband's PCR, pivoted LU (gtsv), solve_tridiagonal and the dense
// symmetric solver (Householder tridiagonalisation + PCR) against their peers.
// Run `kband-bench --help` for the options and the method.
#include <kband.hpp>

#include "bench_peers.hpp"
#include "bench_problem.hpp"
#include "bench_report.hpp"
#include "bench_stream.hpp"
#include "bench_suites.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

namespace kband_bench {

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------

const char* const kAllAlgos[] = {"thomas", "shared",      "periodic", "periodic-shared", "naive",
                                 "cusparse", "kk",         "pcr",      "pcr-shared",      "gtsv",
                                 "solve",   "householder", "cublas",   "hybrid"};
/// Host default: the Thomas set and the (small) dense solve; pcr, pcr-shared,
/// gtsv and solve only with --algos (the Thomas set alone takes about a minute
/// on a 2-core host, and on a host solve_tridiagonal is Thomas).
const char* const kHostDefaultAlgos[] = {"thomas", "shared",   "periodic", "periodic-shared",
                                         "naive",  "cusparse", "kk",       "householder", "hybrid"};
const char* const kAllLayouts[] = {"contiguous", "interleaved", "grouped"};
const char* const kAllVariants[] = {"global", "scratch", "registers", "recompute", "window", "auto"};

/// The kband::Variant of a name in kAllVariants.
kband::Variant variant_of(const std::string& v) {
  return v == "global"      ? kband::Variant::Global
         : v == "scratch"   ? kband::Variant::Scratch
         : v == "registers" ? kband::Variant::Registers
         : v == "recompute" ? kband::Variant::Recompute
         : v == "window"    ? kband::Variant::Window
                            : kband::Variant::Auto;
}

struct Options {
  // Defaults sized for about a minute: one H100/H200 filled on a GPU; on a
  // host (2-core CI box, Serial) 2^21 points, still past the last-level cache
  // for a single core's bandwidth.
  long long points = kDevice ? (1LL << 27) : (1LL << 21);
  std::vector<int> ns;
  std::string precision = "double";
  std::set<std::string> algos = kDevice ? std::set<std::string>(std::begin(kAllAlgos), std::end(kAllAlgos))
                                        : std::set<std::string>(std::begin(kHostDefaultAlgos),
                                                                std::end(kHostDefaultAlgos));
  std::set<std::string> layouts{std::begin(kAllLayouts), std::end(kAllLayouts)};
  // kband's Auto resolves to Global on host backends, so the host default
  // skips it (--variants all brings it back).
  std::set<std::string> variants = kDevice ? std::set<std::string>{"global", "scratch", "registers", "recompute", "auto"}
                                           : std::set<std::string>{"global", "scratch"};
  int reps = kDevice ? 10 : 5;
  int warmup = 1;
  std::string json = "kband-bench.json";  // "none": no JSON
  std::string csv;
  std::uint64_t seed = 20240601;
  // PCR rows run for the n of --n inside [pcr_lo, pcr_hi] (rows in team scratch).
  int pcr_lo = 64, pcr_hi = 1024;
  // Dense symmetric solves: matrix sizes d, and matrix elements per batch
  // (nmat = dense_elems / d^2: 2^14, 2^12, 2^10 matrices of 32, 64, 128 on a GPU).
  std::vector<int> dense_d{32, 64, 128};
  long long dense_elems = kDevice ? (1LL << 24) : (1LL << 18);
  // hybrid block: few long systems (nsys, n), the three on a GPU; on
  // a host scaled to 2^18 points each (a few seconds on 2 cores)
  std::vector<std::pair<int, int>> long_cfgs;
  int team_size = 0;            // --team-size: SolveOptions::team_size of the thomas/shared rows
  int blocks_per_team = 0;      // --blocks-per-team: SolveOptions::blocks_per_team (Registers)
  int segment_rows = 0;         // --segment-rows: SolveOptions::segment_rows of the pcr rows
  kband::HybridOptions hybrid;  // --hybrid-chunk, --hybrid-segment, --hybrid-team (0: kband's choice)
  bool quick = false;
  bool points_set = false, ns_set = false, reps_set = false, dense_elems_set = false, long_set = false;
  bool has(const std::string& algo) const { return algos.count(algo) != 0; }
};

void print_help(const char* argv0) {
  std::printf(
      "Usage: %s [options] [--kokkos-... Kokkos options]\n"
      "       %s SUITE [suite options]   (SUITE: penta, distd2, cg, transport; SUITE --help)\n"
      "\n"
      "Times kband's batched Thomas solvers (per-system and shared coefficients,\n"
      "periodic and not, three layouts, Global/Scratch/Registers/Recompute/Auto\n"
      "variants) on\n"
      "a fixed total number of points for a range of system sizes n, next to\n"
      "STREAM-style copy (y = x) and in-place scale (x = s*x) on arrays of the same\n"
      "size, a naive x-direction Thomas on a LayoutLeft 3D field, and peers when\n"
      "built in\n"
      "(cuSPARSE gtsv2StridedBatch / gtsvInterleavedBatch on CUDA, Kokkos Kernels\n"
      ">= 4.5 batched pttrf+pttrs).\n"
      "\n"
      "Options:\n"
      "  --points N          total points nsys*n per configuration (default %lld;\n"
      "                      nsys = N / n). Suffixes k, M, G (powers of 2), or 2^K.\n"
      "  --n LIST            comma-separated system sizes (default 32,64,...,8192)\n"
      "  --precision P       double (default) or float\n"
      "  --algos LIST        of: thomas, shared, periodic, periodic-shared, naive,\n"
      "                      cusparse, kk, pcr, pcr-shared, gtsv, solve, householder,\n"
      "                      cublas, all. Default: all on a GPU; on a host all but\n"
      "                      pcr, pcr-shared, gtsv, solve (about a minute on 2 cores).\n"
      "                      copy and scale always run; gtsv brings thomas (its\n"
      "                      baseline). Peers: cusparse (tridiagonal), kk (pttrf, and\n"
      "                      dense LU next to householder), cublas (dense getrf/getrs).\n"
      "  --layouts LIST      of: contiguous, interleaved, grouped, all (default all)\n"
      "  --variants LIST     of: global, scratch, registers, recompute, window, auto, all\n"
      "                      (default all on a GPU; global,scratch on a host, where\n"
      "                      kband's Auto = Global and Registers serves n <= 8/16\n"
      "                      only). Periodic per-system rows skip registers;\n"
      "                      recompute runs for shared factors and gtsv only.\n"
      "  --reps R            timed repetitions per row, median reported (default %d)\n"
      "  --warmup W          untimed calls before timing (default 1)\n"
      "  --seed S            data seed\n"
      "  --pcr-range LO,HI   n range of the pcr / pcr-shared rows (default 64,1024)\n"
      "  --dense-d LIST      matrix sizes d of the householder rows (default 32,64,128)\n"
      "  --dense-elems N     matrix elements per dense batch, nmat = N / d^2 (default\n"
      "                      %lld; --quick: 2^16). Suffixes as for --points.\n"
      "  --long LIST         hybrid block configurations NSYSxN (e.g. 16x2^20,4096x1024)\n"
      "                      or none. Default on a GPU 16x2^20,16384x8192,4096x1024; on\n"
      "                      a host 2x2^17,32x8192,256x1024; --quick 2x2^14,16x1024.\n"
      "  --team-size T       threads per team of the thomas / shared rows and of the\n"
      "                      householder scratch row (kband's SolveOptions::team_size;\n"
      "                      default 0 = kband's choice); on the --long pcr rows it caps\n"
      "                      the threads of the segments' interface solve\n"
      "  --blocks-per-team B SolveOptions::blocks_per_team of those rows (Registers)\n"
      "  --segment-rows R    SolveOptions::segment_rows of the pcr rows (0 = kband's choice)\n"
      "  --hybrid-chunk M, --hybrid-segment S, --hybrid-team T\n"
      "                      kband::HybridOptions of the hybrid rows (default 0: kband's\n"
      "                      choice: on a GPU the longest segment that fits on chip)\n"
      "  --json FILE         JSON output (default kband-bench.json; 'none' = off)\n"
      "  --csv FILE          CSV output (default off)\n"
      "  --quick             smoke run: 2^16 points, n = 32,256,1024, 2 reps\n"
      "  --help              this text\n"
      "\n"
      "Before each n, copy and scale are timed again; that n's rows are compared\n"
      "with that copy.\n"
      "Method: inputs are random, symmetric, strictly diagonally dominant (SPD)\n"
      "systems generated on the device; outputs are poisoned with NaN before the\n"
      "warm-up and verified after timing (device scan of every output and info,\n"
      "host residuals of ~32 sampled systems). Every timed call is bracketed by\n"
      "Kokkos::fence(); the median of R calls is reported. Columns: ns/point =\n"
      "median time / (nsys*n); GB/s counts the algorithm's MINIMUM data movement\n"
      "(elements per point: copy 2, scale 2 (read+write), shared-coefficient\n"
      "Thomas 2, periodic shared 2, per-system Thomas 5, per-system periodic 5,\n"
      "naive x-direction 2, cuSPARSE 5, KK pttrf 4); bw/copy = GB/s / copy GB/s;\n"
      "t/copy = ns/point / copy ns/point. Per-system Global runs get a\n"
      "preallocated workspace. cuSPARSE and KK solve in place: their working\n"
      "arrays (rhs, and for gtsvInterleavedBatch / pttrf the diagonals) are\n"
      "refreshed from pristine copies before every call, outside the timed region.\n"
      "\n"
      "pcr / pcr-shared (kband::pcr, PCRFactor): contiguous and interleaved layouts,\n"
      "elements per point 5 / 2, compared with cuSPARSE gtsv2StridedBatch (target:\n"
      "kband >= 2.5x faster). gtsv (pivoted LU): all layouts and variants, 5\n"
      "elements per point, time ratio to kband::thomas (Auto) on the same layout\n"
      "and n (target <= 1.25). solve: kband::solve_tridiagonal, the algorithm it\n"
      "chose in the note. householder: kband::solve_symmetric on nmat SPD d x d\n"
      "matrices per variant (registers: d <= 64, a matrix row a GPU thread;\n"
      "scratch: the matrix in team scratch; auto), also composed from\n"
      "tridiagonalize/apply_q/pcr with preallocated workspace\n"
      "(householder-prealloc); peers Kokkos Kernels LU+SolveLU (serial,\n"
      "team) and cuBLAS getrfBatched+getrsBatched on copies refreshed outside\n"
      "timing; points = nmat*d^2, elements per point 1 + 2/d; checked by the\n"
      "normwise backward error |Ax-b|/(|A||x|+|b|) of every matrix (1000 eps).\n"
      "hybrid (kband::hybrid, Thomas-PCR hybrid): a block of its own after the\n"
      "others, for few long systems (--long), contiguous and interleaved layouts,\n"
      "5 elements per point, next to kband::thomas (auto) and the cuSPARSE\n"
      "routines on the same data (gtsv2StridedBatch, gtsv2_nopivot once per\n"
      "system when nsys <= 64, gtsvInterleavedBatch algos 0-2); targets: bw/copy\n"
      ">= 0.5 and >= 3x faster than the best cuSPARSE routine.\n"
      "Exit status: 0 all rows verified, 1 a verification failed, 2 an error.\n",
      argv0, argv0, Options().points, Options().reps, Options().dense_elems);
}

long long parse_count(const std::string& s) {
  if (s.size() > 2 && s.compare(0, 2, "2^") == 0) return 1LL << std::stoi(s.substr(2));
  std::size_t pos = 0;
  long long v = std::stoll(s, &pos);
  const std::string suf = s.substr(pos);
  if (suf == "k" || suf == "K") v <<= 10;
  else if (suf == "M" || suf == "m") v <<= 20;
  else if (suf == "G" || suf == "g") v <<= 30;
  else if (!suf.empty()) throw std::invalid_argument("bad count '" + s + "'");
  return v;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::set<std::string> parse_set(const std::string& s, const char* const* all, std::size_t nall, const char* what) {
  std::set<std::string> out;
  for (const auto& it : split(s)) {
    if (it == "all") {
      out.insert(all, all + nall);
      continue;
    }
    if (std::find(all, all + nall, it) == all + nall)
      throw std::invalid_argument(std::string("unknown ") + what + " '" + it + "'");
    out.insert(it);
  }
  return out;
}

/// Returns false when --help was given. Kokkos arguments (--kokkos-*) are skipped.
bool parse_args(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") return false;
    if (a.compare(0, 9, "--kokkos-") == 0) continue;
    if (a == "--points") {
      o.points = parse_count(value());
      o.points_set = true;
    } else if (a == "--n") {
      o.ns.clear();
      for (const auto& s : split(value())) o.ns.push_back(static_cast<int>(parse_count(s)));
      o.ns_set = true;
    } else if (a == "--precision") {
      o.precision = value();
      if (o.precision != "double" && o.precision != "float")
        throw std::invalid_argument("--precision must be float or double");
    } else if (a == "--algos") {
      o.algos = parse_set(value(), kAllAlgos, std::size(kAllAlgos), "algorithm");
    } else if (a == "--layouts") {
      o.layouts = parse_set(value(), kAllLayouts, std::size(kAllLayouts), "layout");
    } else if (a == "--variants") {
      o.variants = parse_set(value(), kAllVariants, std::size(kAllVariants), "variant");
    } else if (a == "--reps") {
      o.reps = std::stoi(value());
      o.reps_set = true;
    } else if (a == "--warmup") {
      o.warmup = std::stoi(value());
    } else if (a == "--seed") {
      o.seed = std::stoull(value());
    } else if (a == "--json") {
      o.json = value();
    } else if (a == "--csv") {
      o.csv = value();
    } else if (a == "--pcr-range") {
      const auto v = split(value());
      if (v.size() != 2) throw std::invalid_argument("--pcr-range needs LO,HI");
      o.pcr_lo = static_cast<int>(parse_count(v[0]));
      o.pcr_hi = static_cast<int>(parse_count(v[1]));
    } else if (a == "--dense-d") {
      o.dense_d.clear();
      for (const auto& v : split(value())) o.dense_d.push_back(static_cast<int>(parse_count(v)));
    } else if (a == "--dense-elems") {
      o.dense_elems = parse_count(value());
      o.dense_elems_set = true;
    } else if (a == "--long") {
      o.long_cfgs.clear();
      o.long_set = true;
      const std::string v = value();
      if (v != "none")
        for (const auto& it : split(v)) {
          const auto xpos = it.find('x');
          if (xpos == std::string::npos) throw std::invalid_argument("--long: '" + it + "' is not NSYSxN");
          const long long ns = parse_count(it.substr(0, xpos)), nn = parse_count(it.substr(xpos + 1));
          if (ns < 1 || nn < 1 || ns * nn > (1LL << 31) - 1)
            throw std::invalid_argument("--long: '" + it + "' needs nsys, n >= 1 and nsys*n < 2^31");
          o.long_cfgs.emplace_back(static_cast<int>(ns), static_cast<int>(nn));
        }
    } else if (a == "--hybrid-chunk") {
      o.hybrid.chunk_rows = std::stoi(value());
    } else if (a == "--hybrid-segment") {
      o.hybrid.segment_rows = static_cast<int>(parse_count(value()));
    } else if (a == "--blocks-per-team") {
      o.blocks_per_team = std::stoi(value());
    } else if (a == "--segment-rows") {
      o.segment_rows = std::stoi(value());
    } else if (a == "--team-size") {
      o.team_size = std::stoi(value());
    } else if (a == "--hybrid-team") {
      o.hybrid.team_size = std::stoi(value());
    } else if (a == "--quick") {
      o.quick = true;
    } else {
      throw std::invalid_argument("unknown argument '" + a + "' (try --help)");
    }
  }
  if (o.quick) {
    if (!o.points_set) o.points = 1LL << 16;
    if (!o.ns_set) o.ns = {32, 256, 1024};
    if (!o.reps_set) o.reps = 2;
    if (!o.dense_elems_set) o.dense_elems = 1LL << 16;
  }
  if (o.has("gtsv")) o.algos.insert("thomas");  // the baseline of gtsv's time ratio
  if (!o.long_set) {
    if (o.quick) o.long_cfgs = {{2, 1 << 14}, {16, 1024}};
    else if (kDevice) o.long_cfgs = {{16, 1 << 20}, {16384, 8192}, {4096, 1024}};
    else o.long_cfgs = {{2, 1 << 17}, {32, 8192}, {256, 1024}};
  }
  if (o.ns.empty())
    for (int n = 32; n <= 8192; n *= 2) o.ns.push_back(n);
  if (o.points < 1 || o.points > (1LL << 31) - 1) throw std::invalid_argument("--points must be in [1, 2^31)");
  if (o.reps < 1 || o.warmup < 0) throw std::invalid_argument("--reps must be >= 1, --warmup >= 0");
  for (int n : o.ns)
    if (n < 3) throw std::invalid_argument("every n must be >= 3 (periodic Thomas needs 3 rows)");
  for (int d : o.dense_d)
    if (d < 1 || d > 4096) throw std::invalid_argument("every --dense-d must be in [1, 4096]");
  if (o.dense_elems < 1 || o.dense_elems > (1LL << 31) - 1)
    throw std::invalid_argument("--dense-elems must be in [1, 2^31)");
  if (o.pcr_lo > o.pcr_hi) throw std::invalid_argument("--pcr-range: LO > HI");
  return true;
}

// ---------------------------------------------------------------------------
// Kernels owned by the benchmark
// ---------------------------------------------------------------------------
template <class T>
struct FillField {
  Kokkos::View<T***, Kokkos::LayoutLeft, Mem> f;
  Gen g;
  int n, ny;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    const int i = static_cast<int>(k % n);
    const std::int64_t line = k / n;
    f(i, static_cast<int>(line % ny), static_cast<int>(line / ny)) = static_cast<T>(g.d(line, i));
  }
};

/// A 1D View seen as one system (for the generic checks).
template <class T>
struct Flat1D {
  Kokkos::View<T*, Mem> v;
  KOKKOS_INLINE_FUNCTION T& operator()(const int, const int j) const { return v(j); }
};

/// The paper's baseline: one thread per x-line of f(i, j, k) (LayoutLeft, i
/// fastest), shared coefficients, forward intermediates written to the output.
template <class T>
struct NaiveThomasX {
  Kokkos::View<const T***, Kokkos::LayoutLeft, Mem> f;
  Kokkos::View<T***, Kokkos::LayoutLeft, Mem> u;
  Kokkos::View<const T*, Mem> a, w, cp;  // sub-diagonal, 1/pivot, c/pivot
  int n, ny;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t line) const {
    const int j = static_cast<int>(line % ny), k = static_cast<int>(line / ny);
    T y = f(0, j, k) * w(0);
    u(0, j, k) = y;
    for (int i = 1; i < n; ++i) {
      y = (f(i, j, k) - a(i) * y) * w(i);
      u(i, j, k) = y;
    }
    for (int i = n - 2; i >= 0; --i) {
      y = u(i, j, k) - cp(i) * y;
      u(i, j, k) = y;
    }
  }
};

/// The step of kband::solve_symmetric between the tridiagonalisation and the
/// PCR solve: sub(m, j) = T(j, j-1) = off(m, j-1), y = b.
template <class V2>
struct SymPrep {
  V2 off, sub, b, y;
  int d;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    const std::int64_t m = k / d;
    const int j = static_cast<int>(k % d);
    sub(m, j) = j > 0 ? off(m, j - 1) : typename V2::value_type(0);
    y(m, j) = b(m, j);
  }
};

// ---------------------------------------------------------------------------
// The benchmark
// ---------------------------------------------------------------------------
template <class T>
class Bench {
 public:
  Bench(const Options& o, Meta& meta) : o_(o), meta_(meta) {}

  int run() {
    print_header();
    print_table_header();
    for (int n : o_.ns) {
      if (n > o_.points) {
        std::printf("# n=%d skipped: more than --points=%lld\n", n, o_.points);
        continue;
      }
      run_stream(n);
      if (o_.layouts.count("contiguous")) run_layout<kband::Layout::Contiguous>(n);
      if (o_.layouts.count("interleaved")) run_layout<kband::Layout::Interleaved>(n);
      if (o_.layouts.count("grouped")) run_layout<kband::Layout::Grouped>(n);
      if (o_.has("naive")) run_naive(n);
    }
    if (o_.has("householder"))
      for (int dd : o_.dense_d) run_dense(dd);
    if (o_.has("hybrid")) run_long_block();
    print_summary();
    return failures_ ? 1 : 0;
  }

  const std::vector<Row>& rows() const { return rows_; }
  const std::vector<std::string>& summary() const { return summary_; }

 private:
  const Options& o_;
  Meta& meta_;
  Exec exec_;
  std::vector<Row> rows_;
  std::vector<std::string> summary_;
  double copy_ns_pp_ = 0, copy_gbs_ = 0;
  std::vector<double> copy_history_;
  Kokkos::View<T*, Mem> sx_, sy_;  // STREAM arrays
  int failures_ = 0;
  // rows_[long_begin_ ..] belong to the hybrid block (other nsys for the same
  // n): find() and find_best() do not look there
  std::size_t long_begin_ = static_cast<std::size_t>(-1);

  static constexpr int kBytes = sizeof(T);
  /// Elements per thread of the STREAM kernels: 32 bytes' worth on GPUs.
  static constexpr int kStreamUnroll = stream_unroll<T>();

  void print_header() {
    std::printf("kband-bench  (kband %d.%d.%d, Kokkos %d)\n", KBAND_VERSION_MAJOR, KBAND_VERSION_MINOR,
                KBAND_VERSION_PATCH, KOKKOS_VERSION);
    std::printf("execution space : %s, concurrency %d\n", Exec::name(), static_cast<int>(Exec().concurrency()));
    std::printf("device          : %s\n", meta_.kv["device"].c_str());
    std::printf("precision       : %s (%d bytes); points per configuration %lld; reps %d (median), warm-up %d\n",
                o_.precision.c_str(), kBytes, o_.points, o_.reps, o_.warmup);
    std::printf("grouped SZ      : %d; STREAM elements per thread: %d\n", kSZ, kStreamUnroll);
    std::string vl;
    for (const char* v : kAllVariants)
      if (o_.variants.count(v)) vl += (vl.empty() ? "" : ",") + std::string(v);
    std::printf("kband variants  : %s%s\n", vl.c_str(),
                kDevice ? "" : "   (on host backends kband's Auto is Global)");
    std::printf("peers           : cuSPARSE %s, Kokkos Kernels pttrf %s\n",
                KBAND_BENCH_CUSPARSE ? "yes" : "not built (needs CUDA Kokkos + KBAND_ENABLE_CUDA_PEERS)",
                KBAND_BENCH_KK_PTTRF ? "yes" : "not built (needs Kokkos Kernels >= 4.5)");
    std::printf("dense peers     : cuBLAS getrf/getrsBatched %s, Kokkos Kernels LU+SolveLU %s\n",
                KBAND_BENCH_CUBLAS ? "yes" : "not built (needs CUDA Kokkos + KBAND_ENABLE_CUDA_PEERS)",
                KBAND_BENCH_KK_LU ? "yes" : "not built (needs Kokkos Kernels >= 4.0)");
    std::string al;
    for (const char* a : kAllAlgos)
      if (o_.has(a)) al += (al.empty() ? "" : ",") + std::string(a);
    std::printf("algorithms      : %s; pcr n in [%d, %d]; dense d", al.c_str(), o_.pcr_lo, o_.pcr_hi);
    for (std::size_t i = 0; i < o_.dense_d.size(); ++i) std::printf("%s%d", i ? "," : " ", o_.dense_d[i]);
    std::printf(", %lld elements per batch\n", o_.dense_elems);
    std::printf(
        "\nSeed paper (002) Table 3: data movement per grid point, in domain-sized arrays\n"
        "                                 FLOP   standard R  W  R&W   cached R  W  R&W\n"
        "  DistD2 decoupling phase         ~14              1  1   1           1  1   0\n"
        "  DistD2 substitution phase        ~4              0  0   1           0  0   1\n"
        "  Thomas                          ~14              1  1   1           1  1   0\n"
        "  Periodic Thomas                 ~16              1  1   2           1  1   0\n"
        "  STREAM copy                       -              1  1   0           -  -   -\n"
        "  STREAM scale (in-place)          ~1              0  0   1           -  -   -\n"
        "Minimum elements moved per point used for GB/s here: copy 2, scale 2, shared-coefficient\n"
        "Thomas 2 (= copy), periodic shared 2, naive-x 2, per-system Thomas 5 (a,b,c,d,x),\n"
        "per-system periodic 5, cuSPARSE 5, KK pttrf 4 (diag, off-diag, rhs, x), pcr 5,\n"
        "pcr-shared 2, gtsv 5, solve 5, hybrid 5 (it reads a, b, c, d twice when a system\n"
        "spans several teams: 9); dense rows: points = nmat*d^2, 1 + 2/d (A, b, x).\n\n");
  }

  /// points < 0: nsys * n.
  Row make_row(const std::string& algo, const std::string& layout, const std::string& variant, int n,
               long long nsys, double elems, const Stats& st, long long points = -1) {
    Row r;
    r.algo = algo;
    r.layout = layout;
    r.variant = variant;
    r.precision = o_.precision;
    r.n = n;
    r.nsys = nsys;
    r.points = points >= 0 ? points : nsys * n;
    r.reps = o_.reps;
    r.elems_per_point = elems;
    r.elem_bytes = kBytes;
    r.t_med = st.med;
    r.t_min = st.min;
    r.t_max = st.max;
    r.ns_per_point = st.med * 1e9 / static_cast<double>(r.points);
    r.gbs = elems * kBytes * static_cast<double>(r.points) / st.med * 1e-9;
    r.bw_ratio = copy_gbs_ > 0 ? r.gbs / copy_gbs_ : 0;
    r.time_ratio = copy_ns_pp_ > 0 ? r.ns_per_point / copy_ns_pp_ : 0;
    r.status = "ok";
    return r;
  }

  Row na_row(const std::string& algo, const std::string& layout, const std::string& variant, int n,
             long long nsys, double elems, const std::string& why, long long points = -1) {
    Row r = make_row(algo, layout, variant, n, nsys, elems, Stats{1, 1, 1}, points);
    r.t_med = r.t_min = r.t_max = 0;
    r.status = "n/a";
    r.note = why;
    return r;
  }

  void emit(Row r, const CheckResult& c) {
    r.residual = c.max_rel_residual;
    if (!c.ok) {
      r.status = "FAIL";
      r.note = c.msg;
      ++failures_;
      std::fprintf(stderr, "\n*** FAIL: %s %s %s n=%d: %s ***\n\n", r.algo.c_str(), r.layout.c_str(),
                   r.variant.c_str(), r.n, c.msg.c_str());
    }
    print_row(r);
    rows_.push_back(r);
  }
  void emit_na(const Row& r) {
    print_row(r);
    rows_.push_back(r);
  }

  /// warm-up, then R fenced calls; `refresh` runs before each call, untimed.
  template <class F, class R>
  Stats measure(F&& f, R&& refresh) {
    return time_fenced(o_.warmup, o_.reps, std::forward<F>(f), std::forward<R>(refresh));
  }
  template <class F>
  Stats measure(F&& f) {
    return measure(std::forward<F>(f), [] {});
  }

  // -------------------------------------------------------------------------
  /// STREAM-style copy and in-place scale on `points` elements, measured
  /// before every n so each block's ratios use a reference taken next to it.
  void run_stream(const int n) {
    const std::int64_t N = o_.points;
    if (sx_.extent(0) != static_cast<std::size_t>(N)) {
      sx_ = Kokkos::View<T*, Mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kband_bench::stream_x"), N);
      sy_ = Kokkos::View<T*, Mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kband_bench::stream_y"), N);
      Kokkos::deep_copy(sx_, T(1));
    }
    const auto x = sx_;
    const auto y = sy_;
    constexpr int U = kStreamUnroll;
    const std::int64_t m = N / U, threads = std::max<std::int64_t>(m, N - m * U);
    Kokkos::deep_copy(y, std::numeric_limits<T>::quiet_NaN());
    const Stats sc = measure([&] {
      Kokkos::parallel_for("kband_bench::copy", Policy(exec_, 0, threads), CopyK<T, U>{x, y, m, N});
    });
    copy_ns_pp_ = sc.med * 1e9 / static_cast<double>(N);
    copy_gbs_ = 2.0 * kBytes * static_cast<double>(N) / sc.med * 1e-9;
    copy_history_.push_back(copy_gbs_);
    // alternate the factors 2 and 1/2 so the values stay bounded (both exact)
    int flip = 0;
    const Stats ss = measure([&] {
      const T s = (flip++ % 2) ? T(0.5) : T(2);
      Kokkos::parallel_for("kband_bench::scale", Policy(exec_, 0, threads), ScaleK<T, U>{x, s, m, N});
    });
    CheckResult c;
    {
      long long bad = 0;
      Kokkos::parallel_reduce(
          "kband_bench::check_copy", Policy(exec_, 0, N),
          CountNonFinite<Flat1D<T>, LineOps>{Flat1D<T>{y}, 1, static_cast<int>(N)}, bad);
      if (bad) {
        c.ok = false;
        c.msg = kband::impl::concat(bad, " copy outputs not finite");
      }
    }
    Row rc = make_row("stream-copy", "flat", "-", 1, N, 2, sc);
    rc.n = n;
    rc.note = "reference for this n";
    emit(rc, c);
    Row rs = make_row("stream-scale", "flat", "-", 1, N, 2, ss);
    rs.n = n;
    emit(rs, CheckResult{});
  }

  // -------------------------------------------------------------------------
  /// The hybrid block: for each (nsys, n) of --long, the copy reference, then
  /// per layout kband::hybrid, kband::thomas (auto) and the cuSPARSE peers.
  void run_long_block() {
    long_begin_ = rows_.size();
    for (const auto& cfg : o_.long_cfgs) {
      std::printf("# hybrid block: %d systems of %d rows\n", cfg.first, cfg.second);
      run_stream(cfg.second);
      if (o_.layouts.count("contiguous")) run_layout<kband::Layout::Contiguous>(cfg.second, cfg.first);
      if (o_.layouts.count("interleaved")) run_layout<kband::Layout::Interleaved>(cfg.second, cfg.first);
    }
  }

  /// nsys_long > 0: the hybrid block's rows for nsys_long systems of n rows.
  template <kband::Layout L>
  void run_layout(const int n, const int nsys_long = 0) {
    using Ops = LayoutOps<T, L>;
    using B = typename Ops::batch;
    const int nsys = nsys_long > 0 ? nsys_long : static_cast<int>(o_.points / n);
    const std::string lname = kband::layout_name(L);
    const std::size_t flat = Ops::flat(nsys, n);
    const std::int64_t iflat = static_cast<std::int64_t>(flat);

    B a = Ops::alloc("kband_bench::a", nsys, n), b = Ops::alloc("kband_bench::b", nsys, n),
      c = Ops::alloc("kband_bench::c", nsys, n), d = Ops::alloc("kband_bench::d", nsys, n),
      x = Ops::alloc("kband_bench::x", nsys, n);
    Kokkos::View<int*, Mem> info("kband_bench::info", nsys);
    Kokkos::View<T*, Mem> ws(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kband_bench::ws"),
                             kband::thomas_workspace_size(x, kband::Boundary::Periodic));
    Kokkos::View<T*, Mem> sa("kband_bench::sa", n), sb("kband_bench::sb", n), sc("kband_bench::sc", n);

    Gen g{o_.seed, n, false};
    Kokkos::parallel_for("kband_bench::fill", Policy(exec_, 0, iflat), FillSystems<T, Ops>{a, b, c, d, g, nsys, n});
    Kokkos::parallel_for("kband_bench::fill_shared", Policy(exec_, 0, n), FillShared<T>{sa, sb, sc, g});
    auto poison = [&] { Kokkos::deep_copy(Ops::raw(x), std::numeric_limits<T>::quiet_NaN()); };

    auto check = [&](bool shared, const Gen& gg, bool with_info) {
      return check_solution<T, Ops>(exec_, x, flat, nsys, n, gg, shared,
                                    with_info ? info : Kokkos::View<int*, Mem>());
    };
    // One kband row: Scratch (and PCR's team scratch) may refuse with
    // kband::Error -> n/a. `annotate` may add to the row before it is printed.
    auto kband_row_ex = [&](const std::string& algo, const std::string& vname, double elems, bool shared,
                            const Gen& gg, auto&& call, auto&& annotate) {
      poison();
      Kokkos::deep_copy(info, -1);
      Stats st;
      try {
        st = measure(call);
      } catch (const kband::Error& e) {
        emit_na(na_row(algo, lname, vname, n, nsys, elems, e.what()));
        return;
      }
      Row r = make_row(algo, lname, vname, n, nsys, elems, st);
      annotate(r);
      emit(r, check(shared, gg, true));
    };
    auto kband_row = [&](const std::string& algo, const std::string& vname, double elems, bool shared,
                         const Gen& gg, auto&& call) {
      kband_row_ex(algo, vname, elems, shared, gg, call, [](Row&) {});
    };

    if (nsys_long > 0) {
      kband_row_ex("hybrid", "-", 5, false, g, [&] { kband::hybrid(exec_, a, b, c, d, x, info, o_.hybrid); },
                   [&](Row& r) {
                     const auto hg = kband::impl::hybrid_geometry<Exec, T, L>("kband-bench", nsys, n, o_.hybrid);
                     r.note = kband::impl::concat(hg.G, " segment(s)/system of <= ", hg.Smax, " rows, chunks ~",
                                                  hg.M, ", team ", hg.team_size, ", ", hg.scratch_bytes,
                                                  " B scratch L", hg.scratch_level,
                                                  hg.G > 1 ? "; moves >= 9 elements/point" : "");
                   });
      // PCR on the partitioned system: a team per system (its reduced rows in
      // level-1 scratch once they outgrow level 0)
      if (o_.has("pcr")) {
        kband::SolveOptions opt;
        opt.variant = kband::Variant::Registers;
        opt.segment_rows = o_.segment_rows;
        opt.team_size = o_.team_size;  // with segments: caps the interface solve's threads
        Kokkos::View<T*, Mem> pws(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kband_bench::pcr_ws"),
                                  kband::pcr_workspace_size(x, opt));
        kband_row("pcr", "registers", 5, false, g, [&] { kband::pcr(exec_, a, b, c, d, x, info, opt, pws); });
      }
      // a thread per system, for contrast (skipped where 16 threads would
      // walk 2^20 rows each for seconds)
      if (o_.has("thomas") && (!kDevice || nsys >= 1024)) {
        kband::SolveOptions opt;
        kband_row("thomas", "auto", 5, false, g, [&] { kband::thomas(exec_, a, b, c, d, x, info, opt, ws); });
      }
      run_peers<Ops>(n, nsys, a, b, c, d, x, info, sa, sb, sc, g, true);
      return;
    }
    std::vector<std::pair<std::string, kband::Variant>> variants;
    for (const char* v : kAllVariants)
      if (o_.variants.count(v))
        variants.emplace_back(v, variant_of(v));

    // ---- non-periodic -------------------------------------------------------
    if (o_.has("thomas"))
      for (const auto& v : variants) {
        if (v.second == kband::Variant::Recompute) continue;  // shared factors only
        kband::SolveOptions opt;
        opt.variant = v.second;
        opt.team_size = o_.team_size;
        opt.blocks_per_team = o_.blocks_per_team;
        kband_row("thomas", v.first, 5, false, g, [&] { kband::thomas(exec_, a, b, c, d, x, info, opt, ws); });
      }
    if (o_.has("shared")) {
      kband::TridiagonalFactor<T, Mem> fac(exec_, sa, sb, sc);
      if (fac.info() != 0) throw std::runtime_error("shared factor: zero pivot (benchmark data bug)");
      for (const auto& v : variants) {
        if (v.second == kband::Variant::Window) continue;  // per-system thomas only
        kband::SolveOptions opt;
        opt.variant = v.second;
        opt.team_size = o_.team_size;
        opt.blocks_per_team = o_.blocks_per_team;
        kband_row("shared", v.first, 2, true, g, [&] { kband::thomas(exec_, fac, d, x, info, opt); });
      }
    }
    // pivoted LU, with its time ratio to Thomas (same layout and n): to
    // thomas' Auto (what a caller gets) and to the same variant
    if (o_.has("gtsv")) {
      Kokkos::View<T*, Mem> gws(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kband_bench::gtsv_ws"),
                                kband::gtsv_workspace_size(x));
      for (const auto& v : variants) {
        kband::SolveOptions opt;
        opt.variant = v.second;
        opt.team_size = o_.team_size;
        opt.blocks_per_team = o_.blocks_per_team;
        kband_row_ex("gtsv", v.first, 5, false, g, [&] { kband::gtsv(exec_, a, b, c, d, x, info, opt, gws); },
                     [&](Row& r) {
                       if (const Row* t = find("thomas", lname, "auto", n))
                         r.note = "t/thomas(auto) " + fmt("%.3f", r.t_med / t->t_med);
                       if (const Row* t = find("thomas", lname, v.first, n))
                         r.note += (r.note.empty() ? "" : "; ") + std::string("t/thomas(") + v.first + ") " +
                                   fmt("%.3f", r.t_med / t->t_med);
                     });
      }
    }
    // PCR, per-system and shared, on the contiguous and interleaved layouts
    if (L != kband::Layout::Grouped && n >= o_.pcr_lo && n <= o_.pcr_hi) {
      // kband::pcr's variants: Scratch (rows in team scratch), Registers (chunks), Auto
      std::vector<std::pair<std::string, kband::SolveOptions>> pcr_opts;
      for (const auto& v : variants)
        if (v.second == kband::Variant::Auto || v.second == kband::Variant::Scratch ||
            v.second == kband::Variant::Registers) {
          kband::SolveOptions opt;
          opt.variant = v.second;
          opt.team_size = o_.team_size;
          opt.segment_rows = o_.segment_rows;
          pcr_opts.emplace_back(v.first, opt);
        }
      if (o_.has("pcr"))
        for (const auto& v : pcr_opts)
          kband_row("pcr", v.first, 5, false, g, [&] { kband::pcr(exec_, a, b, c, d, x, info, v.second); });
      if (o_.has("pcr-shared")) {
        kband::PCRFactor<T, Mem> pf(exec_, sa, sb, sc);
        if (pf.info() != 0) throw std::runtime_error("shared PCR factor: zero pivot (benchmark data bug)");
        for (const auto& v : pcr_opts)
          kband_row("pcr-shared", v.first, 2, true, g, [&] { kband::pcr(exec_, pf, d, x, info, v.second); });
      }
    }
    // the dispatching entry point, and the algorithm it chose
    if (o_.has("solve")) {
      const kband::TridiagonalAlgorithm predicted = kband::choose_tridiagonal(exec_, L, nsys, n, sizeof(T));
      kband::TridiagonalAlgorithm used = predicted;
      kband_row_ex("solve", "-", 5, false, g,
                   [&] { used = kband::solve_tridiagonal(exec_, a, b, c, d, x, info); },
                   [&](Row& r) {
                     r.note = std::string("chose ") + kband::algorithm_name(used);
                     if (used != predicted)
                       r.note += std::string(" (choose_tridiagonal said ") + kband::algorithm_name(predicted) + ")";
                   });
    }
    run_peers<Ops>(n, nsys, a, b, c, d, x, info, sa, sb, sc, g);

    // ---- periodic -----------------------------------------------------------
    const Gen gp{o_.seed, n, true};
    if (o_.has("periodic")) {
      Kokkos::parallel_for("kband_bench::corners", Policy(exec_, 0, nsys), SetCorners<T, Ops>{a, b, c, gp, n});
      for (const auto& v : variants) {
        if (v.second == kband::Variant::Registers || v.second == kband::Variant::Recompute ||
            v.second == kband::Variant::Window)
          continue;  // non-periodic per-system / shared factors only
        kband::SolveOptions opt;
        opt.variant = v.second;
        kband_row("periodic", v.first, 5, false, gp,
                  [&] { kband::periodic_thomas(exec_, a, b, c, d, x, info, opt, ws); });
      }
    }
    if (o_.has("periodic-shared")) {
      Kokkos::parallel_for("kband_bench::fill_shared", Policy(exec_, 0, n), FillShared<T>{sa, sb, sc, gp});
      kband::TridiagonalFactor<T, Mem> fac(exec_, sa, sb, sc, kband::Boundary::Periodic);
      if (fac.info() != 0) throw std::runtime_error("periodic shared factor: zero pivot (benchmark data bug)");
      for (const auto& v : variants) {
        if (v.second == kband::Variant::Window) continue;  // non-periodic per-system thomas only
        kband::SolveOptions opt;
        opt.variant = v.second;
        kband_row("periodic-shared", v.first, 2, true, gp, [&] { kband::thomas(exec_, fac, d, x, info, opt); });
      }
    }
  }

#if KBAND_BENCH_CUSPARSE
  /// cuSPARSE gtsv2_nopivot, one call per system (contiguous: system s at
  /// row s of each array); x is refreshed from d outside the timed region.
  template <class Ops, class B>
  void nopivot_row(CusparseContext& ctx, int n, int nsys, const B& a, const B& b, const B& c, const B& d, const B& x,
                   const Gen& g) {
    using G = CusparseGtsv<T>;
    const std::string algo = "cusparse-gtsv2_nopivot(per system)", lname = kband::layout_name(Ops::layout);
    size_t bytes = 0;
    std::string err;
    // contiguous: system s starts at element s*n of every array
    const auto at = [n](const B& v, int s) { return Ops::raw(v).data() + static_cast<std::size_t>(s) * n; };
    const cusparseStatus_t st = G::nopivot_buffer(ctx.handle(), n, at(a, 0), at(b, 0), at(c, 0), at(x, 0), &bytes);
    void* buf = st == CUSPARSE_STATUS_SUCCESS ? ctx.buffer(bytes, err) : nullptr;
    if (!buf) {
      emit_na(na_row(algo, lname, "-", n, nsys, 5, st != CUSPARSE_STATUS_SUCCESS ? cusparse_error(st) : err));
      return;
    }
    Kokkos::deep_copy(Ops::raw(x), std::numeric_limits<T>::quiet_NaN());
    cusparseStatus_t call_st = CUSPARSE_STATUS_SUCCESS;
    const Stats sm = measure(
        [&] {
          for (int s = 0; s < nsys; ++s) {
            const cusparseStatus_t r = G::nopivot(ctx.handle(), n, at(a, s), at(b, s), at(c, s), at(x, s), buf);
            if (r != CUSPARSE_STATUS_SUCCESS) call_st = r;
          }
        },
        [&] { Kokkos::deep_copy(Ops::raw(x), Ops::raw(d)); });
    CheckResult cr = check_solution<T, Ops>(exec_, x, Ops::flat(nsys, n), nsys, n, g, false, {});
    if (call_st != CUSPARSE_STATUS_SUCCESS) {
      cr.ok = false;
      cr.msg = cusparse_error(call_st);
    }
    Row r = make_row(algo, lname, "-", n, nsys, 5, sm);
    r.note = kband::impl::concat(nsys, " calls");
    emit(r, cr);
  }
#endif

  // -------------------------------------------------------------------------
  // Peers. Working arrays are refreshed outside the timed region.
  template <class Ops, class B>
  void run_peers([[maybe_unused]] const int n, [[maybe_unused]] const int nsys, [[maybe_unused]] const B& a,
                 [[maybe_unused]] const B& b, [[maybe_unused]] const B& c, [[maybe_unused]] const B& d,
                 [[maybe_unused]] const B& x, [[maybe_unused]] const Kokkos::View<int*, Mem>& info,
                 [[maybe_unused]] const Kokkos::View<T*, Mem>& sa, [[maybe_unused]] const Kokkos::View<T*, Mem>& sb,
                 [[maybe_unused]] const Kokkos::View<T*, Mem>& sc, [[maybe_unused]] const Gen& g,
                 [[maybe_unused]] const bool long_block = false) {
    [[maybe_unused]] constexpr kband::Layout L = Ops::layout;
    [[maybe_unused]] const std::string lname = kband::layout_name(L);
    [[maybe_unused]] const std::size_t flat = Ops::flat(nsys, n);
    [[maybe_unused]] auto poison = [&] { Kokkos::deep_copy(Ops::raw(x), std::numeric_limits<T>::quiet_NaN()); };
    [[maybe_unused]] auto check = [&](bool shared, const Kokkos::View<int*, Mem>& inf) {
      return check_solution<T, Ops>(exec_, x, flat, nsys, n, g, shared, inf);
    };
#if KBAND_BENCH_CUSPARSE
    if (o_.has("cusparse") && L != kband::Layout::Grouped) {
      CusparseContext ctx(exec_);
      using G = CusparseGtsv<T>;
      if (L == kband::Layout::Contiguous) {
        // gtsv2StridedBatch reads dl, d, du and overwrites only the rhs.
        auto strided = [&](const std::string& algo, const B& pa, const B& pb, const B& pc, bool shared) {
          size_t bytes = 0;
          std::string err;
          cusparseStatus_t st = G::strided_buffer(ctx.handle(), n, Ops::raw(pa).data(), Ops::raw(pb).data(),
                                                  Ops::raw(pc).data(), Ops::raw(x).data(), nsys, n, &bytes);
          void* buf = st == CUSPARSE_STATUS_SUCCESS ? ctx.buffer(bytes, err) : nullptr;
          if (st != CUSPARSE_STATUS_SUCCESS || !buf) {
            emit_na(na_row(algo, lname, "-", n, nsys, 5,
                           st != CUSPARSE_STATUS_SUCCESS ? cusparse_error(st) : err));
            return;
          }
          poison();
          cusparseStatus_t call_st = CUSPARSE_STATUS_SUCCESS;
          const Stats s = measure(
              [&] {
                const cusparseStatus_t r = G::strided(ctx.handle(), n, Ops::raw(pa).data(), Ops::raw(pb).data(),
                                                      Ops::raw(pc).data(), Ops::raw(x).data(), nsys, n, buf);
                if (r != CUSPARSE_STATUS_SUCCESS) call_st = r;
              },
              [&] { Kokkos::deep_copy(Ops::raw(x), Ops::raw(d)); });
          CheckResult cr = check(shared, {});
          if (call_st != CUSPARSE_STATUS_SUCCESS) {
            cr.ok = false;
            cr.msg = cusparse_error(call_st);
          }
          Row r = make_row(algo, lname, "-", n, nsys, 5, s);
          if (shared) r.note = "shared matrix broadcast to per-system arrays";
          emit(r, cr);
        };
        strided("cusparse-gtsv2StridedBatch", a, b, c, false);
        if (long_block && nsys <= 64) nopivot_row<Ops>(ctx, n, nsys, a, b, c, d, x, g);
        // the systems of pcr-shared, for its comparison
        if (!long_block && o_.has("pcr-shared") && n >= o_.pcr_lo && n <= o_.pcr_hi) {
          B wa = Ops::alloc("kband_bench::wa", nsys, n), wb = Ops::alloc("kband_bench::wb", nsys, n),
            wc = Ops::alloc("kband_bench::wc", nsys, n);
          Kokkos::parallel_for("kband_bench::broadcast", Policy(exec_, 0, static_cast<std::int64_t>(flat)),
                               BroadcastShared<T, Ops>{wa, wb, wc, sa, sb, sc, nsys, n});
          strided("cusparse-gtsv2StridedBatch-shared", wa, wb, wc, true);
        }
      } else {  // interleaved
        B wa = Ops::alloc("kband_bench::wa", nsys, n), wb = Ops::alloc("kband_bench::wb", nsys, n),
          wc = Ops::alloc("kband_bench::wc", nsys, n);
        const char* const names[3] = {"thomas", "lu", "qr"};
        for (int pass = 0; pass < (long_block ? 3 : 4); ++pass) {
          const bool shared = pass == 3;
          const int algo_id = shared ? 0 : pass;
          const std::string algo = std::string("cusparse-gtsvInterleavedBatch") + (shared ? "-shared" : "") +
                                   "(" + names[algo_id] + ")";
          auto refresh = [&] {
            if (shared) {
              Kokkos::parallel_for("kband_bench::broadcast", Policy(exec_, 0, static_cast<std::int64_t>(flat)),
                                   BroadcastShared<T, Ops>{wa, wb, wc, sa, sb, sc, nsys, n});
            } else {
              Kokkos::deep_copy(Ops::raw(wa), Ops::raw(a));
              Kokkos::deep_copy(Ops::raw(wb), Ops::raw(b));
              Kokkos::deep_copy(Ops::raw(wc), Ops::raw(c));
            }
            Kokkos::deep_copy(Ops::raw(x), Ops::raw(d));
          };
          size_t bytes = 0;
          std::string err;
          cusparseStatus_t st =
              G::interleaved_buffer(ctx.handle(), algo_id, n, Ops::raw(a).data(), Ops::raw(b).data(),
                                    Ops::raw(c).data(), Ops::raw(x).data(), nsys, &bytes);
          void* buf = st == CUSPARSE_STATUS_SUCCESS ? ctx.buffer(bytes, err) : nullptr;
          if (st != CUSPARSE_STATUS_SUCCESS || !buf) {
            emit_na(na_row(algo, lname, "-", n, nsys, 5, st != CUSPARSE_STATUS_SUCCESS ? cusparse_error(st) : err));
            continue;
          }
          poison();
          cusparseStatus_t call_st = CUSPARSE_STATUS_SUCCESS;
          const Stats s = measure(
              [&] {
                const cusparseStatus_t r =
                    G::interleaved(ctx.handle(), algo_id, n, Ops::raw(wa).data(), Ops::raw(wb).data(),
                                   Ops::raw(wc).data(), Ops::raw(x).data(), nsys, buf);
                if (r != CUSPARSE_STATUS_SUCCESS) call_st = r;
              },
              refresh);
          CheckResult cr = check(shared, {});
          if (call_st != CUSPARSE_STATUS_SUCCESS) {
            cr.ok = false;
            cr.msg = cusparse_error(call_st);
          }
          Row r = make_row(algo, lname, "-", n, nsys, 5, s);
          if (shared) r.note = "shared matrix broadcast to per-system arrays";
          emit(r, cr);
        }
      }
    }
#endif
#if KBAND_BENCH_KK_PTTRF
    if (o_.has("kk") && !long_block) {
      B wb = Ops::alloc("kband_bench::kk_d", nsys, n), wc = Ops::alloc("kband_bench::kk_e", nsys, n);
      poison();
      Kokkos::deep_copy(info, -1);
      const Stats s = measure(
          [&] {
            Kokkos::parallel_for("kband_bench::kk_pttrf_pttrs", Policy(exec_, 0, nsys),
                                 KKPttrfSolve<T, Ops>{Ops::raw(wb), Ops::raw(wc), Ops::raw(x), info, n});
          },
          [&] {
            Kokkos::deep_copy(Ops::raw(wb), Ops::raw(b));
            Kokkos::deep_copy(Ops::raw(wc), Ops::raw(c));
            Kokkos::deep_copy(Ops::raw(x), Ops::raw(d));
          });
      emit(make_row("kk-pttrf+pttrs", lname, "-", n, nsys, 4, s), check(false, info));
    }
#endif
  }

  // -------------------------------------------------------------------------
  void run_naive(const int n) {
    const int nsys = static_cast<int>(o_.points / n);
    // lines s = j + ny*k: a 3D field (n, ny, nz) with ny*nz = nsys, nz <= ny
    int nz = 1;
    for (int q = 1; static_cast<long long>(q) * q <= nsys; ++q)
      if (nsys % q == 0) nz = q;
    const int ny = nsys / nz;
    using Field = Kokkos::View<T***, Kokkos::LayoutLeft, Mem>;
    Field f(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kband_bench::field"), n, ny, nz);
    Field u(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kband_bench::field_out"), n, ny, nz);
    const Gen g{o_.seed, n, false};
    const std::int64_t flat = static_cast<std::int64_t>(nsys) * n;
    Kokkos::parallel_for("kband_bench::fill_field", Policy(exec_, 0, flat), FillField<T>{f, g, n, ny});
    // factor of the shared matrix, on the host in double
    Kokkos::View<T*, Mem> va("kband_bench::naive_a", n), vw("kband_bench::naive_w", n), vcp("kband_bench::naive_cp", n);
    {
      auto ha = Kokkos::create_mirror_view(va);
      auto hw = Kokkos::create_mirror_view(vw);
      auto hcp = Kokkos::create_mirror_view(vcp);
      double cprev = 0;
      for (int j = 0; j < n; ++j) {
        const double aj = static_cast<T>(g.a(Gen::kShared, j)), bj = static_cast<T>(g.b(Gen::kShared, j)),
                     cj = static_cast<T>(g.c(Gen::kShared, j));
        const double w = 1.0 / (bj - aj * cprev);
        cprev = cj * w;
        ha(j) = static_cast<T>(aj);
        hw(j) = static_cast<T>(w);
        hcp(j) = static_cast<T>(cprev);
      }
      Kokkos::deep_copy(va, ha);
      Kokkos::deep_copy(vw, hw);
      Kokkos::deep_copy(vcp, hcp);
    }
    Kokkos::deep_copy(u, std::numeric_limits<T>::quiet_NaN());
    const Stats s = measure([&] {
      Kokkos::parallel_for("kband_bench::naive_thomas_x", Policy(exec_, 0, nsys),
                           NaiveThomasX<T>{f, u, va, vw, vcp, n, ny});
    });
    const CheckResult cr = check_solution<T, LineOps>(exec_, FieldLines<T>{u, ny}, static_cast<std::size_t>(flat),
                                                      nsys, n, g, true, Kokkos::View<int*, Mem>());
    Row r = make_row("naive-x", "field-LL", "-", n, nsys, 2, s);
    r.note = kband::impl::concat("field ", n, "x", ny, "x", nz);
    emit(r, cr);
  }

  // -------------------------------------------------------------------------
  /// Dense symmetric solves: kband::solve_symmetric on nmat = dense_elems / d^2
  /// SPD matrices (LayoutRight A (nmat, d, d), b and x (nmat, d)), the same
  /// pipeline with preallocated workspace, and the dense LU peers on copies.
  /// Rows: layout "dense", n = d, nsys = nmat, points = nmat d^2.
  void run_dense(const int dd) {
    const long long nmat_ll = std::max<long long>(1, o_.dense_elems / (static_cast<long long>(dd) * dd));
    const int nmat = static_cast<int>(nmat_ll);
    const long long pts = nmat_ll * dd * dd;
    const double elems = 1.0 + 2.0 / dd;
    const std::string lname = "dense";
    run_stream(dd);
    using A3 = Kokkos::View<T***, Kokkos::LayoutRight, Mem>;
    using X2 = Kokkos::View<T**, Kokkos::LayoutRight, Mem>;
    const auto noinit = [](const char* l) { return Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(l)); };
    A3 A(noinit("kband_bench::dense_A"), nmat, dd, dd);
    X2 bv(noinit("kband_bench::dense_b"), nmat, dd), x(noinit("kband_bench::dense_x"), nmat, dd);
    Kokkos::View<int*, Mem> info("kband_bench::dense_info", nmat);
    const DenseGen dg{o_.seed, dd};
    Kokkos::parallel_for("kband_bench::fill_dense", Policy(exec_, 0, static_cast<std::int64_t>(nmat) * dd),
                         FillDense<T, A3, X2>{A, bv, dg});
    // `extra` may fail the check further (a peer's error status).
    auto dense_row = [&](const std::string& algo, const std::string& variant, auto&& call, auto&& refresh,
                         const auto& xv, const std::string& note, auto&& extra) {
      Kokkos::deep_copy(xv, std::numeric_limits<T>::quiet_NaN());
      Kokkos::deep_copy(info, -1);
      Stats st;
      try {
        st = measure(call, refresh);
      } catch (const kband::Error& e) {
        emit_na(na_row(algo, lname, variant, dd, nmat, elems, e.what(), pts));
        return;
      }
      Row r = make_row(algo, lname, variant, dd, nmat, elems, st, pts);
      r.note = note;
      CheckResult cr = check_dense<T>(exec_, xv, nmat, dg, info);
      extra(cr);
      emit(r, cr);
    };
    auto none = [] {};
    auto no_extra = [](CheckResult&) {};

    // kband::solve_symmetric, the Pivoted T solve in one kernel: Registers
    // (rows of the matrix in registers, d <= 64), Scratch (the matrix in
    // team scratch), Auto
    for (const char* v : {"registers", "scratch", "auto"}) {
      if (!o_.variants.count(v)) continue;
      kband::SolveOptions hopt;
      hopt.team_size = o_.team_size;
      hopt.variant = variant_of(v);
      dense_row("householder", v,
                [&] { kband::solve_symmetric(exec_, A, bv, x, info, kband::SymmetricTSolve::Pivoted, hopt); }, none,
                x, "solve_symmetric (one fused kernel, no workspace)", no_extra);
    }
    // the same pipeline from the public pieces, workspace allocated once
    {
      X2 diag(noinit("kband_bench::sym_diag"), nmat, dd), off(noinit("kband_bench::sym_off"), nmat, dd),
          tau(noinit("kband_bench::sym_tau"), nmat, dd), sub(noinit("kband_bench::sym_sub"), nmat, dd);
      A3 V(noinit("kband_bench::sym_V"), nmat, dd, dd);
      dense_row(
          "householder-prealloc", "-",
          [&] {
            kband::tridiagonalize(exec_, A, diag, off, V, tau);
            Kokkos::parallel_for("kband_bench::sym_prep", Policy(exec_, 0, static_cast<std::int64_t>(nmat) * dd),
                                 SymPrep<X2>{off, sub, bv, x, dd});
            kband::apply_q(exec_, V, tau, x, true);
            kband::pcr(exec_, sub, diag, off, x, x, info);
            kband::apply_q(exec_, V, tau, x, false);
          },
          none, x, "tridiagonalize + apply_q + pcr + apply_q, workspace allocated once", no_extra);
    }
#if KBAND_BENCH_KK_LU
    if (o_.has("kk")) {
      {  // one thread per matrix, matrix index fastest
        using A3L = Kokkos::View<T***, Kokkos::LayoutLeft, Mem>;
        using X2L = Kokkos::View<T**, Kokkos::LayoutLeft, Mem>;
        A3L Aw(noinit("kband_bench::kk_A"), nmat, dd, dd);
        X2L xw(noinit("kband_bench::kk_x"), nmat, dd);
        dense_row(
            "kk-serial-lu+solvelu", "-",
            [&] {
              Kokkos::parallel_for("kband_bench::kk_serial_lu", Policy(exec_, 0, nmat),
                                   KKDenseLUSerial<T, A3L, X2L>{Aw, xw, info});
            },
            [&] {
              Kokkos::deep_copy(Aw, A);
              Kokkos::deep_copy(xw, bv);
            },
            xw, "no pivoting; one thread per matrix, LayoutLeft copy", no_extra);
      }
      {  // one team per matrix
        A3 Aw(noinit("kband_bench::kk_A"), nmat, dd, dd);
        X2 xw(noinit("kband_bench::kk_x"), nmat, dd);
        const int ts = kDevice ? std::min(std::max(dd, 32), 256) : 1;
        dense_row(
            "kk-team-lu+solvelu", "-",
            [&] {
              Kokkos::parallel_for("kband_bench::kk_team_lu", Kokkos::TeamPolicy<Exec>(exec_, nmat, ts),
                                   KKDenseLUTeam<T, A3, X2>{Aw, xw, info});
            },
            [&] {
              Kokkos::deep_copy(Aw, A);
              Kokkos::deep_copy(xw, bv);
            },
            xw, kband::impl::concat("no pivoting; one team of ", ts, " per matrix"), no_extra);
      }
    }
#endif
#if KBAND_BENCH_CUBLAS
    if (o_.has("cublas")) {
      A3 Aw(noinit("kband_bench::cublas_A"), nmat, dd, dd);
      X2 xw(noinit("kband_bench::cublas_x"), nmat, dd);
      Kokkos::View<int*, Mem> piv(noinit("kband_bench::cublas_piv"), static_cast<std::size_t>(nmat) * dd);
      CublasBatch<T> cb(exec_, Aw.data(), xw.data(), nmat, dd);
      using G = CublasGetrf<T>;
      cublasStatus_t call_st = CUBLAS_STATUS_SUCCESS;
      int getrs_info = 0;
      dense_row(
          "cublas-getrf+getrsBatched", "-",
          [&] {
            cublasStatus_t r = G::getrf(cb.handle(), dd, cb.a(), dd, piv.data(), info.data(), nmat);
            if (r == CUBLAS_STATUS_SUCCESS)
              r = G::getrs(cb.handle(), dd, const_cast<const T* const*>(cb.a()), dd, piv.data(), cb.b(), dd,
                           &getrs_info, nmat);
            if (r != CUBLAS_STATUS_SUCCESS) call_st = r;
          },
          [&] {
            Kokkos::deep_copy(Aw, A);
            Kokkos::deep_copy(xw, bv);
          },
          xw, "partial pivoting", [&](CheckResult& cr) {
            if (call_st != CUBLAS_STATUS_SUCCESS || getrs_info != 0) {
              cr.ok = false;
              cr.msg = call_st != CUBLAS_STATUS_SUCCESS ? std::string(cublas_error(call_st))
                                                        : kband::impl::concat("getrsBatched info ", getrs_info);
            }
          });
    }
#endif
  }

  // -------------------------------------------------------------------------
  const Row* find(const std::string& algo, const std::string& layout, const std::string& variant, int n) const {
    for (std::size_t i = 0; i < rows_.size() && i < long_begin_; ++i)
      if (const Row& r = rows_[i];
          r.algo == algo && r.layout == layout && r.variant == variant && r.n == n && r.status == "ok")
        return &r;
    return nullptr;
  }
  /// Fastest ok kband row of any variant.
  const Row* find_best(const std::string& algo, const std::string& layout, int n) const {
    const Row* best = nullptr;
    for (std::size_t i = 0; i < rows_.size() && i < long_begin_; ++i)
      if (const Row& r = rows_[i]; r.algo == algo && r.layout == layout && r.n == n && r.status == "ok" &&
                                   (!best || r.ns_per_point < best->ns_per_point))
        best = &r;
    return best;
  }

  void say(const std::string& s) {
    std::printf("%s\n", s.c_str());
    summary_.push_back(s);
  }

  void compare(const std::string& kalgo, const std::string& klayout, const std::string& peer,
               const std::string& player) {
    std::vector<double> auto_r, best_r;
    std::vector<int> nn;
    for (int n : o_.ns) {
      const Row* p = find(peer, player, "-", n);
      if (!p) continue;
      const Row* ka = find(kalgo, klayout, "auto", n);
      const Row* kb = find_best(kalgo, klayout, n);
      if (!kb) continue;
      nn.push_back(n);
      best_r.push_back(kb->ns_per_point / p->ns_per_point);
      auto_r.push_back(ka ? ka->ns_per_point / p->ns_per_point : NAN);
    }
    if (nn.empty()) return;
    std::ostringstream os;
    os.setf(std::ios::fixed);
    os.precision(2);
    os << "  kband " << kalgo << "/" << klayout << " vs " << peer << "/" << player << ": time kband/peer";
    for (std::size_t i = 0; i < nn.size(); ++i) {
      os << (i ? ", " : " ") << "n=" << nn[i] << ":" << best_r[i];
      if (std::isfinite(auto_r[i]) && std::fabs(auto_r[i] - best_r[i]) > 0.005) os << "(auto " << auto_r[i] << ")";
    }
    double lg = 0;
    for (double v : best_r) lg += std::log(v);
    os << "  [geomean " << std::exp(lg / best_r.size()) << "]";
    say(os.str());
  }

  static std::string per_n_line(const std::string& head, const char* key, const std::vector<int>& nn,
                                const std::vector<double>& v, const char* unit, double target, bool at_least) {
    std::ostringstream os;
    os.setf(std::ios::fixed);
    os.precision(2);
    os << head << ":";
    int met = 0;
    double lg = 0, lo = v.front(), hi = v.front();
    for (std::size_t i = 0; i < nn.size(); ++i) {
      os << (i ? ", " : " ") << key << "=" << nn[i] << ":" << v[i] << unit;
      met += at_least ? v[i] >= target : v[i] <= target;
      lg += std::log(v[i]);
      lo = std::min(lo, v[i]);
      hi = std::max(hi, v[i]);
    }
    os << "  [geomean " << std::exp(lg / v.size()) << unit << ", " << (at_least ? "min " : "max ")
       << (at_least ? lo : hi) << unit << "; target " << (at_least ? ">= " : "<= ") << target << unit << " met at "
       << met << "/" << v.size() << (met == static_cast<int>(v.size()) ? " -> MET]" : " -> NOT MET]");
    return os.str();
  }

  /// kband PCR vs cuSPARSE gtsv2StridedBatch on the contiguous layout: speedup
  /// = peer time / kband time, per n (target >= 2.5).
  void summary_pcr() {
    const bool any = std::any_of(rows_.begin(), rows_.end(),
                                 [](const Row& r) { return r.algo == "pcr" || r.algo == "pcr-shared"; });
    if (!any) return;
    say("kband PCR vs cuSPARSE gtsv2StridedBatch, contiguous, same systems (speedup = peer time / kband time):");
    const std::pair<const char*, const char*> kinds[] = {
        {"pcr", "auto"},        {"pcr", "scratch"},        {"pcr", "registers"},
        {"pcr-shared", "auto"}, {"pcr-shared", "scratch"}, {"pcr-shared", "registers"}};
    for (const auto& kv : kinds) {
      const char* al = kv.first;
      const std::string peer =
          std::string("cusparse-gtsv2StridedBatch") + (std::string(al) == "pcr-shared" ? "-shared" : "");
      std::vector<int> nn;
      std::vector<double> sp;
      bool kband_rows = false;
      for (int n : o_.ns) {
        const Row* k = find(al, "contiguous", kv.second, n);
        kband_rows = kband_rows || k;
        const Row* p = find(peer, "contiguous", "-", n);
        if (k && p) {
          nn.push_back(n);
          sp.push_back(p->t_med / k->t_med);
        }
      }
      if (!kband_rows) continue;
      if (nn.empty()) {
        say(kband::impl::concat("  ", al, "/contiguous: no ", peer, " rows (",
                                KBAND_BENCH_CUSPARSE ? "add cusparse to --algos" : "cuSPARSE not in this build",
                                "); speedup not computed"));
        continue;
      }
      const std::string var = std::string(" (") + kv.second + ")";
      say(per_n_line(kband::impl::concat("  ", al, var, "/contiguous vs ", peer), "n", nn, sp, "x", 2.5, true));
    }
  }

  /// The hybrid block: per configuration and layout, kband::hybrid's
  /// bandwidth ratio to copy (target >= 0.5) and its speedup over the fastest
  /// cuSPARSE routine on the same systems (target >= 3).
  void summary_hybrid() {
    if (long_begin_ >= rows_.size()) return;
    say("kband hybrid, few long systems (bw/copy by 5 elements per point; speedup = best cuSPARSE time / hybrid "
        "time, same systems):");
    for (const auto& cfg : o_.long_cfgs)
      for (const char* l : {"contiguous", "interleaved"}) {
        const Row* h = nullptr;
        const Row* peer = nullptr;
        const Row* th = nullptr;
        const Row* pr = nullptr;
        for (std::size_t i = long_begin_; i < rows_.size(); ++i) {
          const Row& r = rows_[i];
          if (r.layout != l || r.n != cfg.second || r.nsys != cfg.first || r.status != "ok") continue;
          if (r.algo == "hybrid") h = &r;
          if (r.algo == "thomas") th = &r;
          if (r.algo == "pcr") pr = &r;
          if (r.algo.compare(0, 8, "cusparse") == 0 && (!peer || r.t_med < peer->t_med)) peer = &r;
        }
        if (!h) continue;
        std::ostringstream os;
        os << "  " << cfg.first << " x " << cfg.second << " " << l << ": hybrid bw/copy " << fmt("%.3f", h->bw_ratio)
           << (h->bw_ratio >= 0.5 ? " (>= 0.5 MET)" : " (>= 0.5 NOT MET)");
        if (peer)
          os << "; best cuSPARSE " << peer->algo.substr(9) << " speedup " << fmt("%.2f", peer->t_med / h->t_med)
             << "x" << (peer->t_med / h->t_med >= 3 ? " (>= 3 MET)" : " (>= 3 NOT MET)");
        else
          os << "; no cuSPARSE row (" << (KBAND_BENCH_CUSPARSE ? "add cusparse to --algos" : "not in this build")
             << ")";
        if (th) os << "; thomas(auto) " << fmt("%.2f", th->t_med / h->t_med) << "x the hybrid time";
        say(os.str());
        if (pr) {
          std::ostringstream op;
          op << "    pcr(registers) bw/copy " << fmt("%.3f", pr->bw_ratio)
             << (pr->bw_ratio >= 0.5 ? " (>= 0.5 MET)" : " (>= 0.5 NOT MET)");
          if (peer)
            op << "; speedup over " << peer->algo.substr(9) << " " << fmt("%.2f", peer->t_med / pr->t_med) << "x"
               << (peer->t_med / pr->t_med >= 3 ? " (>= 3 MET)" : " (>= 3 NOT MET)");
          op << "; " << fmt("%.2f", h->t_med / pr->t_med) << "x faster than the hybrid";
          say(op.str());
        }
      }
  }

  /// gtsv time (each variant) / thomas time (Auto, what a caller of thomas
  /// gets), same layout and n (target <= 1.25).
  void summary_gtsv() {
    bool header = false;
    for (const char* l : kAllLayouts)
      for (const char* v : kAllVariants) {
        std::vector<int> nn;
        std::vector<double> rr;
        for (int n : o_.ns) {
          const Row* gr = find("gtsv", l, v, n);
          const Row* t = find("thomas", l, "auto", n);
          if (gr && t) {
            nn.push_back(n);
            rr.push_back(gr->t_med / t->t_med);
          }
        }
        if (nn.empty()) continue;
        if (!header) say("kband gtsv (pivoted LU, per variant) / kband thomas (auto) time ratio, same layout and n:");
        header = true;
        char head[64];
        std::snprintf(head, sizeof(head), "  %-11s %-7s", l, v);
        say(per_n_line(head, "n", nn, rr, "", 1.25, false));
      }
  }

  void summary_solve() {
    bool header = false;
    for (const char* l : kAllLayouts) {
      std::string line;
      for (const Row& r : rows_)
        if (r.algo == "solve" && r.layout == l)
          line += kband::impl::concat(line.empty() ? " " : ", ", "n=", r.n, ":",
                                      r.status == "n/a" ? std::string("n/a")
                                                        : (r.note.compare(0, 6, "chose ") == 0 ? r.note.substr(6)
                                                                                              : r.status));
      if (line.empty()) continue;
      if (!header) say("kband::solve_tridiagonal chose (per layout and n):");
      header = true;
      char head[32];
      std::snprintf(head, sizeof(head), "  %-11s", l);
      say(head + line);
    }
  }

  /// kband dense symmetric solve vs the dense LU peers, time kband/peer per d.
  void summary_dense() {
    const bool any = std::any_of(rows_.begin(), rows_.end(), [](const Row& r) { return r.layout == "dense"; });
    if (!any) return;
    say("kband dense symmetric solve vs batched dense LU peers (time kband/peer, < 1: kband faster):");
    bool peers = false;
    // kband rows: householder per variant, householder-prealloc
    const std::pair<const char*, const char*> mine[] = {{"householder", "registers"},
                                                        {"householder", "scratch"},
                                                        {"householder", "auto"},
                                                        {"householder-prealloc", "-"}};
    for (const char* peer : {"kk-serial-lu+solvelu", "kk-team-lu+solvelu", "cublas-getrf+getrsBatched"})
      for (const auto& al : mine) {
        std::vector<int> dd;
        std::vector<double> rr;
        for (int d : o_.dense_d) {
          const Row* k = find(al.first, "dense", al.second, d);
          const Row* p = find(peer, "dense", "-", d);
          if (k && p) {
            dd.push_back(d);
            rr.push_back(k->t_med / p->t_med);
          }
        }
        if (dd.empty()) continue;
        peers = true;
        const std::string label = std::string(al.first) + (std::string(al.second) == "-" ? "" : std::string("[") + al.second + "]");
        say(per_n_line(kband::impl::concat("  ", label, " vs ", peer), "d", dd, rr, "", 1.0, false));
      }
    if (!peers)
      say(kband::impl::concat("  no dense peer rows (KK LU needs Kokkos Kernels >= 4.0 and kk in --algos; "
                              "cuBLAS needs CUDA Kokkos + KBAND_ENABLE_CUDA_PEERS and cublas in --algos)"));
    std::vector<int> dd;
    std::vector<double> rr;
    for (int d : o_.dense_d) {
      const Row* k = find("householder", "dense", "auto", d);
      if (!k) k = find("householder", "dense", "scratch", d);  // host default variants: Auto = Scratch there
      const Row* p = find("householder-prealloc", "dense", "-", d);
      if (k && p) {
        dd.push_back(d);
        rr.push_back(k->t_med / p->t_med);
      }
    }
    if (!dd.empty()) {
      std::ostringstream os;
      os.setf(std::ios::fixed);
      os.precision(2);
      os << "  householder (auto, else scratch) / householder-prealloc (solve_symmetric over the composed pipeline):";
      for (std::size_t i = 0; i < dd.size(); ++i) os << (i ? ", " : " ") << "d=" << dd[i] << ":" << rr[i];
      say(os.str());
    }
  }

  void print_summary() {
    std::printf("\n");
    std::vector<double> cg = copy_history_;
    std::sort(cg.begin(), cg.end());
    const double cmed = cg.empty() ? 0 : cg[cg.size() / 2];
    meta_.kv["copy_gbs_median"] = fmt("%.3f", cmed);
    say(kband::impl::concat("Summary (", Exec::name(), ", ", meta_.kv["device"], ", ", o_.precision, ", ",
                            o_.points, " points): copy ", fmt("%.2f", cmed), " GB/s median over the ", cg.size(),
                            " sizes (", fmt("%.2f", cg.empty() ? 0 : cg.front()), " .. ",
                            fmt("%.2f", cg.empty() ? 0 : cg.back()), "); each row is compared with the copy of its n"));
    say("Best bandwidth ratio to copy (GB/s by minimum data movement / copy GB/s; 1.0 = copy speed):");
    std::vector<std::string> algos;
    for (const Row& r : rows_)
      if (r.algo.compare(0, 6, "stream") != 0 && std::find(algos.begin(), algos.end(), r.algo) == algos.end())
        algos.push_back(r.algo);
    for (const auto& al : algos) {
      const Row* best = nullptr;
      const Row* worst = nullptr;
      for (const Row& r : rows_)
        if (r.algo == al && r.status == "ok") {
          if (!best || r.bw_ratio > best->bw_ratio) best = &r;
          if (!worst || r.bw_ratio < worst->bw_ratio) worst = &r;
        }
      if (!best) {
        say(kband::impl::concat("  ", al, ": no successful row"));
        continue;
      }
      char name[64];
      std::snprintf(name, sizeof(name), "%-44s", al.c_str());
      say(kband::impl::concat("  ", name, " best ", fmt("%.3f", best->bw_ratio), " (",
                              best->layout, "/", best->variant, ", n=", best->n, ", t/copy ",
                              fmt("%.2f", best->time_ratio), ")   worst ", fmt("%.3f", worst->bw_ratio), " (",
                              worst->layout, "/", worst->variant, ", n=", worst->n, ")"));
    }
    const bool any_peer = std::any_of(rows_.begin(), rows_.end(), [](const Row& r) {
      return r.algo.compare(0, 8, "cusparse") == 0 || r.algo.compare(0, 2, "kk") == 0 ||
             r.algo.compare(0, 6, "cublas") == 0;
    });
    if (any_peer) {
      say("kband vs peers, same systems (time ratio < 1: kband faster; best kband variant, auto in parens if different):");
      compare("thomas", "contiguous", "cusparse-gtsv2StridedBatch", "contiguous");
      for (const char* al : {"thomas", "lu", "qr"})
        compare("thomas", "interleaved", std::string("cusparse-gtsvInterleavedBatch(") + al + ")", "interleaved");
      compare("thomas", "grouped", "cusparse-gtsvInterleavedBatch(thomas)", "interleaved");
      compare("shared", "grouped", "cusparse-gtsvInterleavedBatch-shared(thomas)", "interleaved");
      compare("shared", "interleaved", "cusparse-gtsvInterleavedBatch-shared(thomas)", "interleaved");
      for (const char* l : kAllLayouts) compare("thomas", l, "kk-pttrf+pttrs", l);
      compare("pcr", "contiguous", "cusparse-gtsv2StridedBatch", "contiguous");
      compare("pcr-shared", "contiguous", "cusparse-gtsv2StridedBatch-shared", "contiguous");
      compare("pcr", "interleaved", "cusparse-gtsvInterleavedBatch(thomas)", "interleaved");
    } else {
      say("kband vs peers: no peer in this build (cuSPARSE needs CUDA Kokkos; KK pttrf needs Kokkos Kernels >= 4.5)");
    }
    // the naive baseline vs kband shared on the contiguous layout (same data movement)
    {
      std::vector<double> rr;
      for (int n : o_.ns) {
        const Row* nv = find("naive-x", "field-LL", "-", n);
        const Row* k = find_best("shared", "grouped", n);
        if (nv && k) rr.push_back(k->ns_per_point / nv->ns_per_point);
      }
      if (!rr.empty()) {
        double lg = 0;
        for (double v : rr) lg += std::log(v);
        say(kband::impl::concat("  kband shared/grouped vs naive-x: time ratio geomean ",
                                fmt("%.2f", std::exp(lg / rr.size())), " over ", rr.size(), " sizes"));
      }
    }
    summary_pcr();
    summary_hybrid();
    summary_gtsv();
    summary_solve();
    summary_dense();
    say(failures_ ? kband::impl::concat("VERIFICATION: ", failures_, " row(s) FAILED")
                  : std::string("VERIFICATION: all rows passed"));
  }
};

}  // namespace kband_bench

int main(int argc, char** argv) {
  using namespace kband_bench;
  // `kband-bench SUITE [options]`: another suite than the tridiagonal one.
  if (argc > 1) {
    for (const Suite& s : suites()) {
      if (std::strcmp(argv[1], s.name) != 0) continue;
      std::vector<char*> kargs{argv[0]};
      for (int i = 2; i < argc; ++i)
        if (std::strncmp(argv[i], "--kokkos-", 9) == 0) kargs.push_back(argv[i]);
      int kargc = static_cast<int>(kargs.size());
      Kokkos::initialize(kargc, kargs.data());
      int rc = 0;
      try {
        rc = s.main(argc - 1, argv + 1);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "kband-bench %s: error: %s\n", s.name, e.what());
        rc = 2;
      }
      Kokkos::finalize();
      return rc;
    }
  }
  Options opt;
  try {
    if (!parse_args(argc, argv, opt)) {
      print_help(argv[0]);
      return 0;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kband-bench: %s\n", e.what());
    return 2;
  }
  // Kokkos sees only its own arguments.
  std::vector<char*> kargs{argv[0]};
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--kokkos-", 9) == 0) kargs.push_back(argv[i]);
  int kargc = static_cast<int>(kargs.size());
  Kokkos::initialize(kargc, kargs.data());
  int rc = 0;
  {
    Meta meta;
    Kokkos::Timer wall;
    try {
      meta.kv["exec_space"] = Exec::name();
      meta.kv["device"] = device_name();
      meta.kv["kokkos_version"] = std::to_string(KOKKOS_VERSION);
      meta.kv["kband_version"] =
          kband::impl::concat(KBAND_VERSION_MAJOR, ".", KBAND_VERSION_MINOR, ".", KBAND_VERSION_PATCH);
      meta.kv["precision"] = opt.precision;
      meta.kv["points"] = std::to_string(opt.points);
      meta.kv["reps"] = std::to_string(opt.reps);
      meta.kv["grouped_sz"] = std::to_string(kSZ);
      meta.kv["cusparse"] = KBAND_BENCH_CUSPARSE ? "yes" : "no";
      meta.kv["kokkos_kernels_pttrf"] = KBAND_BENCH_KK_PTTRF ? "yes" : "no";
      std::vector<Row> rows;
      std::vector<std::string> summary;
      if (opt.precision == "float") {
        Bench<float> b(opt, meta);
        rc = b.run();
        rows = b.rows();
        summary = b.summary();
      } else {
        Bench<double> b(opt, meta);
        rc = b.run();
        rows = b.rows();
        summary = b.summary();
      }
      meta.kv["wall_s"] = fmt("%.2f", wall.seconds());
      std::printf("wall time %.1f s\n", wall.seconds());
      if (!opt.json.empty() && opt.json != "none") {
        if (write_json(opt.json, meta, rows, summary)) std::printf("wrote %s\n", opt.json.c_str());
        else { std::fprintf(stderr, "kband-bench: cannot write %s\n", opt.json.c_str()); rc = rc ? rc : 2; }
      }
      if (!opt.csv.empty()) {
        if (write_csv(opt.csv, meta, rows)) std::printf("wrote %s\n", opt.csv.c_str());
        else { std::fprintf(stderr, "kband-bench: cannot write %s\n", opt.csv.c_str()); rc = rc ? rc : 2; }
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kband-bench: error: %s\n", e.what());
      rc = 2;
    }
  }
  Kokkos::finalize();
  return rc;
}
