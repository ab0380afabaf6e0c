// Shared helpers of the kband unit tests.
//
// Portability rules (the same sources run on Serial and on CUDA, where device
// memory is not host-accessible): Views live in the default memory space, are
// filled and read only through host mirrors (Kokkos::create_mirror_view /
// kband::create_mirror_view + deep_copy), every kband call gets an execution
// space instance and is followed by a fence. No device lambdas are used.
#pragma once

#include <kband.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kband_test_reference.hpp"

namespace kband_test {

using Exec = Kokkos::DefaultExecutionSpace;

/// SZ of kband's default GroupedBatch (8 on CPUs, 32 on GPUs) and a second SZ
/// that every suite instantiates too.
constexpr int kSZ = kband::default_sz<>::value;
constexpr int kOtherSZ = kSZ == 4 ? 8 : 4;

// ---------------------------------------------------------------------------
// Accuracy bounds: ||x - xref||_inf / ||xref||_inf per system, against the
// long double dense LU reference (kband_test_reference.hpp). The maxima
// observed over the whole sweep on Serial (Kokkos 3.4, g++ 12, Release) are
// quoted; each bound keeps a margin of about 100x or more for other backends'
// rounding (FMA contraction on GPUs, other orders of operations) while a real
// defect (a wrong row, a lost correction term, a stale workspace) gives errors
// of order 1.
//
//  * dominant: a, c uniform in [-1, 1], |b| = |a| + |c| + U(0.5, 1.5), random
//    sign: strictly diagonally dominant rows. Thomas is backward stable there.
//  * general : a, c uniform in [-1, 1], |b| uniform in [0.5, 1.5], random sign:
//    typically 40-50% of the rows are not diagonally dominant. Unpivoted
//    elimination is only safe while its pivots stay away from zero, so b[j]
//    is re-drawn where the pivot would be smaller than 1/2 (see
//    generate_system); this keeps the systems well conditioned for Thomas.
//    Without that guard the plain family does not admit a fixed bound: errors
//    are heavy-tailed (float, n = 1000: median 4e-6, max 1e-2 over 2000 draws).
// ---------------------------------------------------------------------------
template <class T>
struct Tol;
template <>
struct Tol<double> {
  static constexpr double dominant = 1e-13;  // observed max 4.7e-16
  static constexpr double general = 1e-12;   // observed max 1.2e-15
};
template <>
struct Tol<float> {
  static constexpr double dominant = 2e-5;  // observed max 2.1e-7
  static constexpr double general = 1e-4;   // observed max 9.6e-7
};

inline const char* type_name(float) { return "float"; }
inline const char* type_name(double) { return "double"; }

// ---------------------------------------------------------------------------
// Statistics printed by main() at the end of the run.
// ---------------------------------------------------------------------------
struct RunStats {
  std::map<std::string, double> max_err;  // key: "<type> <family> <solver>"
  long solves = 0;
  long scratch_refusals = 0;  // Variant::Scratch refused with a kband::Error
  std::string first_scratch_refusal;
  long register_solves = 0;     // Variant::Registers solves checked
  long register_refusals = 0;   // Variant::Registers refused (teams too small, periodic)
  std::string first_register_refusal;
};
inline RunStats& stats() {
  static RunStats s;
  return s;
}
inline void record_error(const std::string& key, double e) {
  auto it = stats().max_err.find(key);
  if (it == stats().max_err.end() || e > it->second) stats().max_err[key] = e;
}

// ---------------------------------------------------------------------------
// Deterministic random numbers (own mapping, so identical on every platform).
// ---------------------------------------------------------------------------
inline std::uint64_t mix_seed(std::initializer_list<std::uint64_t> parts) {
  std::uint64_t h = 0x9E3779B97F4A7C15ull;
  for (std::uint64_t p : parts) {
    h ^= p + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
  }
  return h;
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : g_(seed) {}
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * (static_cast<double>(g_() >> 11) * (1.0 / 9007199254740992.0));
  }
  double sign() { return (g_() >> 63) ? -1.0 : 1.0; }
  std::uint64_t bits() { return g_(); }

 private:
  std::mt19937_64 g_;
};

template <class T>
bool same_bits(const T& x, const T& y) {
  return std::memcmp(&x, &y, sizeof(T)) == 0;
}

template <class T>
T nan_value() {
  return std::numeric_limits<T>::quiet_NaN();
}
/// Written into GroupedBatch padding slots; must survive every kband call.
template <class T>
T pad_sentinel() {
  return T(-31415.25);
}
constexpr int kInfoPoison = -777;

