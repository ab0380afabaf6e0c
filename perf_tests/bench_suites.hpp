// kband-bench suites. `kband-bench` alone runs the tridiagonal suite (the
// README's main job); `kband-bench SUITE [options]` runs another one. Each
// suite lives in its own source file, parses its own options (argv[0] is the
// suite name, `--kokkos-*` arguments are already consumed by Kokkos), runs
// with Kokkos initialised, and returns the process exit code.
#pragma once

namespace kband_bench {

int penta_main(int argc, char** argv);   // bench_penta.cpp: pentadiagonal solvers
int distd2_main(int argc, char** argv);  // bench_distd2.cpp: compact schemes, DistD2
int cg_main(int argc, char** argv);      // bench_cg.cpp: Conjugate Gradient over CDS
int transport_main(int argc, char** argv);  // bench_transport.cpp: 3D momentum transport RHS

struct Suite {
  const char* name;
  int (*main)(int, char**);
  const char* what;
};

inline const Suite* suites_begin() {
  static const Suite s[] = {{"penta", &penta_main, "batched pentadiagonal solvers vs peers"},
                            {"distd2", &distd2_main, "compact derivatives: DistD2 fused vs unfused"},
                            {"cg", &cg_main, "Conjugate Gradient over CDS and dense matrices"},
                            {"transport", &transport_main, "3D skew-symmetric momentum transport RHS"}};
  return s;
}
struct SuiteList {
  const Suite* begin() const { return suites_begin(); }
  const Suite* end() const { return suites_begin() + 4; }
};
inline SuiteList suites() { return {}; }

}  // namespace kband_bench
