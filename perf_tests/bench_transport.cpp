// kband-bench transport suite (placeholder until the suite is written).
#include "bench_suites.hpp"

#include <cstdio>

namespace kband_bench {
int transport_main(int, char**) {
  std::printf("kband-bench transport: not built yet\n");
  return 0;
}
}  // namespace kband_bench
