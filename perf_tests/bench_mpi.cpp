// kband-bench-mpi: strong and weak scaling of the distributed compact
// derivative (kband::mpi::DistDerivative: halo exchange, DistD2 decoupling,
// boundary-row exchange, substitution) along x, y and z, with the
// communication time reported separately. Run under mpiexec, one rank per GPU
// (Kokkos maps ranks to devices) or one per CPU socket / core.
//
// Every figure is a ratio measured in the same run:
//  * the single-rank reference: rank 0 alone (a 1-rank periodic grid) on the
//    N^3 problem, while the other ranks wait;
//  * strong scaling: N^3 over P ranks, efficiency t1 / (P tP);
//  * weak scaling: N^3 per rank (global N * dims), efficiency t1 / tP;
//  * bandwidth: 2 elements per point (read the input, write the result: the
//    minimum data movement) over the STREAM copy measured by every rank at
//    once on its own points.
// Times are the maximum over the ranks of each repetition (median reported);
// a repetition times --calls applies in a row (one fence at the end, the
// sustained time per call of a time loop) and, separately, a single call.
// After timing, every rank checks the residual of the tridiagonal systems
// (A y - rhs(f), with halos of f and y exchanged): outputs are poisoned with
// NaN before the warm-up; a failed check exits 1.
#include <kband_MPI.hpp>

#include "bench_report.hpp"
#include "bench_stream.hpp"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <sstream>

