// kband example: the right-hand side of the momentum transport equation in
// skew-symmetric form (seed 002, section 5.3, Eq. 3-5) on a periodic box,
// with sixth-order compact first and second derivatives applied by DistD2:
//
//   RHS_i = -1/2 (u_j d(u_i)/dx_j + d(u_j u_i)/dx_j) + nu d2(u_i)/dx_j^2,  i = 1..3
//
// Uses only kband's public API (kband::, and kband::mpi:: in
// kband_transport_mpi.hpp). Data layout and kernels per direction d:
//
//   home fields   u, v, w and the result R: rank-3 Views (LayoutLeft, i
//                 fastest), the local block of a (possibly distributed) field
//   stack S_d     one GroupedBatch of 6 components of the d-lines:
//                 u, v, w, u_d*u, u_d*v, u_d*w (each component starts on a
//                 group boundary: M_d lines padded to a multiple of SZ)
//   1. reorder    kband::field_to_lines, u, v, w -> S_d components 0..2 (3 calls)
//   2. products   one fused kernel: S_d components 3..5 = u_d * (u, v, w)
//   3. first      ONE DistD2 call on all 6 components (6 M_d lines) -> D1
//   4. second     ONE DistD2 call on components 0..2 of S_d (3 M_d lines) -> D2
//   5. combine    one kernel: R_i (=|+=) -1/2 (u_d D1_i + D1_{3+i}) + nu D2_i,
//                 written straight into the home layout (the accumulate-back of
//                 the paper fused with the combination of the terms); the first
//                 direction assigns, the others accumulate.
//
// Field-sized transfers per evaluation (reads + writes of one scalar field;
// a read-modify-write counts 2): reorders 3 x 3 x 2 = 18, products 3 x 6 = 18,
// first derivatives 3 x 24 = 72 (decouple R6 W6, substitution R6 W6; on
// one process kband::distd2 does both in one kernel),
// second derivatives 3 x 12 = 36, combine 13 + 16 + 16 = 45: 189 in all
// (the paper's GPU implementation: 171, Table 5; its substitution phase
// also does the combination, which kband's DistD2 API keeps separate).
// The x-lines are the only direction whose reorder and combine transpose
// (the home layout's fastest index i lies along them); y and z keep i as
// the lane index of the SZ groups, so those passes stay coalesced on GPUs.
//
// Every kernel enqueued by rhs() is recorded by an optional MovementCounter
// (name, calls, field transfers; seconds when it times, which fences after
// each kernel): the data-movement table of the benchmark is built from it.
#pragma once

#include <kband.hpp>

#include <array>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace kband_transport {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using kband::Direction;

constexpr double kPi = 3.14159265358979323846;

/// sin / cos on the device for any Kokkos (Kokkos:: from 3.7, Experimental before).
KOKKOS_INLINE_FUNCTION double sin_(double x) {
#if KOKKOS_VERSION >= 30700
  return Kokkos::sin(x);
#else
  return Kokkos::Experimental::sin(x);
#endif
}
KOKKOS_INLINE_FUNCTION double cos_(double x) {
#if KOKKOS_VERSION >= 30700
  return Kokkos::cos(x);
#else
  return Kokkos::Experimental::cos(x);
#endif
}

/// Argument checks of this example (kband's public error type; the message
/// is concatenated from the arguments).
template <class... Args>
void require(bool ok, const Args&... msg) {
  if (ok) return;
  std::ostringstream os;
  (void)std::initializer_list<int>{((os << msg), 0)...};
  throw kband::Error(os.str());
}

/// RAII Kokkos profiling region around every entry point of the example.
struct Region {
  explicit Region(const char* name) { Kokkos::Profiling::pushRegion(name); }
  ~Region() { Kokkos::Profiling::popRegion(); }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
};

/// A scalar field block f(i, j, k), i fastest.
template <class T>
using Field = Kokkos::View<T***, Kokkos::LayoutLeft, Mem>;

/// The three components of a vector field (u, v, w), each a Field.
template <class T>
struct Vector {
  Field<T> c[3];
  Vector() = default;
  Vector(const std::string& label, const std::array<int, 3>& ext) {
    for (int q = 0; q < 3; ++q) c[q] = Field<T>(label + "_" + "uvw"[q], ext[0], ext[1], ext[2]);
  }
  const Field<T>& operator[](int q) const { return c[q]; }
};

