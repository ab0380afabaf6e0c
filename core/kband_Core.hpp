// kband: batched banded solvers on Kokkos.
// Core definitions shared by every part of the library: the error type,
// argument checks, profiling regions and backend traits.
#pragma once

#include <Kokkos_Core.hpp>

#include <cfloat>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

#define KBAND_VERSION_MAJOR 0
#define KBAND_VERSION_MINOR 1
#define KBAND_VERSION_PATCH 0

namespace kband {

/// Every argument error kband detects (wrong extents, sizes below a solver's
/// minimum, layout or SZ mismatches) is reported as a kband::Error. Numerical
/// failures inside a batch (a zero pivot) are reported per system through an
/// `info` View instead, so one bad system never hides the others' results.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what)
      : std::runtime_error(what.compare(0, 7, "kband::") == 0 ? what : "kband: " + what) {}
};

/// LAPACK-style per-system status written by the solvers into `info(s)`:
/// 0 = solved; k > 0 = the pivot of row k (1-based) was zero or not finite,
/// the system's solution was filled with NaN.
enum : int { kInfoOk = 0 };

namespace impl {

/// RAII Kokkos profiling region, opened on every public entry point.
class ProfilingRegion {
 public:
  explicit ProfilingRegion(const char* name) { Kokkos::Profiling::pushRegion(name); }
  ~ProfilingRegion() { Kokkos::Profiling::popRegion(); }
  ProfilingRegion(const ProfilingRegion&) = delete;
  ProfilingRegion& operator=(const ProfilingRegion&) = delete;
};

template <class... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  (void)std::initializer_list<int>{((os << args), 0)...};
  return os.str();
}

inline void require(bool ok, const std::string& msg) {
  if (!ok) throw Error(msg);
}

/// True when ExecSpace runs on a device whose memory the host cannot read
/// (CUDA, HIP, SYCL, ...). Used only to pick tuning constants.
template <class ExecSpace>
struct is_device_exec
    : std::integral_constant<
          bool, !Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                            typename ExecSpace::memory_space>::accessible> {};

template <class T>
struct real_limits;
template <>
struct real_limits<float> {
  KOKKOS_INLINE_FUNCTION static constexpr float max() { return FLT_MAX; }
  KOKKOS_INLINE_FUNCTION static constexpr float min_normal() { return FLT_MIN; }
  KOKKOS_INLINE_FUNCTION static constexpr float inf() { return __builtin_huge_valf(); }
};
template <>
struct real_limits<double> {
  KOKKOS_INLINE_FUNCTION static constexpr double max() { return DBL_MAX; }
  KOKKOS_INLINE_FUNCTION static constexpr double min_normal() { return DBL_MIN; }
  KOKKOS_INLINE_FUNCTION static constexpr double inf() { return __builtin_huge_val(); }
};

/// The bit layout inverse_pow2 and inverse_pow2_max read.
template <class T>
struct Pow2Bits;
template <>
struct Pow2Bits<double> {
  using U = unsigned long long;
  static constexpr int kMant = 52, kTop = 2046;  // 2 * bias
  static constexpr int kHiShift = 32, kHiMant = 20;  // the word with the exponent
};
template <>
struct Pow2Bits<float> {
  using U = unsigned int;
  static constexpr int kMant = 23, kTop = 254;
  static constexpr int kHiShift = 0, kHiMant = 23;
};
/// 2^-k for a finite v > 0 in [2^k, 2^(k+1)) (clamped to the normal range),
/// 1 for zero, infinities and NaN: scaling by it is exact, and it costs no
/// division (rescaling where any scale will do: the Registers kernels).
template <class T>
KOKKOS_INLINE_FUNCTION T inverse_pow2(T v) {
  using PB = Pow2Bits<T>;
  using U = typename PB::U;
  if (!(v > T(0) && v <= real_limits<T>::max())) return T(1);
  U u;
  __builtin_memcpy(&u, &v, sizeof(T));
  int g = PB::kTop - static_cast<int>(u >> PB::kMant);  // the biased exponent of the result
  g = g < 1 ? 1 : (g > PB::kTop ? PB::kTop : g);
  u = static_cast<U>(g) << PB::kMant;
  T r;
  __builtin_memcpy(&r, &u, sizeof(T));
  return r;
}