namespace kband_bench {
namespace {

using kband::Direction;

struct Options {
  std::vector<int> ns;
  std::string precision = "double";
  std::vector<Direction> dirs{Direction::X, Direction::Y, Direction::Z};
  bool strong = true, weak = true;
  std::string op = "first";
  std::string grid = "line";  // line: 1D along the direction; 3d: MPI_Dims_create
  std::string path = "auto";
  int reps = kDevice ? 10 : 5;
  int calls = kDevice ? 10 : 2;  // back-to-back calls per timed repetition
  int warmup = 2;
  std::string json = "kband-bench-mpi.json";
  bool quick = false;
};

void usage(const char* prog) {
  std::printf(
      "Usage: mpiexec -n P %s [options] [--kokkos-... Kokkos options]\n"
      "  --n LIST          global sizes N of the N^3 problems (strong: N^3 in all;\n"
      "                    weak: N^3 per rank). Default %s\n"
      "  --dirs LIST       of x, y, z (default x,y,z)\n"
      "  --mode M          strong, weak or both (default both)\n"
      "  --op OP           first, second, interpolation, staggered (default first)\n"
      "  --grid G          line (1D along the direction, default) or 3d\n"
      "  --path P          auto (KBAND_MPI_PATH if set, else by the GPU-aware setting:\n"
      "                    KBAND_MPI_GPU_AWARE, MPIX query),\n"
      "                    direct, staged (through host mirrors) or ipc (CUDA IPC\n"
      "                    device-to-device copies, MPI only for completion; ranks\n"
      "                    on one node)\n"
      "  --precision P     double (default) or float\n"
      "  --reps R          timed repetitions (default %d), --warmup W (default 2)\n"
      "  --calls C         back-to-back calls per repetition, one fence at the end\n"
      "                    (default %d): the sustained time per call, as a time\n"
      "                    loop sees it; single calls are timed and reported too\n"
      "  --json FILE       JSON output (default kband-bench-mpi.json; 'none' = off)\n"
      "  --quick           smoke run: N = 96, x only, 2 reps\n"
      "  --help            this text\n",
      prog, kDevice ? "512" : "128", kDevice ? 10 : 5, kDevice ? 10 : 2);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string t;
  while (std::getline(ss, t, ','))
    if (!t.empty()) out.push_back(t);
  return out;
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") return false;
    if (a.compare(0, 9, "--kokkos-") == 0) continue;
    if (a == "--n") {
      o.ns.clear();
      for (const auto& s : split(value())) o.ns.push_back(std::atoi(s.c_str()));
    } else if (a == "--dirs") {
      o.dirs.clear();
      for (const auto& s : split(value())) {
        if (s != "x" && s != "y" && s != "z") throw std::invalid_argument("--dirs takes x, y, z");
        o.dirs.push_back(s == "x" ? Direction::X : (s == "y" ? Direction::Y : Direction::Z));
      }
    } else if (a == "--mode") {
      const std::string m = value();
      if (m != "strong" && m != "weak" && m != "both") throw std::invalid_argument("--mode: strong, weak or both");
      o.strong = m != "weak";
      o.weak = m != "strong";
    } else if (a == "--op") {
      o.op = value();
      if (o.op != "first" && o.op != "second" && o.op != "interpolation" && o.op != "staggered")
        throw std::invalid_argument("--op: first, second, interpolation or staggered");
    } else if (a == "--grid") {
      o.grid = value();
      if (o.grid != "line" && o.grid != "3d") throw std::invalid_argument("--grid: line or 3d");
    } else if (a == "--path") {
      o.path = value();
      if (o.path != "auto" && o.path != "direct" && o.path != "staged" && o.path != "ipc")
        throw std::invalid_argument("--path: auto, direct, staged or ipc");
    } else if (a == "--precision") {
      o.precision = value();
      if (o.precision != "double" && o.precision != "float") throw std::invalid_argument("--precision: double or float");
    } else if (a == "--reps") {
      o.reps = std::atoi(value().c_str());
    } else if (a == "--calls") {
      o.calls = std::atoi(value().c_str());
    } else if (a == "--warmup") {
      o.warmup = std::atoi(value().c_str());
    } else if (a == "--json") {
      o.json = value();
    } else if (a == "--quick") {
      o.quick = true;
    } else {
      throw std::invalid_argument("unknown option " + a);
    }
  }
  if (o.quick) {
    if (o.ns.empty()) o.ns = {96};
    o.dirs = {Direction::X};
    o.reps = 2;
    o.calls = 2;
    o.warmup = 1;
  }
  if (o.ns.empty()) o.ns = {kDevice ? 512 : 128};
  if (o.reps < 1) throw std::invalid_argument("--reps must be >= 1");
  if (o.calls < 1) throw std::invalid_argument("--calls must be >= 1");
  return true;
}

kband::CompactScheme make_scheme(const std::string& op, int N) {
  const double h = 1.0 / N;
  if (op == "second") return kband::CompactScheme::second_derivative(h);
  if (op == "interpolation") return kband::CompactScheme::interpolation();
  if (op == "staggered") return kband::CompactScheme::staggered_derivative(h);
  return kband::CompactScheme::first_derivative(h);
}

const char* dname(Direction d) { return d == Direction::X ? "x" : (d == Direction::Y ? "y" : "z"); }

template <class T>
using Lines = kband::GroupedBatch<T, kSZ, Mem>;

/// in(s, j) = hash(seed, s, j) in [-1, 1); real slots only, padding zero.
template <class T>
struct FillLines {
  Lines<T> u;
  std::uint64_t seed;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    int s, j;
    if (!kband::impl::batch_traits<Lines<T>>::decode(u, static_cast<size_t>(k), s, j)) return;
    const std::uint64_t h = mix64(seed ^ mix64(static_cast<std::uint64_t>(s) * 65537u + static_cast<std::uint64_t>(j)));
    u(s, j) = static_cast<T>(static_cast<double>(h >> 11) * (2.0 / 9007199254740992.0) - 1.0);
  }
};

template <class T>
struct PoisonLines {
  Lines<T> u;
  T nan;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    int s, j;
    if (kband::impl::batch_traits<Lines<T>>::decode(u, static_cast<size_t>(k), s, j)) u(s, j) = nan;
  }
};