/// The periodic box [0, L_x) x [0, L_y) x [0, L_z) on a global grid of
/// global[d] points, of which this process holds the block of local[d]
/// points starting at global index offset[d].
struct Box {
  std::array<int, 3> global = {0, 0, 0}, local = {0, 0, 0}, offset = {0, 0, 0};
  std::array<double, 3> length = {2 * kPi, 2 * kPi, 2 * kPi};

  /// The whole grid on one process.
  static Box single(const std::array<int, 3>& n) {
    Box b;
    b.global = b.local = n;
    return b;
  }
  double h(int d) const { return length[d] / global[d]; }
  long long local_points() const { return 1LL * local[0] * local[1] * local[2]; }
  long long global_points() const { return 1LL * global[0] * global[1] * global[2]; }
  /// Number of d-directed lines in the local block.
  int nlines(int d) const { return local[(d + 1) % 3] * local[(d + 2) % 3]; }
};

// ---------------------------------------------------------------------------
// Data-movement counter
// ---------------------------------------------------------------------------

/// Records every kernel (or group of kernels) a transport evaluation enqueues:
/// calls, field-sized transfers (reads + writes of one local scalar field)
/// and, when constructed with timed = true, its seconds (the counter then
/// fences the execution space before and after each record).
class MovementCounter {
 public:
  struct Entry {
    std::string kernel;
    bool reorder = false;  // a layout change (reorder / accumulate-back)
    long calls = 0;
    double transfers = 0;
    double seconds = 0;
  };

  explicit MovementCounter(bool timed = false) : timed_(timed) {}

  bool timed() const { return timed_; }
  void start(const Exec& exec) {
    if (!timed_) return;
    exec.fence();
    timer_.reset();
  }
  /// Closes the record opened by start(): `transfers` field transfers moved.
  void stop(const Exec& exec, const std::string& kernel, double transfers, bool reorder = false) {
    double s = 0;
    if (timed_) {
      exec.fence();
      s = timer_.seconds();
    }
    add(kernel, transfers, s, reorder);
  }
  /// A record whose time was measured elsewhere (e.g. MPI phase timers).
  void add(const std::string& kernel, double transfers, double seconds, bool reorder = false) {
    auto it = index_.find(kernel);
    if (it == index_.end()) {
      index_[kernel] = entries_.size();
      entries_.push_back(Entry{kernel, reorder, 0, 0, 0});
      it = index_.find(kernel);
    }
    Entry& e = entries_[it->second];
    e.calls += 1;
    e.transfers += transfers;
    e.seconds += seconds;
  }
  const std::vector<Entry>& entries() const { return entries_; }
  double transfers() const {
    double t = 0;
    for (const auto& e : entries_) t += e.transfers;
    return t;
  }
  double seconds(bool reorders_only = false) const {
    double t = 0;
    for (const auto& e : entries_)
      if (!reorders_only || e.reorder) t += e.seconds;
    return t;
  }
  void clear() {
    entries_.clear();
    index_.clear();
  }

 private:
  bool timed_;
  Kokkos::Timer timer_;
  std::vector<Entry> entries_;
  std::map<std::string, size_t> index_;
};

// ---------------------------------------------------------------------------
// Compact operators along the lines of the local block
// ---------------------------------------------------------------------------

template <class T, int SZ>
using Lines = kband::GroupedBatch<T, SZ, Mem>;

/// One compact operator applied along the d-lines of SZ-grouped batches of
/// nsys lines of n local rows: out = operator(in). Implementations: a whole
/// line per process (LocalOperator) or one subdomain per rank
/// (kband_transport_mpi.hpp). `fields` = how many local scalar fields the
/// batch holds (for the counter).
template <class T, int SZ>
class LineOperator {
 public:
  virtual ~LineOperator() = default;
  virtual void apply(const Exec& exec, const Lines<T, SZ>& in, const Lines<T, SZ>& out, MovementCounter* counter,
                     double fields, const std::string& what) = 0;
};

/// Builds the operator `scheme` along direction d for nsys lines of n rows.
template <class T, int SZ>
using OperatorFactory = std::function<std::unique_ptr<LineOperator<T, SZ>>(
    const Exec& exec, Direction d, const kband::CompactScheme& scheme, int nsys, int n)>;

