// Shared main of the kband unit tests: Kokkos is initialised exactly once
// around all GoogleTest suites.
#include "kband_test_common.hpp"

#include <cstdio>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  Kokkos::initialize(argc, argv);
  int rc = 0;
  {
    std::printf("kband unit tests: Kokkos %d, execution space %s, default SZ %d (second SZ %d)\n",
                KOKKOS_VERSION, Kokkos::DefaultExecutionSpace::name(), kband_test::kSZ, kband_test::kOtherSZ);
    rc = RUN_ALL_TESTS();
    const auto& st = kband_test::stats();
    if (st.solves > 0) {
      std::printf("kband unit tests: %ld checked solves; max relative error per type/family/solver:\n", st.solves);
      for (const auto& kv : st.max_err) std::printf("  %-36s %.3e\n", kv.first.c_str(), kv.second);
      std::printf("  (bounds: double %.0e / %.0e, float %.0e / %.0e for dominant / general)\n",
                  kband_test::Tol<double>::dominant, kband_test::Tol<double>::general,
                  kband_test::Tol<float>::dominant, kband_test::Tol<float>::general);
    }
    if (st.scratch_refusals > 0)
      std::printf("kband unit tests: Variant::Scratch refused %ld times (team scratch too small), e.g.\n  %s\n",
                  st.scratch_refusals, st.first_scratch_refusal.c_str());
    std::printf("kband unit tests: Variant::Registers checked %ld solves, refused %ld%s%s\n", st.register_solves,
                st.register_refusals, st.register_refusals > 0 ? ", e.g.\n  " : "",
                st.first_register_refusal.c_str());
  }
  Kokkos::finalize();
  return rc;
}
