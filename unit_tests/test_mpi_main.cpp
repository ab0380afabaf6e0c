// main of the kband MPI tests (run under mpiexec -n 1..4): MPI and Kokkos are
// initialised once around all suites. Rank 0 prints GoogleTest's normal
// output; the other ranks print only their failures, prefixed by the rank.
// The exit code is non-zero on every rank when any rank failed.
#include "test_mpi_common.hpp"

#include <cstdio>

namespace {
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      std::printf("[rank %d] %s:%d: failure\n%s\n", rank_, r.file_name() ? r.file_name() : "?", r.line_number(),
                  r.summary());
  }

 private:
  int rank_;
};
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ::testing::InitGoogleTest(&argc, argv);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  Kokkos::initialize(argc, argv);
  int rc = 0;
  {
    if (rank == 0)
      std::printf("kband MPI tests: %d ranks, Kokkos %d, execution space %s, SZ %d, GPU-aware default %d\n", size,
                  KOKKOS_VERSION, Kokkos::DefaultExecutionSpace::name(), kband_test::kSZ,
                  kband::mpi::gpu_aware_default() ? 1 : 0);
    rc = RUN_ALL_TESTS();
  }
  Kokkos::finalize();
  int any = 0;
  MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any ? 1 : 0;
}