/// The whole (periodic) line on this process: kband::distd2 on a line of one
/// subdomain (position Only, solved exactly), which runs the decoupling, the
/// subdomain's own 2x2 system and the substitution as one kernel. Counted as
/// 4 transfers per field (in read, out written, out re-read and re-written
/// by the substitution sweep): an upper bound, as the rows stay on chip
/// where they fit (team scratch on GPUs, caches on CPUs).
template <class T, int SZ>
class LocalOperator : public LineOperator<T, SZ> {
 public:
  LocalOperator(const Exec& exec, const kband::CompactScheme& scheme, int nsys, int n)
      : line_(exec, scheme, std::vector<int>{n}), ws_(nsys, 1) {}

  void apply(const Exec& exec, const Lines<T, SZ>& in, const Lines<T, SZ>& out, MovementCounter* c, double fields,
             const std::string& what) override {
    if (c) c->start(exec);
    kband::distd2(exec, line_, in, out, ws_);
    if (c) c->stop(exec, "distd2 (one kernel), " + what, 4 * fields);
  }

  static OperatorFactory<T, SZ> factory() {
    return [](const Exec& exec, Direction, const kband::CompactScheme& scheme, int nsys, int n) {
      return std::unique_ptr<LineOperator<T, SZ>>(new LocalOperator(exec, scheme, nsys, n));
    };
  }

 private:
  kband::DistD2Line<T, Mem> line_;
  kband::DistD2Workspace<T, SZ, Mem> ws_;
};

// ---------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------
namespace detail {

using Flat = Kokkos::RangePolicy<Exec, Kokkos::IndexType<long long>>;

template <class T>
using Pool = Kokkos::View<T*, Mem>;

/// S[(3+q) F + p] = S[d F + p] * S[q F + p], q = 0..2, over the F points of
/// one component (padding lanes included: they hold finite values).
template <class T>
struct Products {
  Pool<T> s;
  long long F;
  int d;
  KOKKOS_INLINE_FUNCTION void operator()(const long long p) const {
    const T ud = s(d * F + p);
    const T a = s(p), b = s(F + p), c = s(2 * F + p);
    s(3 * F + p) = ud * a;
    s(4 * F + p) = ud * b;
    s(5 * F + p) = ud * c;
  }
};

/// R_q(i, j, k) (=|+=) -1/2 (u_d d(u_q)/dx_d + d(u_d u_q)/dx_d) + nu d2(u_q)/dx_d^2
/// for the points of the d-line components (layout of Lines<T, SZ> with
/// ngroups = Mp / SZ), mapped to the home block like kband::field_to_lines.
/// One kband::LineTiles tile per team: the terms are computed lane-fastest
/// (the stacks' contiguous order); along x, where the lines run along the
/// home layout's fastest index, they are staged through team scratch and
/// written row-fastest, so both sides stay coalesced on GPUs.
template <class T, int SZ, bool Accumulate>
struct Combine {
  using member_type = Kokkos::TeamPolicy<Exec>::member_type;
  static constexpr int R = 32;
  Pool<T> s, d1, d2;
  Field<T> r[3];
  kband::LineTiles<SZ, R> tiles;
  long long F;
  int d;
  T nu;

  static size_t scratch_bytes(bool transpose) {
    return SZ * sizeof(long long) + (transpose ? 3 * static_cast<size_t>(SZ) * (R + 1) * sizeof(T) : 0);
  }
  /// Term q at the stack point p (ud = u_d there).
  KOKKOS_INLINE_FUNCTION T term(const int q, const long long p, const T ud) const {
    return -T(0.5) * (ud * d1(q * F + p) + d1((3 + q) * F + p)) + nu * d2(q * F + p);
  }
  KOKKOS_INLINE_FUNCTION static void put(T& dst, const T v) {
    if (Accumulate) dst += v;
    else dst = v;
  }
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& t) const {
    int g, row0, rows, lanes;
    tiles.tile(t.league_rank(), g, row0, rows, lanes);
    long long* off = static_cast<long long*>(t.team_shmem().get_shmem(SZ * sizeof(long long)));
    tiles.row_offsets(t, g, row0, lanes, off);
    const long long p0 = (static_cast<long long>(g) * tiles.n + row0) * SZ;  // (row0, lane 0) of the tile
    const long long rs = tiles.row_stride;
    T* const out[3] = {r[0].data(), r[1].data(), r[2].data()};
    if (!tiles.transpose) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(t, rows * SZ), [&](const int e) {
        const int l = e % SZ;
        if (l >= lanes) return;
        const long long p = p0 + e, o = off[l] + (e / SZ) * rs;
        const T ud = s(d * F + p);
        for (int q = 0; q < 3; ++q) put(out[q][o], term(q, p, ud));
      });
      return;
    }
    T* tile = static_cast<T*>(t.team_shmem().get_shmem(3 * SZ * (R + 1) * sizeof(T)));
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, rows * SZ), [&](const int e) {
      const int rr = e / SZ, l = e % SZ;
      if (l >= lanes) return;
      const long long p = p0 + e;
      const T ud = s(d * F + p);
      for (int q = 0; q < 3; ++q) tile[(q * SZ + l) * (R + 1) + rr] = term(q, p, ud);
    });
    t.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, lanes * R), [&](const int e) {
      const int l = e / R, rr = e % R;
      if (rr >= rows) return;
      for (int q = 0; q < 3; ++q) put(out[q][off[l] + rr], tile[(q * SZ + l) * (R + 1) + rr]);
    });
  }
};