// ---------------------------------------------------------------------------
// Layout tags and typed-test configurations.
// ---------------------------------------------------------------------------
struct ContiguousTag;
struct InterleavedTag;
template <int SZ>
struct GroupedTag;

struct ContiguousTag {
  template <class T>
  using batch = kband::ContiguousBatch<T>;
  using other = InterleavedTag;  // a different layout, for mismatch tests
  static constexpr int sz = kSZ;
  static std::string name() { return "Contiguous"; }
};
struct InterleavedTag {
  template <class T>
  using batch = kband::InterleavedBatch<T>;
  using other = ContiguousTag;
  static constexpr int sz = kSZ;
  static std::string name() { return "Interleaved"; }
};
template <int SZ>
struct GroupedTag {
  template <class T>
  using batch = kband::GroupedBatch<T, SZ>;
  using other = GroupedTag<SZ == kSZ ? kOtherSZ : kSZ>;  // same layout, another SZ
  static constexpr int sz = SZ;
  static std::string name() { return "Grouped" + std::to_string(SZ); }
};

template <class T, class L>
struct Cfg {
  using value_type = T;
  using layout = L;
  static std::string name() { return L::name() + "_" + type_name(T()); }
};
struct CfgNames {
  template <class C>
  static std::string GetName(int) {
    return C::name();
  }
};

/// Every layout in float and double, plus a second SZ.
using AllConfigs =
    ::testing::Types<Cfg<double, ContiguousTag>, Cfg<double, InterleavedTag>, Cfg<double, GroupedTag<kSZ>>,
                     Cfg<double, GroupedTag<kOtherSZ>>, Cfg<float, ContiguousTag>, Cfg<float, InterleavedTag>,
                     Cfg<float, GroupedTag<kSZ>>, Cfg<float, GroupedTag<kOtherSZ>>>;

inline const std::vector<int>& n_list() {
  static const std::vector<int> v{1, 2, 3, 5, 7, 32, 33, 100, 1000};
  return v;
}
inline std::vector<int> nsys_list(int sz) {
  std::vector<int> v{1, 7};
  for (int s : {sz, sz + 1, 3 * sz - 1})
    if (s != 1 && s != 7) v.push_back(s);
  return v;
}

// ---------------------------------------------------------------------------
// Host access to the three batch types (through mirrors).
// ---------------------------------------------------------------------------
template <class B>
struct Host;

template <class T, class... P>
struct Host<Kokkos::View<T**, P...>> {
  using dev_type = Kokkos::View<T**, P...>;
  using host_type = decltype(Kokkos::create_mirror_view(std::declval<const dev_type&>()));
  using value_type = T;
  dev_type dev;
  host_type h;
  explicit Host(const dev_type& d) : dev(d), h(Kokkos::create_mirror_view(d)) {}
  void to_device() const { Kokkos::deep_copy(dev, h); }
  void to_host() const { Kokkos::deep_copy(h, dev); }
  int nsys() const { return static_cast<int>(dev.extent(0)); }
  int n() const { return static_cast<int>(dev.extent(1)); }
  int slots() const { return nsys(); }  // systems including padding
  T& operator()(int s, int j) const { return h(s, j); }
};

template <class T, int SZ, class M>
struct Host<kband::GroupedBatch<T, SZ, M>> {
  using dev_type = kband::GroupedBatch<T, SZ, M>;
  using host_type = kband::GroupedBatch<T, SZ, Kokkos::HostSpace>;
  using value_type = T;
  dev_type dev;
  host_type h;
  explicit Host(const dev_type& d) : dev(d), h(kband::create_mirror_view(d)) {}
  void to_device() const { kband::deep_copy(dev, h); }
  void to_host() const { kband::deep_copy(h, dev); }
  int nsys() const { return dev.nsys(); }
  int n() const { return dev.n(); }
  int slots() const { return dev.ngroups() * SZ; }
  T& operator()(int s, int j) const { return h.view()(s / SZ, j, s % SZ); }
};

/// Sets every real system row to `value` and every padding slot to the sentinel.
template <class H>
void poison(const H& x, typename H::value_type value) {
  using T = typename H::value_type;
  for (int s = 0; s < x.slots(); ++s)
    for (int j = 0; j < x.n(); ++j) x(s, j) = s < x.nsys() ? value : pad_sentinel<T>();
}

