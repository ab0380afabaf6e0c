// kband::mpi core: MPI error checks, collective argument errors, datatype
// mapping and the device-buffer policy (GPU-aware MPI or host staging).
//
// kband never calls MPI_Init or MPI_Finalize: every object takes the
// communicator to use (MPI_COMM_WORLD or any other) and must be destroyed
// before the application finalises MPI.
#pragma once

#include <mpi.h>
#if defined(OPEN_MPI) && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif
#endif

#include "kband_Core.hpp"

#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

namespace kband {
namespace mpi {

/// Throws kband::Error on a failed MPI call, naming the call.
inline void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw Error(kband::impl::concat(what, " failed: ", std::string(msg, len)));
  }
}

/// True when every rank of `comm` passes `ok`; a collective agreement used so
/// that an argument error seen by one rank makes every rank throw.
inline bool all_ok(bool ok, MPI_Comm comm) {
  kband::impl::ProfilingRegion region("kband::mpi::all_ok");
  int local = ok ? 1 : 0, global = 0;
  check(MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  return global == 1;
}

/// Collective form of kband::impl::require: every rank of `comm` calls it. When any
/// rank fails, the message of the lowest failing rank is broadcast and every
/// rank throws the same kband::Error ("kband: <msg> (rank r of comm)").
/// Never deadlocks as long as every rank reaches the call.
inline void require_all(MPI_Comm comm, bool ok, const std::string& msg) {
  kband::impl::ProfilingRegion region("kband::mpi::require_all");
  int size = 1;
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  int me = 0;
  check(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
  int mine = ok ? INT_MAX : me, first = INT_MAX;
  check(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (first == INT_MAX) return;
  int len = me == first ? static_cast<int>(msg.size()) : 0;
  check(MPI_Bcast(&len, 1, MPI_INT, first, comm), "MPI_Bcast");
  std::string text = me == first ? msg : std::string(static_cast<size_t>(len), ' ');
  if (len > 0) check(MPI_Bcast(&text[0], len, MPI_CHAR, first, comm), "MPI_Bcast");
  throw Error(kband::impl::concat(text, " (rank ", first, " of ", size, ")"));
}

/// Runs `f` on every rank; a kband::Error thrown by `f` on any rank becomes the
/// same kband::Error on every rank (see require_all). Other exceptions pass
/// through unchanged (they are not argument errors).
template <class F>
void collective(MPI_Comm comm, F&& f) {
  kband::impl::ProfilingRegion region("kband::mpi::collective");
  std::string msg;
  bool ok = true;
  try {
    f();
  } catch (const Error& e) {
    ok = false;
    msg = e.what();
    if (msg.compare(0, 7, "kband: ") == 0) msg = msg.substr(7);
  }
  require_all(comm, ok, msg);
}

/// Collective check that `value` is the same on every rank of `comm`; throws
/// the same kband::Error on every rank otherwise, naming `what` and the range.
inline void require_same(MPI_Comm comm, const char* fn, const char* what, long long value) {
  kband::impl::ProfilingRegion region("kband::mpi::require_same");
  long long v[2] = {value, -value}, r[2] = {0, 0};
  check(MPI_Allreduce(v, r, 2, MPI_LONG_LONG, MPI_MIN, comm), "MPI_Allreduce");
  if (r[0] != -r[1])  // the same outcome on every rank
    throw Error(kband::impl::concat(fn, ": ", what, " differs across ranks (from ", r[0], " to ", -r[1], ")"));
}

/// The same as require_same for a host array of doubles, compared bitwise
/// (operator coefficients). `what` names the array.
inline void require_same_bits(MPI_Comm comm, const char* fn, const char* what, const std::vector<double>& v) {
  kband::impl::ProfilingRegion region("kband::mpi::require_same_bits");
  require_same(comm, fn, kband::impl::concat(what, " length").c_str(), static_cast<long long>(v.size()));
  unsigned long long h = 1469598103934665603ull;  // FNV-1a over the bytes
  for (double x : v) {
    const unsigned char* p = reinterpret_cast<const unsigned char*>(&x);
    for (size_t b = 0; b < sizeof(double); ++b) h = (h ^ p[b]) * 1099511628211ull;
  }
  unsigned long long lo = 0, hi = 0;
  check(MPI_Allreduce(&h, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm), "MPI_Allreduce");
  check(MPI_Allreduce(&h, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm), "MPI_Allreduce");
  if (lo != hi) throw Error(kband::impl::concat(fn, ": ", what, " differ across ranks"));
}

/// MPI datatype of T (float, double, int, long long).
template <class T>
MPI_Datatype datatype();
template <>
inline MPI_Datatype datatype<double>() { return MPI_DOUBLE; }
template <>
inline MPI_Datatype datatype<float>() { return MPI_FLOAT; }
template <>
inline MPI_Datatype datatype<int>() { return MPI_INT; }
template <>
inline MPI_Datatype datatype<long long>() { return MPI_LONG_LONG; }

// ---------------------------------------------------------------------------
// Device buffers: direct (GPU-aware MPI) or staged through host memory.
// ---------------------------------------------------------------------------

/// Whether the MPI library accepts device pointers, as a runtime setting:
/// the environment variable KBAND_MPI_GPU_AWARE (1/yes/on or 0/no/off) when
/// set; otherwise MPIX_Query_cuda_support() where the MPI provides it (Open
/// MPI built with CUDA); otherwise false.
inline bool gpu_aware_default() {
  if (const char* e = std::getenv("KBAND_MPI_GPU_AWARE")) {
    const std::string v(e);
    if (v == "1" || v == "yes" || v == "on" || v == "ON" || v == "true") return true;
    if (v == "0" || v == "no" || v == "off" || v == "OFF" || v == "false") return false;
  }
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

/// How message buffers reach MPI. Auto: directly when the memory space is
/// host-accessible or `gpu_aware` is true, else through host mirrors.
/// Direct / Staged force one path (Staged on host memory copies into separate
/// host buffers: the staging code path, exercised by the tests).
/// CudaIPC (CUDA builds, device memory, neighbours on one node): the data go
/// device to device (cudaMemcpyAsync into the neighbour's receive buffer,
/// mapped once with cudaIpcOpenMemHandle; NVLink where present, or stores
/// by the kernels that make the data); the devices wait for each other on
/// interprocess events, and MPI carries only a word per exchange saying that
/// the event is recorded: GPU-to-GPU transfers without a GPU-aware MPI.
enum class BufferPath { Auto, Direct, Staged, CudaIPC };

/// The default BufferPath, as a runtime setting: the environment variable
/// KBAND_MPI_PATH (auto, direct, staged or ipc) when set, else Auto. Any
/// other value throws kband::Error.
inline BufferPath path_default() {
  const char* e = std::getenv("KBAND_MPI_PATH");
  if (!e || !*e) return BufferPath::Auto;
  const std::string v(e);
  if (v == "auto") return BufferPath::Auto;
  if (v == "direct") return BufferPath::Direct;
  if (v == "staged") return BufferPath::Staged;
  if (v == "ipc" || v == "cuda-ipc") return BufferPath::CudaIPC;
  throw Error(kband::impl::concat("kband::mpi: KBAND_MPI_PATH='", v, "' is not one of auto, direct, staged, ipc"));
}

struct CommConfig {
  bool gpu_aware = gpu_aware_default();
  BufferPath path = path_default();
  /// First MPI tag kband uses on the grid's communicator (kband uses tags
  /// tag_base .. tag_base + 21).
  int tag_base = 7200;
  /// kband::mpi::DistDerivative: one message each way per call (the halo
  /// rows and the boundary rows together) where every subdomain is long
  /// enough (DistD2Plan::far() below epsilon); false: two exchanges.
  bool one_message = true;
};

/// True when buffers in memory space Mem are passed to MPI directly.
template <class Mem>
bool direct_path(const CommConfig& cfg) {
  if (cfg.path != BufferPath::Auto) return cfg.path != BufferPath::Staged;
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible || cfg.gpu_aware;
}

inline const char* path_name(bool direct) { return direct ? "direct" : "staged"; }
inline const char* path_name(BufferPath p) {
  return p == BufferPath::Auto ? "auto"
                               : (p == BufferPath::Direct ? "direct" : (p == BufferPath::Staged ? "staged" : "cuda-ipc"));
}

}  // namespace mpi
}  // namespace kband