/// Sum over the block of sum_q a_q * b_q (flat, the fields are contiguous).
template <class T>
struct Dot3 {
  const T *a0, *a1, *a2, *b0, *b1, *b2;
  KOKKOS_INLINE_FUNCTION void operator()(const long long p, double& acc) const {
    acc += static_cast<double>(a0[p] * b0[p] + a1[p] * b1[p] + a2[p] * b2[p]);
  }
};

/// Low-storage RK3 stage: du = a du + dt r; u += b du (three components).
template <class T>
struct RKStage {
  T *u0, *u1, *u2, *q0, *q1, *q2;
  const T *r0, *r1, *r2;
  T a, b, dt;
  KOKKOS_INLINE_FUNCTION void operator()(const long long p) const {
    const T n0 = a * q0[p] + dt * r0[p], n1 = a * q1[p] + dt * r1[p], n2 = a * q2[p] + dt * r2[p];
    q0[p] = n0, q1[p] = n1, q2[p] = n2;
    u0[p] += b * n0, u1[p] += b * n1, u2[p] += b * n2;
  }
};

/// The Taylor-Green vortex u = A sin x cos y cos z, v = -A cos x sin y cos z, w = 0.
template <class T>
struct TaylorGreenInit {
  Field<T> u, v, w;
  int ox, oy, oz;
  double hx, hy, hz, A;
  KOKKOS_INLINE_FUNCTION void operator()(const long long p) const {
    const int nx = static_cast<int>(u.extent(0)), ny = static_cast<int>(u.extent(1));
    const int i = static_cast<int>(p % nx), j = static_cast<int>((p / nx) % ny), k = static_cast<int>(p / nx / ny);
    const double x = (ox + i) * hx, y = (oy + j) * hy, z = (oz + k) * hz;
    u(i, j, k) = static_cast<T>(A * sin_(x) * cos_(y) * cos_(z));
    v(i, j, k) = static_cast<T>(-A * cos_(x) * sin_(y) * cos_(z));
    w(i, j, k) = T(0);
  }
};

}  // namespace detail

// ---------------------------------------------------------------------------
// The right-hand side
// ---------------------------------------------------------------------------

/// The skew-symmetric transport RHS on the local block of `box`.
/// Construction (host, fences): plans of the first and second derivative
/// along x, y, z (via `factory`: LocalOperator for a whole box on one
/// process, kband_transport_mpi.hpp for a process grid) and the work
/// buffers (15 scalar fields, shared by the three directions).
/// rhs(exec, u, r): r = RHS(u); u and r are Vectors of local extents
/// box.local; r must not alias u. Asynchronous on exec (no fence) unless a
/// timing counter is passed. Errors (kband::Error, before any kernel): a
/// block below 3 points in a direction (a direction split over ranks needs
/// kband::distd2_min_rows rows per rank, 40 for double), a block of 2^31
/// points or more, fields of other extents than box.local, r aliasing u.
/// Non-finite inputs give non-finite outputs (no info codes: nothing pivots).
template <class T = double, int SZ = kband::default_sz<Exec>::value>
class SkewTransport {
 public:
  SkewTransport(const Exec& exec, const Box& box, T nu, OperatorFactory<T, SZ> factory = LocalOperator<T, SZ>::factory())
      : box_(box), nu_(nu) {
    Region region("kband_transport::SkewTransport");
    long long fmax = 0;
    for (int d = 0; d < 3; ++d) {
      require(box.local[d] >= 3 && box.global[d] >= box.local[d], "SkewTransport: local extent ", box.local[d],
              " of direction ", d, " (global ", box.global[d], ") must be >= 3");
      Dir& D = dir_[d];
      D.n = box.local[d];
      D.nlines = box.nlines(d);
      D.mp = (D.nlines + SZ - 1) / SZ * SZ;
      D.F = static_cast<long long>(D.mp) * D.n;
      require(D.F < (1LL << 31), "SkewTransport: the local block (", box.local[0], ", ", box.local[1], ", ",
              box.local[2], ") has 2^31 points or more");
      fmax = std::max(fmax, D.F);
      D.first = factory(exec, static_cast<Direction>(d), kband::CompactScheme::first_derivative(box.h(d)), 6 * D.mp,
                        D.n);
      D.second = factory(exec, static_cast<Direction>(d), kband::CompactScheme::second_derivative(box.h(d)),
                         3 * D.mp, D.n);
    }
    s_ = detail::Pool<T>("transport::stack", 6 * fmax);
    d1_ = detail::Pool<T>("transport::d1", 6 * fmax);
    d2_ = detail::Pool<T>("transport::d2", 3 * fmax);
  }