/// Leaves v in the team scratch (level 0) of every team of a launch that
/// covers the device, so that a kernel which reads scratch it did not write
/// reads v (on hosts the scratch pool is reused from launch to launch; on GPUs
/// the next kernel's blocks mostly get the same shared memory).
template <class T>
void fill_team_scratch(const Exec& exec, const T v) {
  using Policy = Kokkos::TeamPolicy<Exec>;
  const int bytes = static_cast<int>(std::min<size_t>(Policy::scratch_size_max(0), 48 * 1024));
  const int n = bytes / static_cast<int>(sizeof(T));
  const int league = kband::impl::is_device_exec<Exec>::value ? 4096 : 1;
  Policy pol(exec, league, Kokkos::AUTO);
  pol.set_scratch_size(0, Kokkos::PerTeam(bytes));
  Kokkos::parallel_for(
      "fill_team_scratch", pol, KOKKOS_LAMBDA(const typename Policy::member_type& m) {
        T* p = static_cast<T*>(m.team_scratch(0).get_shmem(n * sizeof(T)));
        Kokkos::parallel_for(Kokkos::TeamThreadRange(m, n), [&](const int i) { p[i] = v; });
      });
  exec.fence();
}

/// Number of padding slots not holding the sentinel (0 for View batches).
template <class H>
int padding_damage(const H& x) {
  using T = typename H::value_type;
  int bad = 0;
  for (int s = x.nsys(); s < x.slots(); ++s)
    for (int j = 0; j < x.n(); ++j) bad += same_bits(x(s, j), pad_sentinel<T>()) ? 0 : 1;
  return bad;
}

/// Host copy of a batch, storage bytes of every slot (padding included).
template <class B>
std::vector<unsigned char> snapshot(const B& b) {
  using H = Host<B>;
  using T = typename H::value_type;
  H h(b);
  h.to_host();
  std::vector<unsigned char> out;
  out.reserve(static_cast<size_t>(h.slots()) * h.n() * sizeof(T));
  for (int s = 0; s < h.slots(); ++s)
    for (int j = 0; j < h.n(); ++j) {
      const T v = h(s, j);
      const unsigned char* p = reinterpret_cast<const unsigned char*>(&v);
      out.insert(out.end(), p, p + sizeof(T));
    }
  return out;
}
/// Rank-1 and rank-3 Views (info, shared coefficients, fields): the bytes of a
/// fresh contiguous host copy.
template <class V>
std::vector<unsigned char> view_bytes(const V& v) {
  auto h = Kokkos::create_mirror(v);  // a fresh, contiguous copy also on the host backends
  Kokkos::deep_copy(h, v);
  const unsigned char* p = reinterpret_cast<const unsigned char*>(h.data());
  return std::vector<unsigned char>(p, p + h.span() * sizeof(typename V::non_const_value_type));
}
template <class T, class... P>
std::vector<unsigned char> snapshot(const Kokkos::View<T*, P...>& v) {
  return view_bytes(v);
}
template <class T, class... P>
std::vector<unsigned char> snapshot(const Kokkos::View<T***, P...>& v) {
  return view_bytes(v);
}

// ---------------------------------------------------------------------------
// Strided batches: a batch that is a subview of a bigger View whose other
// elements hold sentinels. Host access goes through a mirror of the whole
// (contiguous) parent, since a non-contiguous device subview cannot be
// deep_copied to the host directly; P::at(host_parent, s, j) is element (s, j).
// ---------------------------------------------------------------------------
template <class T, class L>
struct Padded;  // parent allocation + batch inside it

template <class T, class Layout>
struct Padded2D {
  static constexpr int kLo0 = 1, kHi0 = 2, kLo1 = 2, kHi1 = 3;  // sentinel margins per dimension
  using Parent = Kokkos::View<T**, Layout>;
  using HostParent = decltype(Kokkos::create_mirror(std::declval<Parent>()));
  Parent parent;
  decltype(Kokkos::subview(std::declval<Parent>(), Kokkos::pair<int, int>(), Kokkos::pair<int, int>())) sub;
  Padded2D(int nsys, int n)
      : parent("parent", nsys + kLo0 + kHi0, n + kLo1 + kHi1),
        sub(Kokkos::subview(parent, Kokkos::pair<int, int>(kLo0, kLo0 + nsys),
                            Kokkos::pair<int, int>(kLo1, kLo1 + n))) {}
  static T& at(const HostParent& h, int s, int j) { return h(kLo0 + s, kLo1 + j); }
};
template <class T>
struct Padded<T, ContiguousTag> : Padded2D<T, Kokkos::LayoutRight> {
  using Padded2D<T, Kokkos::LayoutRight>::Padded2D;
};
template <class T>
struct Padded<T, InterleavedTag> : Padded2D<T, Kokkos::LayoutLeft> {
  using Padded2D<T, Kokkos::LayoutLeft>::Padded2D;
};
template <class T, int SZ>
struct Padded<T, GroupedTag<SZ>> {
  using B = kband::GroupedBatch<T, SZ>;
  using Parent = typename B::view_type;  // (ngroups, n, SZ): one sentinel group either side
  using HostParent = decltype(Kokkos::create_mirror(std::declval<Parent>()));
  Parent parent;
  B sub;
  Padded(int nsys, int n)
      : parent("parent", B::groups_for(nsys) + 2, n),
        sub(Kokkos::subview(parent, Kokkos::pair<int, int>(1, 1 + B::groups_for(nsys)), Kokkos::ALL(),
                            Kokkos::ALL()),
            nsys) {}
  static T& at(const HostParent& h, int s, int j) { return h(1 + s / SZ, j, s % SZ); }
};