/// |v|. float and double take the math library's fabs: on GPUs one
/// instruction, or none where it becomes an operand modifier of a compare or
/// an add (the ternary keeps the sign of -0.0, so compilers cannot turn it
/// into fabs: sm_90 ran it as a compare and two selects a value).
template <class T>
KOKKOS_INLINE_FUNCTION T abs_(const T v) {
  return v < T(0) ? -v : v;
}
template <class T>
KOKKOS_INLINE_FUNCTION T fabs_(const T v) {
#if KOKKOS_VERSION >= 30700
  return Kokkos::fabs(v);
#else
  return Kokkos::Experimental::fabs(v);
#endif
}
KOKKOS_INLINE_FUNCTION float abs_(const float v) { return fabs_(v); }
KOKKOS_INLINE_FUNCTION double abs_(const double v) { return fabs_(v); }

/// inverse_pow2 of the largest magnitude among v, found as the largest
/// exponent word (integer maxima, no floating-point compares and selects);
/// 1 when every v is zero (double: below 2^-1042, whose high word is zero),
/// or one is infinite or NaN.
template <class T, int N>
KOKKOS_INLINE_FUNCTION T inverse_pow2_max(const T (&v)[N]) {
  using PB = Pow2Bits<T>;
  using U = typename PB::U;
  unsigned mh = 0;
  for (int i = 0; i < N; ++i) {
    U u;
    __builtin_memcpy(&u, &v[i], sizeof(T));
    const unsigned h = static_cast<unsigned>(u >> PB::kHiShift) & 0x7fffffffu;
    mh = h > mh ? h : mh;
  }
  const int e = static_cast<int>(mh >> PB::kHiMant);  // biased exponent of the largest magnitude
  if (mh == 0 || e > PB::kTop) return T(1);
  const int g = PB::kTop - e < 1 ? 1 : PB::kTop - e;
  const U r = static_cast<U>(g) << PB::kMant;
  T s;
  __builtin_memcpy(&s, &r, sizeof(T));
  return s;
}

/// A pivot is usable when it is finite and non-zero (NaN fails both tests).
template <class T>
KOKKOS_INLINE_FUNCTION bool usable_pivot(const T p) {
  const T ap = abs_(p);
  return ap > T(0) && ap <= real_limits<T>::max();
}

/// v, or 0 where v is subnormal (NaN and infinities stay). kband's
/// correction vectors (the periodic solves' z and g) decay geometrically
/// away from the rows they start at and pass through the subnormal range,
/// where CPUs take microcode assists for every operation (one core of this
/// project's VM, shared periodic solve, n = 1024: 1.7x slower than the
/// non-periodic one); their contribution there is below the smallest normal
/// number times the correction's factor.
template <class T>
KOKKOS_INLINE_FUNCTION T flush_subnormal(const T v) {
  return abs_(v) < real_limits<T>::min_normal() ? T(0) : v;
}

template <class T>
KOKKOS_INLINE_FUNCTION T sqrt_(const T v) {
#if KOKKOS_VERSION >= 30700
  return Kokkos::sqrt(v);
#else
  return Kokkos::Experimental::sqrt(v);
#endif
}

/// The execution policies of kband's kernels. They carry Kokkos'
/// HintLightWeight property: the CUDA and HIP backends then pass a functor
/// as a kernel argument (up to 4 KB). Without it a functor of 512 bytes or
/// more is copied to constant memory, and every such launch first waits on
/// the host until the previous one has finished: a hidden host
/// synchronisation per launch, which leaves the device idle while the host
/// launches the next kernel (CG: one per iteration).
using LightWeight = Kokkos::Experimental::WorkItemProperty::HintLightWeight_t;
template <class Exec, class... Traits>
using Range = Kokkos::RangePolicy<Exec, Traits..., LightWeight>;
template <class Exec, class... Traits>
using Team = Kokkos::TeamPolicy<Exec, Traits..., LightWeight>;

