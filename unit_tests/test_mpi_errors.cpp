// Collective errors: every rank throws the same kband::Error, and the ranks
// can go on communicating afterwards (nothing deadlocks, nothing is left in flight).
#include "test_mpi_common.hpp"

namespace {

using namespace kband_test;
using kband::Direction;

/// Runs f on every rank; checks that every rank threw a kband::Error with the
/// same message containing `needle`, and that the ranks still communicate.
template <class F>
void expect_collective_error(const char* what, const std::string& needle, F&& f) {
  std::string msg;
  bool threw = false;
  try {
    f();
  } catch (const kband::Error& e) {
    threw = true;
    msg = e.what();
  }
  EXPECT_EQ(sum_all(threw ? 1 : 0), world_size()) << what << ": not every rank threw";
  EXPECT_NE(msg.find(needle), std::string::npos) << what << ": message '" << msg << "' lacks '" << needle << "'";
  // Same message everywhere: compare lengths and a checksum.
  long long h = 0;
  for (char ch : msg) h = h * 131 + static_cast<unsigned char>(ch);
  long long lo = 0, hi = 0;
  MPI_Allreduce(&h, &lo, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&h, &hi, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(lo, hi) << what << ": the ranks threw different messages (this rank: " << msg << ")";
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(MPIErrors, RequireAllAndCollective) {
  const int r = world_rank(), p = world_size();
  expect_collective_error("require_all", "bad on rank", [&] {
    kband::mpi::require_all(MPI_COMM_WORLD, r != p - 1, kband::impl::concat("bad on rank ", r));
  });
  expect_collective_error("collective", "kband::thomas", [&] {
    kband::mpi::collective(MPI_COMM_WORLD, [&] {
      if (r == 0) throw kband::Error("kband::thomas: argument 'x' wrong");
    });
  });
  EXPECT_NO_THROW(kband::mpi::require_all(MPI_COMM_WORLD, true, "never"));
}

TEST(MPIErrors, GridDoesNotDivide) {
  const int p = world_size();
  // A fixed dimension that does not divide the rank count (p + 1 never does for p > 1; p = 1: 2 ranks declared).
  expect_collective_error("dims", "do not divide", [&] { kband::mpi::CartGrid g(MPI_COMM_WORLD, {p + 1, 0, 0}); });
  // dims that differ across ranks
  if (p > 1) {
    expect_collective_error("dims differ", "differs across ranks", [&] {
      kband::mpi::CartGrid g(MPI_COMM_WORLD, {world_rank() == 0 ? p : 0, 1, 1});
    });
  }
  kband::mpi::CartGrid grid(MPI_COMM_WORLD, {0, 1, 1});
  // Local blocks that do not sum to the declared global extent.
  expect_collective_error("blocks vs global", "not to the global extent", [&] {
    kband::mpi::Decomposition::from_local(grid, {10 * p + 1, 4, 4}, {10, 4, 4});
  });
  // Fewer planes than ranks.
  if (p > 1) {
    expect_collective_error("too few planes", "each block needs >= 1 plane",
                            [&] { kband::mpi::Decomposition::balanced(grid, {p - 1, 4, 4}); });
  }
  // Ranks of one plane (all ranks of a 1D-x grid share the y plane) stating different y extents.
  if (p > 1) {
    expect_collective_error("plane disagreement", "different local extents", [&] {
      kband::mpi::Decomposition::from_local(grid, {10 * p, 4, 4}, {10, world_rank() == 1 ? 5 : 4, 4});
    });
  }
}

TEST(MPIErrors, HaloArguments) {
  kband::mpi::CartGrid grid(MPI_COMM_WORLD, {0, 1, 1});
  const int r = world_rank();
  expect_collective_error("depth 5", "must be in 1..4", [&] {
    kband::mpi::HaloExchange<double, kSZ> hx(grid, Direction::X, 5, 10, 20);
  });
  expect_collective_error("short line", "at most the local line length", [&] {
    kband::mpi::HaloExchange<double, kSZ> hx(grid, Direction::X, 3, 10, r == 0 ? 2 : 20);
  });
#if !defined(KOKKOS_ENABLE_CUDA)
  kband::mpi::CommConfig ipc;
  ipc.path = kband::mpi::BufferPath::CudaIPC;
  expect_collective_error("CUDA IPC without CUDA", "needs a CUDA build", [&] {
    kband::mpi::HaloExchange<double, kSZ> hx(grid, Direction::X, 2, 10, 20, ipc);
  });
#endif
  if (world_size() > 1) {
    expect_collective_error("depth differs", "differs across ranks", [&] {
      kband::mpi::HaloExchange<double, kSZ> hx(grid, Direction::X, r == 0 ? 2 : 3, 10, 20);
    });
    expect_collective_error("nsys differs", "differs between the ranks of one line", [&] {
      kband::mpi::HaloExchange<double, kSZ> hx(grid, Direction::X, 2, r == 0 ? 10 : 11, 20);
    });
  }
}

}  // namespace