// ---------------------------------------------------------------------------
// Test problems: coefficients, right-hand sides and the long double reference.
// ---------------------------------------------------------------------------
enum class Solver { Thomas, Periodic, Shared, SharedPeriodic };
enum class Family { Dominant, General };

inline const char* solver_name(Solver s) {
  switch (s) {
    case Solver::Thomas: return "thomas";
    case Solver::Periodic: return "periodic_thomas";
    case Solver::Shared: return "shared";
    default: return "shared_periodic";
  }
}
inline const char* family_name(Family f) { return f == Family::Dominant ? "dominant" : "general"; }
inline bool is_periodic(Solver s) { return s == Solver::Periodic || s == Solver::SharedPeriodic; }
inline bool is_shared(Solver s) { return s == Solver::Shared || s == Solver::SharedPeriodic; }
inline int min_n(Solver s) { return is_periodic(s) ? 3 : 1; }

template <class T>
struct Case {
  Solver solver = Solver::Thomas;
  Family family = Family::Dominant;
  int n = 0, nsys = 0;
  std::vector<T> a, b, c;        // shared: n entries; per-system: nsys*n, system-major
  std::vector<T> d;              // nsys*n, system-major
  std::vector<real_ref> xref;    // nsys*n, system-major
  bool shared() const { return is_shared(solver); }
  bool periodic() const { return is_periodic(solver); }
  size_t coef(int s, int j) const { return shared() ? static_cast<size_t>(j) : static_cast<size_t>(s) * n + j; }
  size_t idx(int s, int j) const { return static_cast<size_t>(s) * n + j; }
};

/// One system's coefficients (rows j = 0..n-1), see the families above.
/// Non-periodic systems get NaN in the entries the solvers must ignore, a[0]
/// and c[n-1].
///
/// The general family re-draws b[j] (same distribution) while the pivot that
/// unpivoted elimination meets in row j -- computed in long double from the
/// T-rounded values, for the matrix kband factors (T' = A - u v^T with
/// gamma = -b[0] when periodic) -- is below 1/2 in magnitude, and re-draws a
/// periodic system whose Sherman-Morrison denominator 1 + v.T'^-1 u is below
/// 1/4. Without the guard the family has a heavy tail of nearly singular
/// systems: over 2000 random n = 1000 systems, float Thomas errors reach 1e-2
/// (median 4e-6), with it 1.4e-6 (median 1.6e-7). About 46% of the rows stay
/// non-dominant (checked by GeneralFamilyIsNotDiagonallyDominant).
template <class T>
void generate_system(Rng& rng, Family fam, int n, bool periodic, T* a, T* b, T* c) {
  using R = real_ref;
  for (int attempt = 0;; ++attempt) {
    R cprev = 0;  // c'_{j-1} of the unpivoted elimination
    for (int j = 0; j < n; ++j) {
      a[j] = static_cast<T>(rng.uniform(-1, 1));
      c[j] = static_cast<T>(rng.uniform(-1, 1));
    }
    for (int j = 0; j < n; ++j) {
      if (fam == Family::Dominant) {
        b[j] = static_cast<T>(rng.sign() * (std::fabs(static_cast<double>(a[j])) +
                                            std::fabs(static_cast<double>(c[j])) + rng.uniform(0.5, 1.5)));
        continue;
      }
      R p = 0;
      for (int tries = 0; tries < 1000; ++tries) {
        b[j] = static_cast<T>(rng.sign() * rng.uniform(0.5, 1.5));
        p = j == 0 ? (periodic ? R(2) * b[0] : R(b[0])) : R(b[j]) - R(a[j]) * cprev;
        if (periodic && j == n - 1) p -= R(c[n - 1]) * R(a[0]) / -R(b[0]);
        if (std::fabs(p) >= R(0.5)) break;
      }
      cprev = R(c[j]) / p;
    }
    if (fam == Family::Dominant || !periodic) break;
    // Sherman-Morrison denominator: z = T'^-1 (gamma, 0, ..., 0, alpha).
    const R gam = -R(b[0]), alpha = c[n - 1], beta = a[0];
    std::vector<R> cp(n), z(n);
    for (int j = 0; j < n; ++j) {
      R p = j == 0 ? R(b[0]) - gam : R(b[j]) - R(a[j]) * cp[j - 1];
      if (j == n - 1) p -= alpha * beta / gam;
      cp[j] = j < n - 1 ? R(c[j]) / p : R(0);
      const R u = j == 0 ? gam : (j == n - 1 ? alpha : R(0));
      z[j] = (u - (j > 0 ? R(a[j]) * z[j - 1] : R(0))) / p;
    }
    for (int j = n - 2; j >= 0; --j) z[j] -= cp[j] * z[j + 1];
    const R den = 1 + z[0] + beta / gam * z[n - 1];
    if (std::fabs(den) >= R(0.25) || attempt > 1000) break;
  }
  if (!periodic) {
    a[0] = nan_value<T>();
    c[n - 1] = nan_value<T>();
  }
}

