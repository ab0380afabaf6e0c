// kband-bench distd2: the sixth-order compact first derivative along the
// lines of an SZ-grouped field (periodic), by
//   * DistD2 fused (kband::distd2 on a line of one subdomain: decoupling with
//     the RHS stencil in the forward pass, the subdomain's 2x2 system and the
//     substitution in one kernel, the decoupled rows in team scratch where
//     they fit (GPU, n <= 192 double / 384 float), in the output otherwise);
//   * DistD2 by phases (distd2_decouple, then distd2_couple: the two kernels
//     a rank runs around its MPI exchanges), each phase timed too;
//   * the one-message mode (distd2_decouple_interior writing the messages,
//     then distd2_couple_one_message: what a kband::mpi rank runs by
//     default), subdomain 0 with itself as neighbours, each kernel timed too;
//   * the unfused path (kband::compact_apply: RHS kernel, then the
//     shared-coefficient periodic Thomas),
// on the same field, against the STREAM copy of that field measured in the
// same run. Data movement per point, in field-sized transfers (seed 002,
// Table 3): fused 2 (read the input, write the output; 4 when the decoupled
// rows do not fit on chip), phases 4 (decoupling: read input, write d;
// substitution: read and write d; kband's substitution runs the backward
// sweep, so the paper's 6 standard transfers are 4 here), unfused 4 cached /
// 6 standard (RHS 2, Thomas 2 / 4). The "bw/copy" column uses the minimum.
// Targets (issue 5): the whole DistD2 derivative <= 2.5x the copy time,
// fused >= 1.3x faster than unfused, n = 64 .. 4096 with the device filled.
// --splits K > 1 times the phases over K subdomains through kband::distd2.
#include "bench_stream.hpp"
#include "bench_suites.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace kband_bench {
namespace {

struct Options {
  std::vector<int> ns;
  std::string precision = "double";
  std::int64_t points = 0;  // total points per field (0: 2^27 on devices, 2^21 on hosts)
  int reps = 0;             // 0: 20 on devices, 5 on hosts
  int splits = 1;
  bool quick = false;
  std::string json = "kband-bench-distd2.json";
};

void usage() {
  std::printf(
      "usage: kband-bench distd2 [options]\n"
      "  sixth-order compact first derivative (periodic) along SZ-grouped lines:\n"
      "  DistD2 fused (decouple+couple+substitute) vs unfused (RHS kernel + shared periodic Thomas),\n"
      "  against the STREAM copy of the same field.\n"
      "  --n LIST            line lengths (default 64,128,256,512,1024,2048,4096)\n"
      "  --points N          points per field (default 2^27 on a GPU, 2^21 on a host)\n"
      "  --precision P       double (default) or float\n"
      "  --reps R            timed repetitions (default 20 GPU, 5 host)\n"
      "  --splits K          subdomains per line for DistD2 (default 1; each needs distd2_min_rows rows)\n"
      "  --quick             smoke run: n = 64,256, 2^16 points, 3 reps\n"
      "  --json FILE         results file (default kband-bench-distd2.json; 'none' = off)\n"
      "  --help              this text\n");
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&](const char* what) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "kband-bench distd2: %s needs a value\n", what);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      usage();
      std::exit(0);
    } else if (a == "--n") {
      std::stringstream ss(next("--n"));
      std::string t;
      while (std::getline(ss, t, ',')) o.ns.push_back(std::atoi(t.c_str()));
    } else if (a == "--points") {
      o.points = std::atoll(next("--points").c_str());
    } else if (a == "--precision") {
      o.precision = next("--precision");
    } else if (a == "--reps") {
      o.reps = std::atoi(next("--reps").c_str());
    } else if (a == "--splits") {
      o.splits = std::atoi(next("--splits").c_str());
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--json") {
      o.json = next("--json");
    } else {
      std::fprintf(stderr, "kband-bench distd2: unknown option '%s'\n", a.c_str());
      usage();
      return false;
    }
  }
  if (o.precision != "double" && o.precision != "float") {
    std::fprintf(stderr, "kband-bench distd2: --precision must be double or float\n");
    return false;
  }
  if (o.ns.empty()) o.ns = o.quick ? std::vector<int>{64, 256} : std::vector<int>{64, 128, 256, 512, 1024, 2048, 4096};
  if (o.points <= 0) o.points = o.quick ? (1 << 16) : (kDevice ? (std::int64_t(1) << 27) : (std::int64_t(1) << 21));
  if (o.reps <= 0) o.reps = o.quick ? 3 : (kDevice ? 20 : 5);
  for (int n : o.ns)
    if (n < 5 || n / std::max(o.splits, 1) < 3) {
      std::fprintf(stderr, "kband-bench distd2: n=%d too small for %d subdomains\n", n, o.splits);
      return false;
    }
  return o.splits >= 1;
}

