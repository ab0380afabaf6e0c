// kband-bench: pieces every suite shares: the device name, the STREAM-style
// copy / scale kernels, a fenced timing loop and a one-call copy reference.
// Every suite judges its rows against measure_copy() run in the same process.
#pragma once

#include "bench_problem.hpp"
#include "bench_report.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace kband_bench {

constexpr bool kDevice = kband::impl::is_device_exec<Exec>::value;

/// sin / cos in kernels for any Kokkos (Kokkos:: from 3.7, Experimental before).
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

/// Elements each STREAM thread moves: 32 bytes on devices, 1 on hosts.
template <class T>
constexpr int stream_unroll() {
  return kDevice ? static_cast<int>(32 / sizeof(T)) : 1;
}

inline std::string device_name() {
#if defined(KOKKOS_ENABLE_CUDA)
  int dev = 0;
  cudaDeviceProp prop;
  if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
    return kband::impl::concat(prop.name, " (cc ", prop.major, ".", prop.minor, ", ",
                               prop.totalGlobalMem >> 20, " MiB)");
  return "CUDA device (unknown)";
#else
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.compare(0, 10, "model name") == 0) {
      const auto p = line.find(':');
      if (p != std::string::npos) return line.substr(p + 2);
    }
  return "host CPU (unknown)";
#endif
}


/// STREAM copy y = x. Thread i moves the U elements i, i+m, ..., i+(U-1)m
/// (m = N/U; coalesced across threads), loads first: with one element per
/// thread a GPU cannot keep enough bytes in flight (on an H200 a float copy
/// then ran at half the double copy's bandwidth). U = 1 on hosts.
template <class T, int U>
struct CopyK {
  Kokkos::View<const T*, Mem> x;
  Kokkos::View<T*, Mem> y;
  std::int64_t m, N;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    if constexpr (U == 1) {  // the plain loop, which host compilers vectorise
      y(i) = x(i);
      return;
    }
    if (i < m) {
      T v[U];
      for (int k = 0; k < U; ++k) v[k] = x(i + k * m);
      for (int k = 0; k < U; ++k) y(i + k * m) = v[k];
    }
    const std::int64_t t = m * U + i;
    if (t < N) y(t) = x(t);
  }
};
/// STREAM scale in place, x = s*x, same access pattern as CopyK.
template <class T, int U>
struct ScaleK {
  Kokkos::View<T*, Mem> x;
  T s;
  std::int64_t m, N;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    if constexpr (U == 1) {
      x(i) = s * x(i);
      return;
    }
    if (i < m) {
      T v[U];
      for (int k = 0; k < U; ++k) v[k] = x(i + k * m);
      for (int k = 0; k < U; ++k) x(i + k * m) = s * v[k];
    }
    const std::int64_t t = m * U + i;
    if (t < N) x(t) = s * x(t);
  }
};

/// Seconds of warm-up calls at least (when warm-up is asked for) on GPUs. A
/// GPU that has just freed large allocations or sat idle (the driver's
/// unmapping, clocks coming back up) runs the next kernels slower for tens
/// of milliseconds: H100, kband::thomas on an interleaved batch of n = 64
/// right after cudaFree of 8 GB (cuSPARSE's gtsv2StridedBatch buffer)
/// 0.0159 ns a point against 0.0135 before and after, and the copy 0.0057
/// against 0.0054, over eight calls each. Every row, kband's and the peers',
/// gets the same warm-up.
constexpr double kWarmSeconds = kDevice ? 0.25 : 0.0;

/// Warm-up calls (`warmup` at least, and on GPUs for kWarmSeconds at least
/// when warmup > 0), then `reps` calls each bracketed by Kokkos::fence();
/// `refresh` runs untimed before every call. Returns median/min/max seconds.
template <class F, class R>
Stats time_fenced(int warmup, int reps, F&& f, R&& refresh) {
  Kokkos::Timer warm;
  for (int w = 0; w < warmup || (warmup > 0 && warm.seconds() < kWarmSeconds); ++w) {
    refresh();
    Kokkos::fence();
    f();
    Kokkos::fence();
  }
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    refresh();
    Kokkos::fence();
    Kokkos::Timer timer;
    f();
    Kokkos::fence();
    t.push_back(timer.seconds());
  }
  return stats_of(t);
}
template <class F>
Stats time_fenced(int warmup, int reps, F&& f) {
  return time_fenced(warmup, reps, std::forward<F>(f), [] {});
}

/// The copy reference of a suite: y = x on N elements of T.
struct CopyReference {
  Stats t;              // seconds per copy
  double ns_per_point;  // t.med / N
  double gbs;           // 2 N sizeof(T) / t.med
};

/// Times the STREAM copy on N elements of T (fresh arrays; freed on return).
template <class T>
CopyReference measure_copy(const Exec& exec, std::int64_t N, int reps, int warmup = 1) {
  Kokkos::View<T*, Mem> x(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kband_bench::copy_x"), N);
  Kokkos::View<T*, Mem> y(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kband_bench::copy_y"), N);
  Kokkos::deep_copy(x, T(1));
  constexpr int U = stream_unroll<T>();
  const std::int64_t m = N / U, threads = std::max<std::int64_t>(m, N - m * U);
  const Kokkos::View<const T*, Mem> xc = x;
  const Stats s = time_fenced(warmup, reps, [&] {
    Kokkos::parallel_for("kband_bench::copy", Policy(exec, 0, threads), CopyK<T, U>{xc, y, m, N});
  });
  CopyReference c;
  c.t = s;
  c.ns_per_point = s.med * 1e9 / static_cast<double>(N);
  c.gbs = 2.0 * sizeof(T) * static_cast<double>(N) / s.med * 1e-9;
  return c;
}

/// Fills the bandwidth fields of a row from its time, its minimum data
/// movement (elements of T per point) and the copy reference.
inline void finish_row(Row& r, const Stats& s, const CopyReference& copy) {
  r.t_med = s.med;
  r.t_min = s.min;
  r.t_max = s.max;
  r.ns_per_point = r.points > 0 ? s.med * 1e9 / static_cast<double>(r.points) : 0;
  r.gbs = s.med > 0 ? r.elems_per_point * r.elem_bytes * static_cast<double>(r.points) / s.med * 1e-9 : 0;
  r.bw_ratio = copy.gbs > 0 ? r.gbs / copy.gbs : 0;
  r.time_ratio = copy.ns_per_point > 0 ? r.ns_per_point / copy.ns_per_point : 0;
}

}  // namespace kband_bench