/// Fills xref of a case whose a, b, c, d are set (systems with a singular
/// reference matrix abort the test program: the generators must avoid them).
template <class T>
void compute_reference(Case<T>& cs) {
  const int n = cs.n;
  cs.xref.assign(static_cast<size_t>(cs.nsys) * n, 0);
  if (cs.shared()) {
    DenseLU lu(dense_tridiagonal(n, cs.a.data(), cs.b.data(), cs.c.data(), cs.periodic()), n);
    if (lu.singular()) throw std::runtime_error("kband_test: singular shared reference matrix");
    for (int s = 0; s < cs.nsys; ++s) {
      const auto x = lu.solve(cs.d.data() + cs.idx(s, 0));
      std::copy(x.begin(), x.end(), cs.xref.begin() + cs.idx(s, 0));
    }
  } else {
    for (int s = 0; s < cs.nsys; ++s) {
      const size_t o = cs.idx(s, 0);
      DenseLU lu(dense_tridiagonal(n, cs.a.data() + o, cs.b.data() + o, cs.c.data() + o, cs.periodic()), n);
      if (lu.singular()) throw std::runtime_error("kband_test: singular reference matrix");
      const auto x = lu.solve(cs.d.data() + o);
      std::copy(x.begin(), x.end(), cs.xref.begin() + o);
    }
  }
}

template <class T>
Case<T> make_case(Solver solver, Family fam, int n, int nsys, std::uint64_t salt = 0) {
  Case<T> cs;
  cs.solver = solver;
  cs.family = fam;
  cs.n = n;
  cs.nsys = nsys;
  Rng rng(mix_seed({sizeof(T), static_cast<std::uint64_t>(solver), static_cast<std::uint64_t>(fam),
                    static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(nsys), salt}));
  const int ncoef = cs.shared() ? 1 : nsys;
  cs.a.resize(static_cast<size_t>(ncoef) * n);
  cs.b.resize(cs.a.size());
  cs.c.resize(cs.a.size());
  for (int s = 0; s < ncoef; ++s) {
    const size_t o = static_cast<size_t>(s) * n;
    generate_system(rng, fam, n, cs.periodic(), cs.a.data() + o, cs.b.data() + o, cs.c.data() + o);
  }
  cs.d.resize(static_cast<size_t>(nsys) * n);
  for (auto& v : cs.d) v = static_cast<T>(rng.uniform(-1, 1));
  compute_reference(cs);
  return cs;
}

/// Cached: the typed suites of every layout share one reference per case.
template <class T>
const Case<T>& get_case(Solver solver, Family fam, int n, int nsys) {
  static std::map<std::tuple<int, int, int, int>, Case<T>> cache;
  const auto key = std::make_tuple(static_cast<int>(solver), static_cast<int>(fam), n, nsys);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, make_case<T>(solver, fam, n, nsys)).first;
  return it->second;
}

// ---------------------------------------------------------------------------
// A problem on the device in layout L, and one solve with its checks.
// ---------------------------------------------------------------------------
template <class T, class L>
struct Problem {
  using B = typename L::template batch<T>;
  using V1 = Kokkos::View<T*>;
  using InfoView = Kokkos::View<int*>;

