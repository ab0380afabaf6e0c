// kband-bench distd2 suite (placeholder until the suite is written).
#include "bench_suites.hpp"

#include <cstdio>

namespace kband_bench {
int distd2_main(int, char**) {
  std::printf("kband-bench distd2: not built yet\n");
  return 0;
}
}  // namespace kband_bench
