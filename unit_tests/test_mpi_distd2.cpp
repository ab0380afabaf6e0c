// Distributed compact derivatives (kband::mpi::DistDerivative on DistD2)
// against single-process periodic Thomas on the gathered global field: every
// direction and operator, 1D grids along the direction and a 3D grid, unequal
// blocks, both buffer paths; the closed (non-periodic) first and second
// derivatives against non-periodic Thomas; the collective errors of the plan.
#include "test_mpi_common.hpp"

namespace {

using namespace kband_test;
using kband::Direction;
using Field = kband::mpi::DistField<double>;
using Lines = kband::GroupedBatch<double, kSZ>;

// Relative bound on max |distributed - reference| / max |reference|. DistD2
// drops couplings below eps (every block has >= 41 rows here, the first
// derivative needs 40) and differs from Thomas only in rounding; observed
// maxima (Serial, 1-4 ranks): 1D grids 3.1e-15, 3D grid 4.2e-15, exact
// reduced solve on 12-14 rows per rank 5.7e-15. The bound:
constexpr double kTol = 1e-12;

double input_value(int I, int J, int K) {
  const std::uint64_t h = mix_seed({static_cast<std::uint64_t>(I), static_cast<std::uint64_t>(J),
                                    static_cast<std::uint64_t>(K), 77});
  return static_cast<double>(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

std::vector<std::pair<std::string, kband::CompactScheme>> schemes(double h) {
  return {{"first", kband::CompactScheme::first_derivative(h)},
          {"second", kband::CompactScheme::second_derivative(h)},
          {"interpolation", kband::CompactScheme::interpolation()},
          {"staggered", kband::CompactScheme::staggered_derivative(h)},
          {"first-closed", kband::CompactScheme::first_derivative(h, kband::Boundary::NonPeriodic)},
          {"second-closed", kband::CompactScheme::second_derivative(h, kband::Boundary::NonPeriodic)}};
}

/// Single-process reference on the whole global field: the lines along dir,
/// compact_apply (RHS stencil + shared periodic Thomas), back to a field.
Kokkos::View<double***, Kokkos::LayoutLeft, Kokkos::HostSpace> reference(
    const Kokkos::View<double***, Kokkos::LayoutLeft, Kokkos::HostSpace>& global, Direction dir,
    const kband::CompactScheme& scheme) {
  Exec exec;
  Kokkos::View<double***, Kokkos::LayoutLeft> f("f", global.extent(0), global.extent(1), global.extent(2));
  Kokkos::deep_copy(f, global);
  kband::impl::LineMap map{static_cast<int>(f.extent(0)), static_cast<int>(f.extent(1)),
                           static_cast<int>(f.extent(2)), dir};
  Lines in("in", map.nsys(), map.n()), rhs("rhs", map.nsys(), map.n()), out("out", map.nsys(), map.n());
  Kokkos::View<int*> info("info", map.nsys());
  auto factor = kband::compact_factor<double>(exec, scheme, map.n());
  kband::field_to_lines(exec, dir, f, in);
  kband::compact_apply(exec, scheme, factor, in, rhs, out, info);
  kband::lines_to_field(exec, dir, out, f);
  auto h = Kokkos::create_mirror(f);
  Kokkos::deep_copy(h, f);
  return h;
}

template <class V>
double rel_error(const V& x, const V& ref) {
  double num = 0, den = 0;
  for (size_t k = 0; k < ref.extent(2); ++k)
    for (size_t j = 0; j < ref.extent(1); ++j)
      for (size_t i = 0; i < ref.extent(0); ++i) {
        const double e = std::fabs(x(i, j, k) - ref(i, j, k));
        num = e > num || e != e ? e : num;  // NaN propagates
        den = std::max(den, std::fabs(ref(i, j, k)));
      }
  return num / den;
}

struct GridCase {
  std::string name;
  std::array<int, 3> dims;
  std::array<int, 3> base;  // block sizes base + (2c mod 3)
};

int g_one_message_cases = 0;  // applies that took the one-message mode

void run_case(const GridCase& gc, Direction dir, double& worst) {
  kband::mpi::CartGrid grid(MPI_COMM_WORLD, gc.dims);
  std::array<int, 3> local{}, global{};
  unequal_blocks(grid, gc.base, local, global);
  const auto dec = kband::mpi::Decomposition::from_local(grid, global, local);
  Field in("in", grid, dec), out("out", grid, dec);
  fill_field(in, input_value);
  const auto gin = kband::mpi::gather(in);
  const double h = 1.0 / global[static_cast<int>(dir)];
  int k = 0;
  const auto paths = test_paths();
  for (const auto& sc : schemes(h)) {
    kband::mpi::CommConfig cfg;
    cfg.path = paths[k % paths.size()];
    cfg.one_message = (k++ / paths.size()) % 2 == 0;  // both modes (where one message applies)
    Exec exec;
    kband::mpi::DistDerivative<double, kSZ> op(exec, grid, dir, sc.second, in.nlines(dir), in.local_extent(dir), cfg);
    const auto ref = reference(gin, dir, sc.second);
    g_one_message_cases += op.one_message() ? 1 : 0;
    // twice: the second call uses the other receive buffers (CUDA IPC) and
    // times its phases (fenced one by one)
    for (int rep = 0; rep < 2; ++rep) {
      Kokkos::deep_copy(out.local(), nan_value<double>());
      kband::mpi::PhaseTimes pt;
      op.apply(exec, in, out, rep == 1 ? &pt : nullptr);
      exec.fence();
      const double err = rel_error(kband::mpi::gather(out), ref);
      worst = std::max(worst, err);
      EXPECT_LE(err, kTol) << gc.name << " dir " << dir_name(dir) << " " << sc.first << " "
                           << kband::mpi::path_name(cfg.path) << (op.one_message() ? " one message" : "")
                           << " global " << global[0] << "x" << global[1] << "x" << global[2] << " call " << rep;
    }
  }
}

TEST(MPIDistD2, MatchesPeriodicThomas1D) {
  double worst = 0;
  g_one_message_cases = 0;
  for (Direction dir : {Direction::X, Direction::Y, Direction::Z}) {
    // 41 rows: near the truncation bound (two messages); 64: one message where asked
    for (int rows : {41, 64}) {
      GridCase gc{"1D", {1, 1, 1}, {5, 6, 7}};
      gc.dims[static_cast<int>(dir)] = 0;
      gc.base[static_cast<int>(dir)] = rows;
      run_case(gc, dir, worst);
    }
  }
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 1) EXPECT_GT(g_one_message_cases, 0) << "no case took the one-message mode";
  if (world_rank() == 0) std::printf("  1D grids: max relative error %.3e (bound %.0e)\n", max_all(worst), kTol);
  else max_all(worst);
}

/// Subdomains of 12..14 rows (below the truncation bound of every operator)
/// with DistD2Options::exact_reduced: the reduced system of each line is
/// solved exactly; same reference and bound. Also exercises PhaseTimes.
TEST(MPIDistD2, ExactReducedShortSubdomains) {
  double worst = 0;
  for (Direction dir : {Direction::X, Direction::Y, Direction::Z}) {
    kband::mpi::CartGrid grid(MPI_COMM_WORLD, {dir == Direction::X ? 0 : 1, dir == Direction::Y ? 0 : 1,
                                               dir == Direction::Z ? 0 : 1});
    std::array<int, 3> base = {5, 4, 3}, local{}, global{};
    base[static_cast<int>(dir)] = 12;
    unequal_blocks(grid, base, local, global);
    const auto dec = kband::mpi::Decomposition::from_local(grid, global, local);
    Field in("in", grid, dec), out("out", grid, dec);
    fill_field(in, input_value);
    const auto gin = kband::mpi::gather(in);
    int k = 0;
    const auto paths = test_paths();
    for (const auto& sc : schemes(1.0 / global[static_cast<int>(dir)])) {
      kband::mpi::CommConfig cfg;
      cfg.path = paths[k++ % paths.size()];
      kband::DistD2Options opt;
      opt.exact_reduced = true;
      Exec exec;
      kband::mpi::DistDerivative<double, kSZ> op(exec, in, dir, sc.second, cfg, opt);
      Kokkos::deep_copy(out.local(), nan_value<double>());
      kband::mpi::PhaseTimes pt;
      op.apply(exec, in, out, &pt);
      exec.fence();
      EXPECT_TRUE(pt.decouple >= 0 && pt.substitute >= 0 && pt.comm() >= 0 && pt.reorder >= 0);
      const double err = rel_error(kband::mpi::gather(out), reference(gin, dir, sc.second));
      worst = std::max(worst, err);
      EXPECT_LE(err, kTol) << "exact reduced dir " << dir_name(dir) << " " << sc.first << " "
                           << kband::mpi::path_name(cfg.path);
    }
  }
  const double w = max_all(worst);
  if (world_rank() == 0) std::printf("  exact reduced, 12-14 rows per rank: max relative error %.3e\n", w);
}

TEST(MPIDistD2, MatchesPeriodicThomas3D) {
  double worst = 0;
  for (Direction dir : {Direction::X, Direction::Y, Direction::Z}) run_case({"3D", {0, 0, 0}, {41, 41, 41}}, dir, worst);
  if (world_rank() == 0) std::printf("  3D grid: max relative error %.3e (bound %.0e)\n", max_all(worst), kTol);
  else max_all(worst);
}

}  // namespace

namespace {

using namespace kband_test;
using kband::Direction;

/// Every rank threw the same kband::Error containing `needle`; the ranks still communicate.
template <class F>
void expect_all_throw(const char* what, const std::string& needle, F&& f) {
  std::string msg;
  try {
    f();
  } catch (const kband::Error& e) {
    msg = e.what();
  }
  EXPECT_EQ(sum_all(msg.empty() ? 0 : 1), world_size()) << what << ": not every rank threw";
  EXPECT_NE(msg.find(needle), std::string::npos) << what << ": '" << msg << "' lacks '" << needle << "'";
  long long h = static_cast<long long>(msg.size());
  for (char ch : msg) h = h * 131 + static_cast<unsigned char>(ch);
  EXPECT_EQ(sum_all(h), h * world_size()) << what << ": the ranks threw different messages (" << msg << ")";
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(MPIDistD2, CollectiveErrors) {
  const int r = world_rank(), p = world_size();
  kband::mpi::CartGrid grid(MPI_COMM_WORLD, {0, 1, 1});
  Exec exec;
  const auto first = kband::CompactScheme::first_derivative(0.01);
  using Op = kband::mpi::DistDerivative<double, kSZ>;
  // A subdomain shorter than the truncation bound (40 rows for the first derivative in double) on one rank.
  // (One rank holds whole lines, solved exactly: only n < 3 is refused there.)
  if (p > 1)
    expect_all_throw("short subdomain", "minimum subdomain length",
                     [&] { Op op(exec, grid, Direction::X, first, 10, r == p - 1 ? 20 : 60); });
  else
    expect_all_throw("short line", "the minimum is 3", [&] { Op op(exec, grid, Direction::X, first, 10, 2); });
  // Operators differing across ranks.
  if (p > 1) {
    expect_all_throw("operators differ", "differ across ranks", [&] {
      Op op(exec, grid, Direction::X,
            r == 0 ? kband::CompactScheme::second_derivative(0.01) : first, 10, 60);
    });
    expect_all_throw("spacing differs", "differ across ranks", [&] {
      Op op(exec, grid, Direction::X, kband::CompactScheme::first_derivative(r == 0 ? 0.02 : 0.01), 10, 60);
    });
    // Sizes differing across the ranks of one line (the number of lines).
    expect_all_throw("nsys differs", "differs between the ranks of one line",
                     [&] { Op op(exec, grid, Direction::X, first, r == 0 ? 11 : 10, 60); });
  }
  // A periodic operator on a split direction the grid declares non-periodic
  // (on one rank the line is whole and needs no grid periodicity).
  kband::mpi::CartGrid closed(MPI_COMM_WORLD, {0, 1, 1}, {false, true, true});
  if (p > 1) expect_all_throw("periodicity", "is not periodic", [&] { Op op(exec, closed, Direction::X, first, 10, 60); });
  else EXPECT_NO_THROW(Op(exec, closed, Direction::X, first, 10, 60));
  // Wrong extents at apply time: collective too.
  Op op(exec, grid, Direction::X, first, 10, 60);
  kband::GroupedBatch<double, kSZ> in("in", 10, 60), out("out", 10, r == 0 ? 59 : 60);
  expect_all_throw("apply extents", "out", [&] { op.apply(exec, in, out); });
}

}  // namespace