  const Case<T>& cs;
  B a, b, c, d, x;
  V1 a1, b1, c1;
  InfoView info;
  kband::TridiagonalFactor<T> factor;

  explicit Problem(const Case<T>& cs_) : cs(cs_) {
    const int n = cs.n, nsys = cs.nsys;
    d = B("d", nsys, n);
    x = B("x", nsys, n);
    info = InfoView("info", nsys);
    if (cs.shared()) {
      a1 = V1("a1", n);
      b1 = V1("b1", n);
      c1 = V1("c1", n);
    } else {
      a = B("a", nsys, n);
      b = B("b", nsys, n);
      c = B("c", nsys, n);
    }
    upload_coefficients();
    upload_rhs();
    if (cs.shared()) {
      Exec exec;
      factor = kband::TridiagonalFactor<T>(exec, a1, b1, c1,
                                           cs.periodic() ? kband::Boundary::Periodic : kband::Boundary::NonPeriodic);
      exec.fence();
    }
  }

  void upload_coefficients() {
    if (cs.shared()) {
      for (auto pr : {std::make_pair(&a1, &cs.a), std::make_pair(&b1, &cs.b), std::make_pair(&c1, &cs.c)}) {
        auto h = Kokkos::create_mirror_view(*pr.first);
        for (int j = 0; j < cs.n; ++j) h(j) = (*pr.second)[j];
        Kokkos::deep_copy(*pr.first, h);
      }
    } else {
      fill(a, cs.a);
      fill(b, cs.b);
      fill(c, cs.c);
    }
  }
  void upload_rhs() { fill(d, cs.d); }

  /// Batch <- system-major host values; padding slots get the sentinel.
  void fill(const B& dst, const std::vector<T>& v) const {
    Host<B> h(dst);
    poison(h, T(0));
    for (int s = 0; s < cs.nsys; ++s)
      for (int j = 0; j < cs.n; ++j) h(s, j) = v[cs.idx(s, j)];
    h.to_device();
  }

  /// Number of (s, j) where the batch differs bitwise from v, padding included.
  int differs(const B& src, const std::vector<T>& v) const {
    Host<B> h(src);
    h.to_host();
    int bad = padding_damage(h);
    for (int s = 0; s < cs.nsys; ++s)
      for (int j = 0; j < cs.n; ++j) bad += same_bits(h(s, j), v[cs.idx(s, j)]) ? 0 : 1;
    return bad;
  }

  std::string describe(kband::Variant v, bool inplace) const {
    std::ostringstream os;
    os << solver_name(cs.solver) << " " << L::name() << " " << type_name(T()) << " " << family_name(cs.family)
       << " n=" << cs.n << " nsys=" << cs.nsys << " variant=" << kband::variant_name(v)
       << (inplace ? " in-place" : "");
    return os.str();
  }

  /// Calls the solver; x_out is x, or d for an in-place solve.
  void call(const B& x_out, const kband::SolveOptions& opt) const {
    Exec exec;
    switch (cs.solver) {
      case Solver::Thomas: kband::thomas(exec, a, b, c, d, x_out, info, opt); break;
      case Solver::Periodic: kband::periodic_thomas(exec, a, b, c, d, x_out, info, opt); break;
      default: kband::thomas(exec, factor, d, x_out, info, opt); break;
    }
    exec.fence();
  }

  /// Calls the solver; returns false when it refused with the kband::Error a
  /// variant may legitimately give: Scratch when team scratch is too small
  /// (large n), Registers when teams of ceil(n / M) threads are not offered
  /// (host backends) or for periodic per-system systems, Recompute for
  /// per-system systems. A refused call must not have written info. Any
  /// other error fails the test.
  bool call_if_served(const B& x_out, const kband::SolveOptions& opt, const std::string& what) const {
    const kband::Variant variant = opt.variant;
    try {
      call(x_out, opt);
    } catch (const kband::Error& e) {
      const std::string msg = e.what();
      const bool registers = variant == kband::Variant::Registers;
      // Recompute: per-system solvers refuse it; shared factors must be served
      const bool recompute = variant == kband::Variant::Recompute && !cs.shared();
      // Window: only per-system, non-periodic thomas serves it
      const bool window = variant == kband::Variant::Window && cs.solver != Solver::Thomas;
      const char* name = registers   ? "Variant::Registers"
                         : recompute ? "Variant::Recompute"
                         : window    ? "Variant::Window"
                                     : "Variant::Scratch";
      if (!(variant == kband::Variant::Scratch || registers || recompute || window) ||
          msg.find(name) == std::string::npos) {
        ADD_FAILURE() << what << ": unexpected kband::Error: " << msg;
        return false;
      }
      if (registers && cs.solver != Solver::Periodic && kband::impl::is_device_exec<Exec>::value && cs.n <= 512)
        ADD_FAILURE() << what << ": a GPU must serve Variant::Registers for n <= 512: " << msg;
      auto hi = Kokkos::create_mirror_view(info);
      Kokkos::deep_copy(hi, info);
      for (int s = 0; s < cs.nsys; ++s) EXPECT_EQ(hi(s), kInfoPoison) << what << ": refused call wrote info";
      if (recompute || window) return false;
      long& count = registers ? stats().register_refusals : stats().scratch_refusals;
      std::string& first = registers ? stats().first_register_refusal : stats().first_scratch_refusal;
      ++count;
      if (first.empty()) first = what + ": " + msg;
      return false;
    }
    if (variant == kband::Variant::Registers) ++stats().register_solves;
    return true;
  }