constexpr double kTwoPi = 6.283185307179586;

/// Point k (memory order) of a grouped field: group, row, lane, system.
struct Point {
  int g, j, l, s;
  KOKKOS_INLINE_FUNCTION Point(std::int64_t k, int n)
      : g(static_cast<int>(k / (std::int64_t(kSZ) * n))),
        j(static_cast<int>((k / kSZ) % n)),
        l(static_cast<int>(k % kSZ)),
        s(g * kSZ + l) {}
};

/// in(s, j) = sin(2 pi j / n + 0.001 s) (one period per line); padding: 0.
/// Poison (fill = false): every slot NaN.
template <class T>
struct FillK {
  typename kband::GroupedBatch<T, kSZ, Mem>::view_type v;
  int n, nsys;
  bool fill;
  T nan;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    const Point p(k, n);
    v(p.g, p.j, p.l) = !fill ? nan : (p.s < nsys ? static_cast<T>(sin_(kTwoPi * p.j / n + 0.001 * p.s)) : T(0));
  }
};

/// Max over real systems of |x - y| (what = 0), |x - exact derivative| (1),
/// |exact derivative| (2); a NaN makes the maximum NaN (and the check fail).
template <class T>
struct CheckK {
  typename kband::GroupedBatch<T, kSZ, Mem>::view_type x, y;
  int n, nsys, what;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k, double& m) const {
    const Point p(k, n);
    if (p.s >= nsys) return;
    const double ex = kTwoPi * cos_(kTwoPi * p.j / n + 0.001 * p.s);
    double v = what == 0 ? double(x(p.g, p.j, p.l)) - double(y(p.g, p.j, p.l))
                         : (what == 1 ? double(x(p.g, p.j, p.l)) - ex : ex);
    v = v < 0 ? -v : v;
    m = (v > m || v != v) ? v : m;
  }
};

template <class T>
double check(const Exec& exec, const kband::GroupedBatch<T, kSZ, Mem>& x, const kband::GroupedBatch<T, kSZ, Mem>& y,
             int what) {
  double m = 0;
  const std::int64_t flat = static_cast<std::int64_t>(x.ngroups()) * x.n() * kSZ;
  Kokkos::parallel_reduce("kband_bench::distd2_check", Policy(exec, 0, flat),
                          CheckK<T>{x.view(), y.view(), x.n(), x.nsys(), what}, Kokkos::Max<double>(m));
  return m;
}