/// Sum of v over the G vector lanes of a team thread (ThreadVectorRange(team,
/// G)), on every lane; G a power of two no larger than the backend's vector
/// length. On CUDA and HIP devices a butterfly of warp shuffles: the lanes of
/// a Kokkos team thread are G consecutive threads of a warp (blockDim.x = G,
/// which the caller's launch must ensure), and every lane adds the same terms
/// in the same grouping, so all get the same sum. Kokkos' vector
/// parallel_reduce does the same work with the vector length read at run
/// time (a loop, a modulo and a broadcast): the Householder Registers kernel
/// at D = 128 took 1.5x the time with it (H100). Elsewhere that reduction.
template <int G, class Member, class T>
KOKKOS_FORCEINLINE_FUNCTION T lane_sum(const Member& team, const T v) {
  static_assert(G >= 1 && (G & (G - 1)) == 0, "kband::impl::lane_sum: G is a power of two");
  if constexpr (G == 1) {
    (void)team;
    return v;
  } else {
#if defined(__CUDA_ARCH__)
    (void)team;
    const unsigned lin = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned mask = ((1u << G) - 1u) << (lin & 31u & ~unsigned(G - 1));
    T s = v;
    for (int m = 1; m < G; m *= 2) s += __shfl_xor_sync(mask, s, m, G);
    return s;
#elif defined(__HIP_DEVICE_COMPILE__)
    (void)team;
    T s = v;
    for (int m = 1; m < G; m *= 2) s += __shfl_xor(s, m, G);
    return s;
#else
    T s = 0;
    Kokkos::parallel_reduce(Kokkos::ThreadVectorRange(team, G), [&](const int, T& a) { a += v; }, s);
    return s;
#endif
  }
}

/// Two values of T moved as one (a 16-byte access for double): scratch
/// buffers read and written in pairs must be aligned to one.
template <class T>
struct alignas(2 * sizeof(T)) Pair {
  T a, b;
};

/// Scratch values team_pair_sum needs for a team of Threads threads and
/// lanes: a pair a group of 32.
KOKKOS_INLINE_FUNCTION constexpr int team_pair_sum_scratch(int threads) { return 2 * ((threads + 31) / 32); }

/// Sums of a and b over a team's Threads threads and lanes (every lane its
/// own terms), on every thread and lane; each thread and lane of the team
/// calls it, and it takes one team barrier. buf: team_pair_sum_scratch(
/// Threads) values of team scratch, aligned to a pair, which the caller may
/// write again only after its next team barrier. On CUDA and HIP devices a
/// butterfly of shuffles within each group of 32 threads (Threads < 32:
/// the team is one such group) whose sums go to buf, then every thread sums
/// the groups in order: all get the same sums. Elsewhere a barrier, the
/// lane sums and a Kokkos team reduction. (H100, the Householder Registers
/// kernel, time over a sum through scratch in two levels with three barriers
/// a step: D = 32 / 64 / 96 / 128: 0.92 / 0.91 / 0.91 / 0.94.)
template <int Threads, int G, class Member, class T>
KOKKOS_FORCEINLINE_FUNCTION void team_pair_sum(const Member& team, T& a, T& b, T* buf) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  constexpr int WS = Threads < 32 ? Threads : 32;
  static_assert(Threads <= 32 || Threads % 32 == 0, "kband::impl::team_pair_sum: whole groups of 32");
  static_assert((WS & (WS - 1)) == 0, "kband::impl::team_pair_sum: a power of two below 32");
  constexpr int NW = (Threads + 31) / 32;
  using P = Pair<T>;
#if defined(__CUDA_ARCH__)
  constexpr unsigned mask = WS == 32 ? 0xffffffffu : ((1u << WS) - 1u);
  for (int m = WS / 2; m >= 1; m /= 2) {
    a += __shfl_xor_sync(mask, a, m, WS);
    b += __shfl_xor_sync(mask, b, m, WS);
  }
#else
  for (int m = WS / 2; m >= 1; m /= 2) {
    a += __shfl_xor(a, m, WS);
    b += __shfl_xor(b, m, WS);
  }
#endif
  const unsigned lin = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  if (lin % WS == 0) reinterpret_cast<P*>(buf)[lin / WS] = P{a, b};
  team.team_barrier();
  a = 0;
  b = 0;
  for (int w = 0; w < NW; ++w) {
    const P v = reinterpret_cast<const P*>(buf)[w];
    a += v.a;
    b += v.b;
  }
#else
  (void)buf;
  team.team_barrier();
  Kokkos::complex<T> v(lane_sum<G>(team, a), lane_sum<G>(team, b));
  team.team_reduce(Kokkos::Sum<Kokkos::complex<T>>(v));
  a = v.real();
  b = v.imag();
#endif
}

template <class View, class ExecSpace>
void require_accessible(const char* name) {
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
                "kband: a View argument is not accessible from the execution space");
  (void)name;
}

}  // namespace impl

/// Default number of systems per group of the SZ-grouped layout: 32 on GPUs
/// (one warp, one system per thread), 8 on CPUs (one 512-bit vector of doubles).
template <class ExecSpace = Kokkos::DefaultExecutionSpace>
struct default_sz : std::integral_constant<int, impl::is_device_exec<ExecSpace>::value ? 32 : 8> {};

}  // namespace kband