  /// Launches the Registers kernel of per-system Thomas in S segments
  /// directly (kband::thomas takes it for long interleaved and grouped
  /// systems only, which host backends do not serve), M rows a thread
  /// (kband's: 16 in double, 32 in float): systems of one chunk a segment
  /// (n <= M S) run on every backend.
  template <int S, int M = kband::impl::register_rows_segments<T>()>
  void call_segments(const B& x_out) const {
    using F = kband::impl::ThomasPerSystemRegisters<Exec, B, B, B, B, B, InfoView, M, S>;
    const int n = cs.n, nsys = cs.nsys;
    F f(typename F::Base{nsys, n, 1, 1, false, nan_value<T>()}, a, b, c, d, x_out, info);
    const bool contiguous = kband::impl::batch_traits<B>::layout == kband::Layout::Contiguous;
    const auto g = kband::impl::register_geometry(Exec(), nsys, n, M, contiguous, F::scratch_per_thread(), 0, 0, f, S);
    ASSERT_TRUE(g.ok) << g.why;
    ASSERT_EQ(g.K, 1);
    kband::impl::launch_registers("kband_test::segments", Exec(), g, f);
    Exec().fence();
  }

  /// Launches the shared-factor Registers kernel with M rows a thread (and
  /// the next block's loads ahead or not) directly, `blocks` blocks of
  /// systems a team (0: kband's choice): kband::thomas takes M = 16 with
  /// loads ahead. Host backends serve n <= M (one chunk a system).
  template <int M, bool Ahead>
  void call_shared_registers(const B& x_out, int blocks) const {
    const int n = cs.n, nsys = cs.nsys;
    const typename kband::impl::RegisterBase<Exec, T, M> rb{nsys, n, 1, 1, false, nan_value<T>()};
    const bool contiguous = kband::impl::batch_traits<B>::layout == kband::Layout::Contiguous;
    auto launch = [&](auto f) {
      const auto g = kband::impl::register_geometry(Exec(), nsys, n, M, contiguous, f.scratch_per_thread(), 0,
                                                    blocks, f);
      ASSERT_TRUE(g.ok) << g.why;
      kband::impl::launch_registers("kband_test::shared_registers", Exec(), g, f);
    };
    using Mem = typename Exec::memory_space;
    if (cs.periodic())
      launch(kband::impl::ThomasSharedRegisters<Exec, T, Mem, B, B, InfoView, M, true, Ahead>(rb, factor.data(), d,
                                                                                             x_out, info));
    else
      launch(kband::impl::ThomasSharedRegisters<Exec, T, Mem, B, B, InfoView, M, false, Ahead>(rb, factor.data(), d,
                                                                                              x_out, info));
    Exec().fence();
  }

  /// Poisons the outputs, solves, and checks info == 0, finite x within `tol`
  /// of the reference, padding sentinels intact and the inputs unchanged.
  void solve_and_check(kband::Variant variant, bool inplace = false, int blocks_per_team = 0) {
    const std::string what = describe(variant, inplace);
    kband::SolveOptions opt;
    opt.variant = variant;
    opt.blocks_per_team = blocks_per_team;
    check_solve(what, inplace, [&](const B& xo) { return call_if_served(xo, opt, what); });
  }