  const Box& box() const { return box_; }
  T nu() const { return nu_; }

  /// r = RHS(u) (see the class comment). counter: optional record of every
  /// kernel enqueued (field transfers; seconds when it is timed).
  void rhs(const Exec& exec, const Vector<T>& u, const Vector<T>& r, MovementCounter* counter = nullptr) {
    Region region("kband_transport::rhs");
    for (int q = 0; q < 3; ++q) {
      for (const Field<T>* f : {&u.c[q], &r.c[q]})
        require(static_cast<int>(f->extent(0)) == box_.local[0] && static_cast<int>(f->extent(1)) == box_.local[1] &&
                    static_cast<int>(f->extent(2)) == box_.local[2],
                "SkewTransport::rhs: field '", f->label(), "' has extents (", f->extent(0), ", ", f->extent(1), ", ",
                f->extent(2), "), expected the local block (", box_.local[0], ", ", box_.local[1], ", ",
                box_.local[2], ")");
      for (int p = 0; p < 3; ++p)
        require(u.c[q].data() != r.c[p].data(), "SkewTransport::rhs: r must not alias u");
    }
    for (int d = 0; d < 3; ++d) direction(exec, d, u, r, counter, d > 0);
  }

  /// Field transfers rhs() moves (what the counter records): 189 per
  /// local point when every line count is a multiple of SZ (padding lanes of
  /// the stacks move too: counted in fields of the padded size).
  double transfers() const {
    double t = 0;
    for (int d = 0; d < 3; ++d) {
      const double pad = static_cast<double>(dir_[d].F) / static_cast<double>(box_.local_points());
      t += 6 + (6 + 24 + 12) * pad + (d > 0 ? 16 : 13);  // reorders, products + d1 + d2, combine
    }
    return t;
  }

 private:
  struct Dir {
    int n = 0, nlines = 0, mp = 0;
    long long F = 0;  // points of one component (padded lines)
    std::unique_ptr<LineOperator<T, SZ>> first, second;
  };

  /// Lines<T, SZ> over `count` components of a pool starting at component c0.
  Lines<T, SZ> lines(const detail::Pool<T>& pool, const Dir& D, int c0, int count, int nsys) const {
    typename Lines<T, SZ>::view_type v(pool.data() + c0 * D.F, static_cast<size_t>(count) * D.mp / SZ, D.n);
    return Lines<T, SZ>(v, nsys);
  }