template <class T>
int run(const Options& o) {
  Exec exec;
  const char* prec = o.precision.c_str();
  std::vector<Row> rows;
  std::vector<std::string> summary;
  bool ok_all = true;
  auto say = [&](const std::string& s) {
    std::printf("%s\n", s.c_str());
    summary.push_back(s);
  };
  std::printf("kband-bench distd2: %s, device %s, SZ=%d, %lld points per field, %d reps, %d subdomain(s)\n",
              Exec::name(), device_name().c_str(), kSZ, static_cast<long long>(o.points), o.reps, o.splits);
  print_table_header();
  const double tol_pair = sizeof(T) == 8 ? 1e-10 : 2e-3;  // fused vs unfused (relative to max |f'|)
  const double tol_exact = sizeof(T) == 8 ? 1e-5 : 2e-3;  // vs the analytic derivative (n >= 64: <= 1.3e-7)
  for (int n : o.ns) {
    const int nsys = static_cast<int>(std::max<std::int64_t>(kSZ, (o.points / n) / kSZ * kSZ));
    using GB = kband::GroupedBatch<T, kSZ, Mem>;
    GB in("in", nsys, n), out("out", nsys, n), ref("ref", nsys, n), rhs("rhs", nsys, n);
    const std::int64_t flat = static_cast<std::int64_t>(in.ngroups()) * n * kSZ;
    const T nan = std::numeric_limits<T>::quiet_NaN();
    Kokkos::parallel_for("kband_bench::distd2_fill", Policy(exec, 0, flat), FillK<T>{in.view(), n, nsys, true, nan});
    const CopyReference copy = measure_copy<T>(exec, flat, o.reps);
    const kband::CompactScheme op = kband::CompactScheme::first_derivative(1.0 / n);
    const kband::DistD2Line<T, Mem> line = kband::DistD2Line<T, Mem>::split(exec, op, n, o.splits);
    const kband::DistD2Workspace<T, kSZ, Mem> ws(nsys, line.subdomains());
    const auto factor = kband::compact_factor<T, Mem>(exec, op, n);
    Kokkos::View<int*, Mem> info("info", nsys);
    auto base_row = [&](const char* algo, double elems) {
      Row r;
      r.algo = algo;
      r.layout = "grouped";
      r.variant = "-";
      r.precision = prec;
      r.n = n;
      r.nsys = nsys;
      r.points = static_cast<long long>(nsys) * n;
      r.reps = o.reps;
      r.elems_per_point = elems;
      r.elem_bytes = sizeof(T);
      return r;
    };
    Row rc = base_row("copy", 2);
    finish_row(rc, copy.t, copy);
    rc.status = "ok";
    print_row(rc);
    rows.push_back(rc);
    auto poison = [&](const GB& b) {  // every slot of b (its own extents)
      const std::int64_t bflat = static_cast<std::int64_t>(b.ngroups()) * b.n() * kSZ;
      Kokkos::parallel_for("kband_bench::poison", Policy(exec, 0, bflat), FillK<T>{b.view(), b.n(), nsys, false, nan});
    };
    // fused DistD2 (one subdomain: one kernel; K > 1: the phases per subdomain)
    poison(out);
    const Stats tf = time_fenced(1, o.reps, [&] { kband::distd2(exec, line, in, out, ws); });
    Row rf = base_row(line.subdomains() == 1 ? "distd2-fused" : "distd2-split", line.subdomains() == 1 ? 2 : 4);
    finish_row(rf, tf, copy);
    rf.note = line.subdomains() == 1 ? "one kernel" : kband::impl::concat(line.subdomains(), " subdomains");
    // unfused: RHS kernel + shared periodic Thomas
    poison(ref);
    const Stats tu = time_fenced(1, o.reps, [&] { kband::compact_apply(exec, op, factor, in, rhs, ref, info); });
    Row ru = base_row("unfused-rhs+thomas", 4);
    finish_row(ru, tu, copy);
    ru.note = "standard data movement 6";
    // verification of both (after timing, outputs poisoned before)
    const double dxy = check(exec, out, ref, 0), dex = check(exec, out, out, 1), uex = check(exec, ref, ref, 1);
    const double mex = check(exec, out, out, 2);
    const bool okf = dxy <= tol_pair * mex && dex <= tol_exact * mex;
    const bool oku = uex <= tol_exact * mex;
    rf.residual = dex / mex;
    ru.residual = uex / mex;
    rf.status = okf ? "ok" : "FAIL";
    ru.status = oku ? "ok" : "FAIL";
    rf.note += kband::impl::concat("; vs unfused ", fmt("%.1e", dxy / mex), ", vs exact ", fmt("%.1e", dex / mex));
    ok_all = ok_all && okf && oku;
    print_row(rf);
    print_row(ru);
    rows.push_back(rf);
    rows.push_back(ru);
    // the phases of subdomain 0 as a rank runs them (K = 1: the periodic
    // line coupled to itself), each alone and together; verified as well
    Row rp;
    {
      const auto& p = line.plan(0);
      const int n0 = p.n();
      GB part_in = in, part_out = out;
      if (line.subdomains() > 1) {  // a rank's own batches
        part_in = GB("in0", nsys, n0);
        part_out = GB("out0", nsys, n0);
        kband::distd2_copy_rows(exec, in, 0, part_in, 0, n0);
      }
      kband::distd2_copy_rows(exec, in, n - 2, ws.halo_lo[0], 0, 2);
      kband::distd2_copy_rows(exec, in, n0, ws.halo_hi[0], 0, 2);
      const auto& bnd = ws.bnd[0];
      const auto& cp = p.coupling();
      auto decouple = [&] { kband::distd2_decouple(exec, p, part_in, ws.halo_lo[0], ws.halo_hi[0], part_out, bnd); };
      auto couple = [&] { kband::distd2_couple(exec, p, bnd, bnd, cp, bnd, cp, part_out); };
      // a kernel pair as a rank runs it (timed together, verified against
      // the unfused result for one subdomain), then each kernel alone (the
      // second in place after a fresh first: timing only); per point of
      // subdomain 0
      auto pair_rows = [&](const char* name, const char* note, auto&& first, auto&& second, const char* name1,
                           const char* note1, const char* name2) {
        const Stats tt = time_fenced(1, o.reps, [&] {
          first();
          second();
        });
        Row rt = base_row(name, 4);
        rt.note = note;
        if (line.subdomains() == 1) {
          const double d2 = check(exec, part_out, ref, 0);
          rt.status = d2 <= tol_pair * mex ? "ok" : "FAIL";
          rt.note += kband::impl::concat("; vs unfused ", fmt("%.1e", d2 / mex));
          ok_all = ok_all && rt.status == "ok";
        } else {
          rt.status = "ok";
          rt.note += "; subdomain 0 with itself as neighbours: timing only";
        }
        const Stats t1 = time_fenced(1, o.reps, first);
        first();
        const Stats t2 = time_fenced(1, o.reps, second);
        Row r1 = base_row(name1, 2), r2 = base_row(name2, 2);
        r1.status = r2.status = "ok";
        r1.note = note1;
        r2.note = "phase alone";
        const Stats* st[] = {&tt, &t1, &t2};
        Row* rr[] = {&rt, &r1, &r2};
        for (int q = 0; q < 3; ++q) {
          rr[q]->points = static_cast<long long>(nsys) * n0;
          finish_row(*rr[q], *st[q], copy);
          print_row(*rr[q]);
          rows.push_back(*rr[q]);
        }
        return rt;
      };
      poison(part_out);
      rp = pair_rows("distd2-phases", "decouple + couple", decouple, couple, "distd2-decouple", "phase alone",
                     "distd2-couple+substitute");
      // the one-message mode (what a kband::mpi rank runs): the zero-halo
      // decoupling that writes the messages, then the kernel that adds the
      // halos' share, solves the 2x2 systems and substitutes. Neighbours:
      // this subdomain itself (K = 1: an interior plan of the periodic line,
      // verified against the unfused result).
      const kband::DistD2Plan<T, Mem> ip =
          line.subdomains() == 1 ? kband::DistD2Plan<T, Mem>(exec, op, n0, kband::DistD2Position::Interior) : p;
      if (n0 >= kband::kDistD2SplitMinRows && ip.far() <= std::numeric_limits<T>::epsilon()) {
        GB to_prev("to_prev", nsys, 3), to_next("to_next", nsys, 3);
        const auto& icp = ip.coupling();
        auto k1 = [&] { kband::distd2_decouple_interior(exec, ip, part_in, part_out, bnd, 0, &to_prev, &to_next); };
        auto k2 = [&] {
          kband::distd2_couple_one_message(exec, ip, part_in, bnd, to_next, icp, ip.last_edges(), to_prev, icp,
                                           ip.first_edges(), part_out);
        };
        poison(part_out);
        poison(to_prev);
        poison(to_next);
        pair_rows("distd2-one-message", "decouple_interior + couple_one_message", k1, k2, "distd2-decouple-interior",
                  "phase alone (writes the 3-row messages)", "distd2-couple-one-message");
      }
    }
    const double speedup = ru.t_med / rf.t_med;
    say(kband::impl::concat("n=", n, ": DistD2 ", rf.algo, " ", fmt("%.2f", rf.time_ratio), "x copy time, phases ",
                            fmt("%.2f", rp.time_ratio), "x (target <= 2.5: ",
                            rf.time_ratio <= 2.5 && rp.time_ratio <= 2.5 ? "met" : "NOT met", "); unfused ",
                            fmt("%.2f", ru.time_ratio), "x copy, unfused/fused ", fmt("%.2f", speedup),
                            ", unfused/phases ", fmt("%.2f", ru.t_med / rp.t_med), " (target >= 1.3: ",
                            speedup >= 1.3 ? "met" : "NOT met", ")"));
  }
  Meta meta;
  meta.kv["exec_space"] = Exec::name();
  meta.kv["device"] = device_name();
  meta.kv["kokkos_version"] = std::to_string(KOKKOS_VERSION);
  meta.kv["precision"] = o.precision;
  meta.kv["points"] = std::to_string(o.points);
  meta.kv["reps"] = std::to_string(o.reps);
  meta.kv["grouped_sz"] = std::to_string(kSZ);
  meta.kv["splits"] = std::to_string(o.splits);
  meta.kv["suite"] = "distd2";
  if (o.json != "none") {
    if (write_json(o.json, meta, rows, summary)) std::printf("results: %s\n", o.json.c_str());
    else std::fprintf(stderr, "kband-bench distd2: cannot write %s\n", o.json.c_str());
  }
  if (!ok_all) std::printf("VERIFICATION FAILED\n");
  return ok_all ? 0 : 1;
}

}  // namespace

int distd2_main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  return o.precision == "float" ? run<float>(o) : run<double>(o);
}

}  // namespace kband_bench