/// max |l y_{j-1} + y_j + u y_{j+1} - rhs_j(f)| (rhs_only: max |rhs_j|) over
/// all points (periodic interior rows), with halos of f (depth 2) and y (depth 1).
template <class T>
struct Residual {
  Lines<T> f, flo, fhi, y, ylo, yhi;
  double lower, upper, c[5];
  int n;
  bool rhs_only;
  KOKKOS_INLINE_FUNCTION double F(int s, int j) const {
    return j < 0 ? flo(s, j + 2) : (j >= n ? fhi(s, j - n) : f(s, j));
  }
  KOKKOS_INLINE_FUNCTION double Y(int s, int j) const {
    return j < 0 ? ylo(s, 0) : (j >= n ? yhi(s, 0) : y(s, j));
  }
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k, double& vmax) const {
    const int s = static_cast<int>(k / n), j = static_cast<int>(k % n);
    double rhs = 0;
    for (int q = 0; q < 5; ++q) rhs += c[q] * F(s, j - 2 + q);
    double r = rhs_only ? rhs : lower * Y(s, j - 1) + Y(s, j) + upper * Y(s, j + 1) - rhs;
    r = r < 0 ? -r : r;
    if (!(r == r)) r = 1e300;
    vmax = r > vmax ? r : vmax;
  }
};

double max_over_ranks(double v, MPI_Comm comm) {
  double r = 0;
  MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, comm);
  return r;
}

struct Measured {
  Stats total;                                           // seconds per call, calls in a row
  Stats single;                                          // seconds of one call alone
  Stats halo, decouple, boundary, substitute, comm;      // fenced phases
  CopyReference copy;                                    // slowest rank's copy
  double residual = 0;
  bool ok = true;
  std::string msg;
  std::string path;  // direct, staged or cuda-ipc
  long long local_points = 0;
  int n_local = 0, nsys = 0;
};

