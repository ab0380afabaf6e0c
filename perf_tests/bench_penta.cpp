// kband-bench penta suite (placeholder until the suite is written).
#include "bench_suites.hpp"

#include <cstdio>

namespace kband_bench {
int penta_main(int, char**) {
  std::printf("kband-bench penta: not built yet\n");
  return 0;
}
}  // namespace kband_bench
