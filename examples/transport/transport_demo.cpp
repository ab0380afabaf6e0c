// kband-transport: the Taylor-Green vortex advanced by the skew-symmetric
// momentum transport equation (kband_transport.hpp; compact sixth-order
// derivatives by DistD2) with the low-storage RK3 of Williamson. Prints the
// kinetic energy E and the dissipation eps = -dE/dt per step, a progress
// line, and a summary comparing E(t) with the linear-regime decay
// E0 exp(-2 nu k^2 t), k^2 = 3.
//
// No pressure projection: this integrates the transport equation alone (the
// predictor of a fractional-step solver). The skew-symmetric form conserves
// kinetic energy (its nonlinear term is discretely antisymmetric), so
// dE/dt = <u . RHS> is the viscous dissipation, which is what is printed.
//
// Single process, or (built with kband::mpi) over a 3D process grid under
// mpiexec: kband-transport --grid 2,1,1 ... (0 = chosen by MPI).
#include "kband_transport.hpp"
#if defined(KBAND_TRANSPORT_HAVE_MPI)
#include "kband_transport_mpi.hpp"
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

struct Options {
  int n = 40, steps = 150;
  double nu = 0.05, dt = 0, amplitude = 1.0;  // dt = 0: chosen from the grid (stable_dt)
  std::array<int, 3> grid = {0, 0, 0};
  int print_every = 10;
};

void usage() {
  std::printf(
      "kband-transport: Taylor-Green vortex, skew-symmetric transport RHS (compact 6th order, DistD2), RK3\n"
      "  --n N           grid points per direction (default 40)\n"
      "  --steps S       time steps (default 150)\n"
      "  --nu NU         kinematic viscosity (default 0.05)\n"
      "  --dt DT         time step (default: 0.02, or smaller on fine grids: the RK3 stability estimate)\n"
      "  --amplitude A   vortex amplitude (default 1)\n"
      "  --print K       print every K-th step (default 10; 1 = every step)\n"
      "  --grid PX,PY,PZ process grid under mpiexec (default 0,0,0 = MPI_Dims_create)\n"
      "  --help\n");
}

bool parse(int argc, char** argv, Options& o) {
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    auto next = [&]() -> const char* {
      if (a + 1 >= argc) throw kband::Error("kband-transport: " + s + " needs a value");
      return argv[++a];
    };
    if (s == "--help" || s == "-h") return usage(), false;
    if (s == "--n") o.n = std::atoi(next());
    else if (s == "--steps") o.steps = std::atoi(next());
    else if (s == "--nu") o.nu = std::atof(next());
    else if (s == "--dt") o.dt = std::atof(next());
    else if (s == "--amplitude") o.amplitude = std::atof(next());
    else if (s == "--print") o.print_every = std::atoi(next());
    else if (s == "--grid") {
      if (std::sscanf(next(), "%d,%d,%d", &o.grid[0], &o.grid[1], &o.grid[2]) != 3)
        throw kband::Error("kband-transport: --grid expects PX,PY,PZ");
    } else
      throw kband::Error("kband-transport: unknown option " + s + " (see --help)");
  }
  if (o.n < 3 || o.steps < 0 || !(o.dt >= 0) || !(o.nu >= 0) || o.print_every < 1)
    throw kband::Error("kband-transport: need --n >= 3, --steps >= 0, --dt > 0, --nu >= 0, --print >= 1");
  return true;
}

/// A time step the explicit RK3 keeps stable on this grid: the advective
/// limit (3 directions, velocity up to A, the sixth-order compact first
/// derivative's largest modified wavenumber 2/dx, RK3's imaginary-axis bound
/// 1.73) and the viscous one (largest modified wavenumber squared of the
/// second derivative about 6.5/dx^2, real-axis bound 2.51), each with a margin
/// of about 0.7; at most 0.02.
double stable_dt(const Options& o) {
  const double dx = 2 * kband_transport::kPi / o.n;
  double dt = 0.02;
  if (o.amplitude > 0) dt = std::min(dt, 0.2 * dx / o.amplitude);
  if (o.nu > 0) dt = std::min(dt, 0.09 * dx * dx / o.nu);
  return dt;
}