  /// solve_and_check's poisoning and checks around solve(x_out), which
  /// returns false when the call was refused.
  void check_solve(const std::string& what, bool inplace, const std::function<bool(const B&)>& solve) {
    const double tol = cs.family == Family::Dominant ? Tol<T>::dominant : Tol<T>::general;
    const B& xo = inplace ? d : x;
    if (inplace) upload_rhs();
    {
      Host<B> hx(xo);
      if (inplace) hx.to_host();
      else poison(hx, nan_value<T>());
      hx.to_device();
      auto hi = Kokkos::create_mirror_view(info);
      Kokkos::deep_copy(hi, kInfoPoison);
      Kokkos::deep_copy(info, hi);
    }
    fill_team_scratch(Exec(), nan_value<T>());
    if (!solve(xo)) return;
    ++stats().solves;
    Host<B> hx(xo);
    hx.to_host();
    auto hi = Kokkos::create_mirror_view(info);
    Kokkos::deep_copy(hi, info);
    double worst = 0;
    int nbad = 0, first_bad = -1;
    std::vector<T> row(cs.n);
    for (int s = 0; s < cs.nsys; ++s) {
      for (int j = 0; j < cs.n; ++j) row[j] = hx(s, j);
      const double err = relative_error_inf(cs.n, row.data(), cs.xref.data() + cs.idx(s, 0));
      worst = std::max(worst, err);
      if (hi(s) != 0 || !(err <= tol)) {
        if (first_bad < 0) first_bad = s;
        ++nbad;
      }
    }
    record_error(std::string(type_name(T())) + " " + family_name(cs.family) + " " + solver_name(cs.solver), worst);
    if (nbad) {
      const int s = first_bad;
      ADD_FAILURE() << what << ": " << nbad << " of " << cs.nsys << " systems wrong; first s=" << s
                    << " info=" << hi(s) << " x(s,0)=" << hx(s, 0) << " xref(s,0)="
                    << static_cast<double>(cs.xref[cs.idx(s, 0)]) << "; worst rel. error " << worst
                    << " (bound " << tol << ")";
    }
    EXPECT_EQ(padding_damage(hx), 0) << what << ": the solver wrote into GroupedBatch padding";
    if (!cs.shared()) {
      EXPECT_EQ(differs(a, cs.a) + differs(b, cs.b) + differs(c, cs.c), 0) << what << ": a, b or c modified";
    }
    if (!inplace) {
      EXPECT_EQ(differs(d, cs.d), 0) << what << ": d modified";
    }
  }
};

inline const std::vector<kband::Variant>& all_variants() {
  static const std::vector<kband::Variant> v{kband::Variant::Auto, kband::Variant::Global, kband::Variant::Scratch};
  return v;
}
/// kband::gtsv also has the Recompute, Registers and Window variants.
inline const std::vector<kband::Variant>& gtsv_variants() {
  static const std::vector<kband::Variant> v{kband::Variant::Auto,      kband::Variant::Global,
                                             kband::Variant::Scratch,   kband::Variant::Recompute,
                                             kband::Variant::Registers, kband::Variant::Window};
  return v;
}
/// kband::thomas also has the Registers variant, with a shared factor Recompute, and
/// with per-system coefficients (non-periodic) Window.
inline const std::vector<kband::Variant>& thomas_variants() {
  static const std::vector<kband::Variant> v{kband::Variant::Auto,      kband::Variant::Global,
                                             kband::Variant::Scratch,   kband::Variant::Registers,
                                             kband::Variant::Recompute, kband::Variant::Window};
  return v;
}

/// Checks systems s with skip(s) false of x (system-major host copy) against
/// the reference of a case (any case type with nsys, n, idx(s, j) and xref):
/// info 0, finite, within tol; records the maximum error under `key`.
template <class T, class CaseT>
void check_against_reference(const std::string& what, const CaseT& cs, const std::vector<T>& x,
                             const std::vector<int>& info, double tol, const std::string& key,
                             const std::function<bool(int)>& skip = {}) {
  double worst = 0;
  int nbad = 0, first = -1;
  for (int s = 0; s < cs.nsys; ++s) {
    if (skip && skip(s)) continue;
    const double err = relative_error_inf(cs.n, x.data() + cs.idx(s, 0), cs.xref.data() + cs.idx(s, 0));
    worst = std::max(worst, err);
    if (info[s] != 0 || !(err <= tol)) {
      if (first < 0) first = s;
      ++nbad;
    }
  }
  record_error(std::string(type_name(T())) + " dominant " + key, worst);
  if (nbad)
    ADD_FAILURE() << what << ": " << nbad << " of " << cs.nsys << " systems wrong; first s=" << first
                  << " info=" << info[first] << " x(s,0)=" << x[cs.idx(first, 0)]
                  << " xref(s,0)=" << static_cast<double>(cs.xref[cs.idx(first, 0)]) << "; worst rel. error " << worst
                  << " (bound " << tol << ")";
}

}  // namespace kband_test