/// Times the distributed derivative of the lines of the block `local` of a
/// `global` domain on `grid` (collective on grid.comm()).
template <class T>
Measured measure(const Options& o, const kband::mpi::CartGrid& grid, Direction dir, std::array<int, 3> global) {
  Measured m;
  MPI_Comm comm = grid.comm();
  const auto dec = kband::mpi::Decomposition::balanced(grid, global);
  std::array<int, 3> local;
  for (int d = 0; d < 3; ++d) local[d] = dec.count(static_cast<Direction>(d), grid.coord(static_cast<Direction>(d)));
  const int di = static_cast<int>(dir);
  m.n_local = local[di];
  m.nsys = local[(di + 1) % 3] * local[(di + 2) % 3];
  m.local_points = static_cast<long long>(m.n_local) * m.nsys;
  kband::mpi::CommConfig cfg;
  if (o.path != "auto")  // auto: CommConfig's default (KBAND_MPI_PATH, else by KBAND_MPI_GPU_AWARE)
    cfg.path = o.path == "direct" ? kband::mpi::BufferPath::Direct
                                  : (o.path == "staged" ? kband::mpi::BufferPath::Staged : kband::mpi::BufferPath::CudaIPC);
  Exec exec;
  const auto scheme = make_scheme(o.op, global[di]);
  kband::mpi::DistDerivative<T, kSZ, Mem> op(exec, grid, dir, scheme, m.nsys, m.n_local, cfg);
  m.path = cfg.path == kband::mpi::BufferPath::CudaIPC ? "cuda-ipc" : kband::mpi::path_name(op.direct());
  Lines<T> in("kband_bench::in", m.nsys, m.n_local), out("kband_bench::out", m.nsys, m.n_local);
  const std::int64_t flat = static_cast<std::int64_t>(in.ngroups()) * m.n_local * kSZ;
  Kokkos::parallel_for("kband_bench::fill", Policy(exec, 0, flat),
                       FillLines<T>{in, 0x1234u + static_cast<std::uint64_t>(grid.rank())});
  Kokkos::parallel_for("kband_bench::poison", Policy(exec, 0, flat), PoisonLines<T>{out, std::numeric_limits<T>::quiet_NaN()});
  exec.fence();
  // One sample: `calls` applies in a row, one fence at the end, seconds per
  // call; the slowest rank counts. A lone call also pays the launch latency
  // and the ranks' skew leaving the barrier; calls in a row (a time loop)
  // overlap the next call's launch with this one's kernels.
  auto timed = [&](int calls) {
    std::vector<double> t;
    for (int r = 0; r < o.warmup + o.reps; ++r) {
      exec.fence();
      MPI_Barrier(comm);
      Kokkos::Timer timer;
      for (int c = 0; c < calls; ++c) op.apply(exec, in, out);
      exec.fence();
      const double dt = max_over_ranks(timer.seconds(), comm) / calls;
      if (r >= o.warmup) t.push_back(dt);
    }
    return stats_of(t);
  };
  m.total = timed(o.calls);
  m.single = o.calls == 1 ? m.total : timed(1);
  {  // phases, fenced one by one (each maximum over the ranks)
    std::vector<double> th, td, tb, ts, tc;
    for (int r = 0; r < o.warmup + o.reps; ++r) {
      exec.fence();
      MPI_Barrier(comm);
      kband::mpi::PhaseTimes pt;
      op.apply(exec, in, out, &pt);
      const double v[5] = {pt.halo, pt.decouple, pt.boundary, pt.substitute, pt.halo + pt.boundary};
      double w[5];
      MPI_Allreduce(v, w, 5, MPI_DOUBLE, MPI_MAX, comm);
      if (r < o.warmup) continue;
      th.push_back(w[0]), td.push_back(w[1]), tb.push_back(w[2]), ts.push_back(w[3]), tc.push_back(w[4]);
    }
    m.halo = stats_of(th), m.decouple = stats_of(td), m.boundary = stats_of(tb), m.substitute = stats_of(ts);
    m.comm = stats_of(tc);
  }
  {  // the copy reference, every rank at once on its own points; the slowest rank counts
    MPI_Barrier(comm);
    CopyReference c = measure_copy<T>(exec, std::max<long long>(m.local_points, 1), o.reps);
    c.ns_per_point = max_over_ranks(c.ns_per_point, comm);
    c.gbs = 2.0 * sizeof(T) / c.ns_per_point;
    m.copy = c;
  }
  // Verification: residual of every system with halos of f and y.
  {
    kband::mpi::HaloExchange<T, kSZ, Mem> hf(grid, dir, 2, m.nsys, m.n_local, cfg), hy(grid, dir, 1, m.nsys, m.n_local, cfg);
    Lines<T> flo = hf.make_halo("flo"), fhi = hf.make_halo("fhi"), ylo = hy.make_halo("ylo"), yhi = hy.make_halo("yhi");
    hf.exchange(exec, in, flo, fhi);
    hy.exchange(exec, out, ylo, yhi);
    const kband::CompactRow row = scheme.row(2, 8);
    Residual<T> R{in, flo, fhi, out, ylo, yhi, row.lower, row.upper, {0, 0, 0, 0, 0}, m.n_local, false};
    for (int q = 0; q < 5; ++q) R.c[q] = static_cast<double>(static_cast<T>(row.coef[q]));
    double rmax = 0, dmax = 0;
    Kokkos::parallel_reduce("kband_bench::residual", Policy(exec, 0, m.local_points), R, Kokkos::Max<double>(rmax));
    R.rhs_only = true;
    Kokkos::parallel_reduce("kband_bench::max_rhs", Policy(exec, 0, m.local_points), R, Kokkos::Max<double>(dmax));
    rmax = max_over_ranks(rmax, comm);
    dmax = max_over_ranks(dmax, comm);
    m.residual = rmax / (dmax > 0 ? dmax : 1.0);
    const double tol = 1000.0 * static_cast<double>(std::numeric_limits<T>::epsilon());
    m.ok = m.residual <= tol;
    if (!m.ok) m.msg = kband::impl::concat("relative residual ", m.residual, " > tolerance ", tol);
  }
  return m;
}