  void direction(const Exec& exec, int d, const Vector<T>& u, const Vector<T>& r, MovementCounter* c,
                 bool accumulate) {
    const Dir& D = dir_[d];
    const double pad = static_cast<double>(D.F) / static_cast<double>(box_.local_points());
    const Direction dir = static_cast<Direction>(d);
    // 1. reorders into the stack's first three components
    for (int q = 0; q < 3; ++q) {
      if (c) c->start(exec);
      kband::field_to_lines(exec, dir, u.c[q], lines(s_, D, q, 1, D.nlines));
      if (c) c->stop(exec, d == 0 ? "reorder x (field_to_lines, transposing)" : "reorder y, z (field_to_lines)", 2, true);
    }
    // 2. products u_d * (u, v, w)
    if (c) c->start(exec);
    Kokkos::parallel_for("kband_transport::products", detail::Flat(exec, 0, D.F), detail::Products<T>{s_, D.F, d});
    if (c) c->stop(exec, "products u_d*u_i (fused)", 6 * pad);
    // 3./4. one DistD2 call per operator on the stacked components
    D.first->apply(exec, lines(s_, D, 0, 6, 6 * D.mp), lines(d1_, D, 0, 6, 6 * D.mp), c, 6 * pad,
                   "first derivative, 6 fields");
    D.second->apply(exec, lines(s_, D, 0, 3, 3 * D.mp), lines(d2_, D, 0, 3, 3 * D.mp), c, 3 * pad,
                    "second derivative, 3 fields");
    // 5. combination into the home layout
    if (c) c->start(exec);
    if (accumulate)
      combine<true>(exec, d, r);
    else
      combine<false>(exec, d, r);
    if (c)
      c->stop(exec, accumulate ? "combine + accumulate-back (y, z)" : "combine (x, assigns)",
              10 + (accumulate ? 6 : 3));
  }

  template <bool Accumulate>
  void combine(const Exec& exec, int d, const Vector<T>& r) const {
    using K = detail::Combine<T, SZ, Accumulate>;
    const Dir& D = dir_[d];
    const K k{s_, d1_, d2_, {r.c[0], r.c[1], r.c[2]}, kband::LineTiles<SZ, K::R>(static_cast<Direction>(d), r.c[0]),
              D.F, d, nu_};
    // HintLightWeight: the functor (over 512 bytes) goes as a kernel argument;
    // otherwise Kokkos' CUDA backend copies it to constant memory and the host
    // waits for the previous such kernel before every launch
    Kokkos::TeamPolicy<Exec, Kokkos::Experimental::WorkItemProperty::HintLightWeight_t> policy(
        exec, k.tiles.league, kband::LineTiles<SZ, K::R>::template team_size<Exec>());
    Kokkos::parallel_for(Accumulate ? "kband_transport::combine_accumulate" : "kband_transport::combine",
                         policy.set_scratch_size(0, Kokkos::PerTeam(K::scratch_bytes(k.tiles.transpose))), k);
  }

  Box box_;
  T nu_;
  Dir dir_[3];
  detail::Pool<T> s_, d1_, d2_;
};

// ---------------------------------------------------------------------------
// Time integration and diagnostics (local sums; MPI callers add them up)
// ---------------------------------------------------------------------------

/// sum over the local block of a . b (fences: returns a host value).
template <class T>
double dot(const Exec& exec, const Vector<T>& a, const Vector<T>& b) {
  double s = 0;
  Kokkos::parallel_reduce("kband_transport::dot", detail::Flat(exec, 0, static_cast<long long>(a.c[0].size())),
                          detail::Dot3<T>{a.c[0].data(), a.c[1].data(), a.c[2].data(), b.c[0].data(), b.c[1].data(),
                                          b.c[2].data()},
                          s);
  exec.fence();
  return s;
}

/// One stage of the low-storage RK3 of Williamson (1980):
/// du = a du + dt r; u += b du. Coefficients rk3_a / rk3_b. No fence.
template <class T>
void rk3_stage(const Exec& exec, const Vector<T>& u, const Vector<T>& du, const Vector<T>& r, T a, T b, T dt) {
  Kokkos::parallel_for("kband_transport::rk3_stage", detail::Flat(exec, 0, static_cast<long long>(u.c[0].size())),
                       detail::RKStage<T>{u.c[0].data(), u.c[1].data(), u.c[2].data(), du.c[0].data(),
                                          du.c[1].data(), du.c[2].data(), r.c[0].data(), r.c[1].data(),
                                          r.c[2].data(), a, b, dt});
}
constexpr double rk3_a[3] = {0.0, -5.0 / 9.0, -153.0 / 128.0};
constexpr double rk3_b[3] = {1.0 / 3.0, 15.0 / 16.0, 8.0 / 15.0};

/// u = Taylor-Green vortex of amplitude A on the local block of `box`. No fence.
template <class T>
void taylor_green(const Exec& exec, const Box& box, const Vector<T>& u, double A = 1.0) {
  Kokkos::parallel_for("kband_transport::taylor_green", detail::Flat(exec, 0, box.local_points()),
                       detail::TaylorGreenInit<T>{u.c[0], u.c[1], u.c[2], box.offset[0], box.offset[1],
                                                  box.offset[2], box.h(0), box.h(1), box.h(2), A});
}

}  // namespace kband_transport
