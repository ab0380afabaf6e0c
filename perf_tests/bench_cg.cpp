// kband-bench cg suite (placeholder until the suite is written).
#include "bench_suites.hpp"

#include <cstdio>

namespace kband_bench {
int cg_main(int, char**) {
  std::printf("kband-bench cg: not built yet\n");
  return 0;
}
}  // namespace kband_bench