Row make_row(const Options& o, const std::string& algo, const Measured& m, int N) {
  Row r;
  r.algo = algo;
  r.layout = "grouped";
  r.variant = m.path;
  r.precision = o.precision;
  r.n = m.n_local;
  r.nsys = m.nsys;
  r.points = m.local_points;
  r.reps = o.reps;
  r.elems_per_point = 2;
  r.elem_bytes = o.precision == "float" ? 4 : 8;
  finish_row(r, m.total, m.copy);
  r.residual = m.residual;
  r.status = m.ok ? "ok" : "FAIL";
  r.note = kband::impl::concat("N=", N, " single call ", fmt("%.4g", m.single.med * 1e3), " ms; comm ",
                               fmt("%.3g", m.comm.med * 1e3), " ms (halo ", fmt("%.3g", m.halo.med * 1e3), ", boundary ", fmt("%.3g", m.boundary.med * 1e3),
                               "), decouple ", fmt("%.3g", m.decouple.med * 1e3), " ms, substitute ",
                               fmt("%.3g", m.substitute.med * 1e3), " ms");
  if (!m.ok) r.note += "; " + m.msg;
  return r;
}

template <class T>
int run(const Options& o, Meta& meta, std::vector<Row>& rows, std::vector<std::string>& summary) {
  int rank = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm solo = MPI_COMM_NULL;  // rank 0 alone: the single-rank reference
  MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &solo);
  int failed = 0;
  if (rank == 0) print_table_header();
  for (int N : o.ns)
    for (Direction dir : o.dirs) {
      Measured one;
      bool one_ok = false;
      std::string one_err;
      if (rank == 0) {
        try {
          kband::mpi::CartGrid g1(solo, {1, 1, 1});
          one = measure<T>(o, g1, dir, {N, N, N});
          one_ok = true;
          Row r = make_row(o, kband::impl::concat("distd2-", dname(dir), "-1rank"), one, N);
          failed += !one.ok;
          print_row(r);
          rows.push_back(r);
        } catch (const kband::Error& e) {
          one_err = e.what();
        }
      }
      MPI_Bcast(&one_ok, 1, MPI_C_BOOL, 0, MPI_COMM_WORLD);
      if (!one_ok) {
        if (rank == 0) std::printf("distd2-%s-1rank N=%d: n/a (%s)\n", dname(dir), N, one_err.c_str());
        continue;
      }
      double t1s[2] = {one.total.med, one.single.med};
      MPI_Bcast(t1s, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      const double t1 = t1s[0], t1_single = t1s[1];
      for (int mode = 0; mode < 2; ++mode) {
        if ((mode == 0 && !o.strong) || (mode == 1 && !o.weak)) continue;
        const char* mname = mode == 0 ? "strong" : "weak";
        const std::string algo = kband::impl::concat("distd2-", dname(dir), "-", mname);
        try {
          std::array<int, 3> dims = {1, 1, 1};
          if (o.grid == "3d") dims = {0, 0, 0};
          else dims[static_cast<int>(dir)] = 0;
          kband::mpi::CartGrid grid(MPI_COMM_WORLD, dims);
          std::array<int, 3> global = {N, N, N};
          if (mode == 1)
            for (int d = 0; d < 3; ++d) global[d] *= grid.dims(static_cast<Direction>(d));
          const Measured m = measure<T>(o, grid, dir, global);
          const double eff = mode == 0 ? t1 / (P * m.total.med) : t1 / m.total.med;
          const double eff_single = mode == 0 ? t1_single / (P * m.single.med) : t1_single / m.single.med;
          failed += !m.ok;
          if (rank == 0) {
            Row r = make_row(o, algo, m, N);
            r.note += kband::impl::concat("; ", P, " ranks (", grid.dims(Direction::X), "x", grid.dims(Direction::Y), "x",
                                          grid.dims(Direction::Z), "), efficiency ", fmt("%.1f", 100 * eff), "%");
            print_row(r);
            rows.push_back(r);
            summary.push_back(kband::impl::concat(mname, " ", dname(dir), " N=", N, " P=", P, ": efficiency ",
                                                  fmt("%.1f", 100 * eff), "% (t1 ", fmt("%.4g", t1 * 1e3), " ms, tP ",
                                                  fmt("%.4g", m.total.med * 1e3), " ms, comm ",
                                                  fmt("%.4g", m.comm.med * 1e3), " ms, ",
                                                  m.path, ", ", o.calls, " calls in a row; single calls ",
                                                  fmt("%.1f", 100 * eff_single), "%: t1 ",
                                                  fmt("%.4g", t1_single * 1e3), " ms, tP ",
                                                  fmt("%.4g", m.single.med * 1e3), " ms)"));
          }
        } catch (const kband::Error& e) {  // collective: every rank lands here
          if (rank == 0) std::printf("%-34s N=%d: n/a (%s)\n", algo.c_str(), N, e.what());
        }
      }
    }
  if (solo != MPI_COMM_NULL) MPI_Comm_free(&solo);
  meta.kv["op"] = o.op;
  meta.kv["grid"] = o.grid;
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any;
}

}  // namespace
}  // namespace kband_bench

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Kokkos::initialize(argc, argv);
  int rc = 0;
  {
    using namespace kband_bench;
    int rank = 0, P = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    Options o;
    bool go = true;
    try {
      go = parse(argc, argv, o);
    } catch (const std::exception& e) {
      if (rank == 0) std::fprintf(stderr, "kband-bench-mpi: %s\n", e.what());
      rc = 2;
      go = false;
    }
    if (!go && rc == 0 && rank == 0) usage(argv[0]);
    if (go) {
      // Which device each rank uses (one rank per GPU expected).
      const std::string dev = device_name();
      std::string devs = dev;
#if defined(KOKKOS_ENABLE_CUDA)
      int id = -1;
      cudaGetDevice(&id);
      int ids[1024] = {0};
      MPI_Gather(&id, 1, MPI_INT, ids, 1, MPI_INT, 0, MPI_COMM_WORLD);
      if (rank == 0) {
        devs += " ; device ids per rank:";
        for (int r = 0; r < P && r < 1024; ++r) devs += " " + std::to_string(ids[r]);
      }
#endif
      Meta meta;
      meta.kv["exec_space"] = Exec::name();
      meta.kv["device"] = devs;
      meta.kv["ranks"] = std::to_string(P);
      meta.kv["gpu_aware_mpi"] = kband::mpi::gpu_aware_default() ? "yes" : "no";
      meta.kv["buffer_path"] = o.path;
      meta.kv["kokkos_version"] = std::to_string(KOKKOS_VERSION);
      meta.kv["sz"] = std::to_string(kSZ);
      if (rank == 0)
        std::printf("kband-bench-mpi: %d ranks, %s on %s, GPU-aware MPI: %s, path %s, op %s, grid %s\n", P,
                    Exec::name(), devs.c_str(), meta.kv["gpu_aware_mpi"].c_str(), o.path.c_str(), o.op.c_str(),
                    o.grid.c_str());
      std::vector<Row> rows;
      std::vector<std::string> summary;
      rc = o.precision == "float" ? run<float>(o, meta, rows, summary) : run<double>(o, meta, rows, summary);
      if (rank == 0) {
        for (const auto& s : summary) std::printf("  %s\n", s.c_str());
        if (o.json != "none" && !write_json(o.json, meta, rows, summary))
          std::fprintf(stderr, "kband-bench-mpi: cannot write %s\n", o.json.c_str());
        std::printf("%s\n", rc ? "FAILED verification" : "verification passed");
      }
    }
  }
  Kokkos::finalize();
  MPI_Finalize();
  return rc;
}