/// Runs the demo; `sum` adds a value over all processes, `root` prints.
template <class Sum>
int run(const Options& o, const kband_transport::Box& box, kband_transport::OperatorFactory<double, kband::default_sz<>::value> factory,
        Sum sum, bool root, int nprocs) {
  using namespace kband_transport;
  Exec exec;
  const double npts = static_cast<double>(box.global_points());
  SkewTransport<double> tr(exec, box, o.nu, factory);
  Vector<double> u("u", box.local), du("du", box.local), r("rhs", box.local);
  if (root && o.dt > stable_dt(o))
    std::printf("warning: dt=%g exceeds the stable step estimated for this grid (%g); expect the run to blow up\n",
                o.dt, stable_dt(o));
  taylor_green(exec, box, u, o.amplitude);
  const double E0 = 0.5 * sum(dot(exec, u, u)) / npts, k2 = 3.0;
  if (root) {
    std::printf("kband-transport: Taylor-Green vortex, %d^3 points on %d process%s (%s), nu=%g dt=%g steps=%d A=%g\n",
                o.n, nprocs, nprocs > 1 ? "es" : "", Exec::name(), o.nu, o.dt, o.steps, o.amplitude);
    std::printf("%6s %10s %14s %14s %12s\n", "step", "t", "energy", "dissipation", "E/E_linear");
  }
  Kokkos::Timer timer;
  double E = E0, eps_prev = 0, budget = 0, t = 0, eps = 0;
  for (int step = 0; step <= o.steps; ++step) {
    t = step * o.dt;
    // stage 1 of the step (or one extra RHS at the end) gives eps(t)
    tr.rhs(exec, u, r);
    E = 0.5 * sum(dot(exec, u, u)) / npts;
    eps = -sum(dot(exec, u, r)) / npts;
    if (step > 0) budget += 0.5 * o.dt * (eps + eps_prev);  // trapezoid of the dissipation
    eps_prev = eps;
    if (root && (step % o.print_every == 0 || step == o.steps))
      std::printf("%6d %10.4f %14.8e %14.8e %12.8f\n", step, t, E, eps, E / (E0 * std::exp(-2 * o.nu * k2 * t)));
    if (step == o.steps) break;
    for (int st = 0; st < 3; ++st) {
      if (st > 0) tr.rhs(exec, u, r);
      rk3_stage(exec, u, du, r, rk3_a[st], rk3_b[st], o.dt);
    }
    if (root && o.steps >= 10 && (step + 1) % (o.steps / 10) == 0) {
      const double el = timer.seconds(), frac = double(step + 1) / o.steps;
      std::printf("progress: %3.0f%% (step %d/%d), %.1f s elapsed, about %.1f s left\n", 100 * frac, step + 1,
                  o.steps, el, el / frac - el);
    }
    std::fflush(stdout);
  }
  exec.fence();
  const double secs = timer.seconds();
  const long long evals = 3LL * o.steps + o.steps + 1;
  const bool finite = std::isfinite(E) && std::isfinite(eps);
  if (root) {
    const double lin = E0 * std::exp(-2 * o.nu * k2 * t);
    std::printf("summary: %d steps to t=%.4f in %.2f s (%.2f ms per RHS evaluation, %.1f Mpoints/s per RHS)\n",
                o.steps, t, secs, 1e3 * secs / evals, npts * evals / secs * 1e-6);
    std::printf("summary: E(0)=%.8e E(t)=%.8e; linear decay E0 exp(-6 nu t)=%.8e (ratio %.6f)\n", E0, E, lin,
                E / lin);
    std::printf("summary: energy budget E(0)-E(t)=%.8e vs integral of dissipation %.8e (rel. diff %.2e)\n", E0 - E,
                budget, budget != 0 ? std::fabs((E0 - E) - budget) / std::fabs(budget) : 0.0);
    std::printf("%s\n", finite ? "OK" : "FAILED (non-finite energy)");
  }
  return finite ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
#if defined(KBAND_TRANSPORT_HAVE_MPI)
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
#else
  const int rank = 0, size = 1;
#endif
  int rc = 0;
  Kokkos::initialize(argc, argv);
  try {
    Options o;
    if (parse(argc, argv, o)) {
      if (o.dt == 0) o.dt = stable_dt(o);
      using Factory = kband_transport::OperatorFactory<double, kband::default_sz<>::value>;
#if defined(KBAND_TRANSPORT_HAVE_MPI)
      kband::mpi::CartGrid grid(MPI_COMM_WORLD, o.grid);
      const auto box = kband_transport::mpi_box(grid, {o.n, o.n, o.n});
      const Factory f = kband_transport::MPIOperator<double>::factory(grid);
      MPI_Comm comm = grid.comm();
      rc = run(o, box, f, [comm](double v) { return kband_transport::sum_all(comm, v); }, rank == 0, size);
#else
      const Factory f = kband_transport::LocalOperator<double, kband::default_sz<>::value>::factory();
      rc = run(o, kband_transport::Box::single({o.n, o.n, o.n}), f, [](double v) { return v; }, true, size);
#endif
    }
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "%s\n", e.what());
    rc = 1;
  }
  Kokkos::finalize();
#if defined(KBAND_TRANSPORT_HAVE_MPI)
  MPI_Finalize();
#endif
  return rc;
}
