// kband-bench: peer solvers timed on the same systems as kband.
//
//  * cuSPARSE (CUDA Kokkos, CMake option KBAND_ENABLE_CUDA_PEERS):
//      gtsv2StridedBatch      on the contiguous layout (batchStride = n),
//      gtsvInterleavedBatch   on the interleaved layout, algo 0 (cuThomas),
//                             1 (LU with partial pivoting), 2 (QR).
//    Both overwrite the right-hand side with the solution and
//    gtsvInterleavedBatch may also overwrite dl, d, du; the driver refreshes
//    those working arrays from pristine copies before every repetition,
//    outside the timed region (fenced), so only the solver call is timed.
//    The scratch buffer is allocated once per configuration, outside timing.
//  * Kokkos Kernels >= 4.5 (KokkosBatched::SerialPttrf + SerialPttrs, SPD
//    tridiagonal, L D L^T, overwrites d, e and the right-hand side in place):
//    one thread per system over strided row views, any of the three layouts;
//    refreshed like the cuSPARSE inputs.
#pragma once

#include "bench_problem.hpp"

#if defined(KOKKOS_ENABLE_CUDA) && defined(KBAND_BENCH_HAVE_CUSPARSE)
#define KBAND_BENCH_CUSPARSE 1
#include <cuda_runtime.h>
#include <cusparse.h>
#else
#define KBAND_BENCH_CUSPARSE 0
#endif

#if defined(KBAND_BENCH_HAVE_KOKKOSKERNELS)
#if defined(__has_include)
#if __has_include(<KokkosKernels_config.h>)
#include <KokkosKernels_config.h>
#endif
#endif
#endif
#if defined(KBAND_BENCH_HAVE_KOKKOSKERNELS) && defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40500
#define KBAND_BENCH_KK_PTTRF 1
#include <KokkosBatched_Pttrf.hpp>
#include <KokkosBatched_Pttrs.hpp>
#else
#define KBAND_BENCH_KK_PTTRF 0
#endif

namespace kband_bench {

// ---------------------------------------------------------------------------
// cuSPARSE
// ---------------------------------------------------------------------------
#if KBAND_BENCH_CUSPARSE
inline const char* cusparse_error(cusparseStatus_t st) { return cusparseGetErrorString(st); }

template <class T>
struct CusparseGtsv;

template <>
struct CusparseGtsv<double> {
  static cusparseStatus_t strided_buffer(cusparseHandle_t h, int m, const double* dl, const double* d,
                                         const double* du, const double* x, int nb, int stride, size_t* sz) {
    return cusparseDgtsv2StridedBatch_bufferSizeExt(h, m, dl, d, du, x, nb, stride, sz);
  }
  static cusparseStatus_t strided(cusparseHandle_t h, int m, const double* dl, const double* d,
                                  const double* du, double* x, int nb, int stride, void* buf) {
    return cusparseDgtsv2StridedBatch(h, m, dl, d, du, x, nb, stride, buf);
  }
  static cusparseStatus_t interleaved_buffer(cusparseHandle_t h, int algo, int m, const double* dl,
                                             const double* d, const double* du, const double* x, int nb,
                                             size_t* sz) {
    return cusparseDgtsvInterleavedBatch_bufferSizeExt(h, algo, m, dl, d, du, x, nb, sz);
  }
  static cusparseStatus_t interleaved(cusparseHandle_t h, int algo, int m, double* dl, double* d, double* du,
                                      double* x, int nb, void* buf) {
    return cusparseDgtsvInterleavedBatch(h, algo, m, dl, d, du, x, nb, buf);
  }
};

template <>
struct CusparseGtsv<float> {
  static cusparseStatus_t strided_buffer(cusparseHandle_t h, int m, const float* dl, const float* d,
                                         const float* du, const float* x, int nb, int stride, size_t* sz) {
    return cusparseSgtsv2StridedBatch_bufferSizeExt(h, m, dl, d, du, x, nb, stride, sz);
  }
  static cusparseStatus_t strided(cusparseHandle_t h, int m, const float* dl, const float* d, const float* du,
                                  float* x, int nb, int stride, void* buf) {
    return cusparseSgtsv2StridedBatch(h, m, dl, d, du, x, nb, stride, buf);
  }
  static cusparseStatus_t interleaved_buffer(cusparseHandle_t h, int algo, int m, const float* dl,
                                             const float* d, const float* du, const float* x, int nb,
                                             size_t* sz) {
    return cusparseSgtsvInterleavedBatch_bufferSizeExt(h, algo, m, dl, d, du, x, nb, sz);
  }
  static cusparseStatus_t interleaved(cusparseHandle_t h, int algo, int m, float* dl, float* d, float* du,
                                      float* x, int nb, void* buf) {
    return cusparseSgtsvInterleavedBatch(h, algo, m, dl, d, du, x, nb, buf);
  }
};

/// One cuSPARSE handle bound to the Kokkos execution space instance's stream,
/// and a scratch buffer from cudaMalloc (cuSPARSE wants 128-byte alignment,
/// which Kokkos allocations do not promise).
class CusparseContext {
 public:
  explicit CusparseContext(const Exec& exec) {
    if (cusparseCreate(&h_) != CUSPARSE_STATUS_SUCCESS) throw std::runtime_error("cusparseCreate failed");
    cusparseSetStream(h_, exec.cuda_stream());
  }
  ~CusparseContext() {
    release();
    cusparseDestroy(h_);
  }
  CusparseContext(const CusparseContext&) = delete;
  CusparseContext& operator=(const CusparseContext&) = delete;
  cusparseHandle_t handle() const { return h_; }
  /// Returns nullptr (and an empty message) on success.
  void* buffer(size_t bytes, std::string& err) {
    if (bytes < 256) bytes = 256;
    if (bytes > size_) {
      release();
      if (cudaMalloc(&buf_, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        buf_ = nullptr;
        err = kband::impl::concat("cudaMalloc of ", bytes, " bytes for the cuSPARSE buffer failed");
        return nullptr;
      }
      size_ = bytes;
    }
    return buf_;
  }
  void release() {
    if (buf_) cudaFree(buf_);
    buf_ = nullptr;
    size_ = 0;
  }

 private:
  cusparseHandle_t h_ = nullptr;
  void* buf_ = nullptr;
  size_t size_ = 0;
};
#endif  // KBAND_BENCH_CUSPARSE

// ---------------------------------------------------------------------------
// Kokkos Kernels batched pttrf + pttrs
// ---------------------------------------------------------------------------
#if KBAND_BENCH_KK_PTTRF
template <class T, class Ops>
struct KKPttrfSolve {
  typename Ops::raw_type D, E, X;  // diagonal, off-diagonal (first n-1 rows used), rhs -> solution
  Kokkos::View<int*, Mem> info;
  int n;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    const int s = static_cast<int>(k);
    auto d = Ops::row(D, s);
    auto e = Ops::row_head(E, s, n - 1);
    auto x = Ops::row(X, s);
    int r = KokkosBatched::SerialPttrf<KokkosBatched::Algo::Pttrf::Unblocked>::invoke(d, e);
    if (r == 0)
      r = KokkosBatched::SerialPttrs<KokkosBatched::Uplo::Lower, KokkosBatched::Algo::Pttrs::Unblocked>::invoke(
          d, e, x);
    info(s) = r;
  }
};
#endif

}  // namespace kband_bench
