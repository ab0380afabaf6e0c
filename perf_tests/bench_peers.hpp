// kband-bench: peer solvers timed on the same systems as kband.
//
//  * cuSPARSE (CUDA Kokkos, CMake option KBAND_ENABLE_CUDA_PEERS):
//      gtsv2StridedBatch      on the contiguous layout (batchStride = n),
//      gtsvInterleavedBatch   on the interleaved layout, algo 0 (cuThomas),
//                             1 (LU with partial pivoting), 2 (QR),
//      gtsv2_nopivot          one call per system (contiguous layout, few
//                             long systems: the hybrid block).
//    Both overwrite the right-hand side with the solution and
//    gtsvInterleavedBatch may also overwrite dl, d, du; the driver refreshes
//    those working arrays from pristine copies before every repetition,
//    outside the timed region (fenced), so only the solver call is timed.
//    The scratch buffer is allocated once per configuration, outside timing.
//  * Kokkos Kernels >= 4.5 (KokkosBatched::SerialPttrf + SerialPttrs, SPD
//    tridiagonal, L D L^T, overwrites d, e and the right-hand side in place):
//    one thread per system over strided row views, any of the three layouts;
//    refreshed like the cuSPARSE inputs.
//
// Dense peers of kband::solve_symmetric (batch of d x d SPD matrices):
//  * Kokkos Kernels >= 4.0: KokkosBatched::SerialLU + SerialSolveLU (no
//    pivoting; one thread per matrix, on a LayoutLeft copy so that the matrix
//    index is the fastest and a warp's loads coalesce) and TeamLU +
//    TeamSolveLU (one team per matrix, LayoutRight copy).
//  * cuBLAS (CUDA Kokkos, KBAND_ENABLE_CUDA_PEERS): cublas<t>getrfBatched +
//    cublas<t>getrsBatched (partial pivoting), column-major = row-major for a
//    symmetric A; pointer arrays built once, outside timing.
//  All factor in place: the matrix and right-hand side copies are refreshed
//  from the pristine arrays before every call, fenced, outside the timed region.
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
#if defined(KBAND_BENCH_HAVE_KOKKOSKERNELS) && defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40000
#define KBAND_BENCH_KK_LU 1
#include <KokkosBatched_LU_Decl.hpp>
#include <KokkosBatched_LU_Serial_Impl.hpp>
#include <KokkosBatched_LU_Team_Impl.hpp>
#include <KokkosBatched_SolveLU_Decl.hpp>
#else
#define KBAND_BENCH_KK_LU 0
#endif

#if defined(KOKKOS_ENABLE_CUDA) && defined(KBAND_BENCH_HAVE_CUBLAS)
#define KBAND_BENCH_CUBLAS 1
#include <cublas_v2.h>
#include <cuda_runtime.h>
#else
#define KBAND_BENCH_CUBLAS 0
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
  static cusparseStatus_t nopivot_buffer(cusparseHandle_t h, int m, const double* dl, const double* d,
                                         const double* du, const double* x, size_t* sz) {
    return cusparseDgtsv2_nopivot_bufferSizeExt(h, m, 1, dl, d, du, x, m, sz);
  }
  static cusparseStatus_t nopivot(cusparseHandle_t h, int m, const double* dl, const double* d, const double* du,
                                  double* x, void* buf) {
    return cusparseDgtsv2_nopivot(h, m, 1, dl, d, du, x, m, buf);
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
  static cusparseStatus_t nopivot_buffer(cusparseHandle_t h, int m, const float* dl, const float* d,
                                         const float* du, const float* x, size_t* sz) {
    return cusparseSgtsv2_nopivot_bufferSizeExt(h, m, 1, dl, d, du, x, m, sz);
  }
  static cusparseStatus_t nopivot(cusparseHandle_t h, int m, const float* dl, const float* d, const float* du,
                                  float* x, void* buf) {
    return cusparseSgtsv2_nopivot(h, m, 1, dl, d, du, x, m, buf);
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

// ---------------------------------------------------------------------------
// Kokkos Kernels batched dense LU (no pivoting) + LU solve
// ---------------------------------------------------------------------------
#if KBAND_BENCH_KK_LU
/// One thread per matrix. A (nmat, d, d) and X (nmat, d) of any layout; the
/// right-hand side is passed to the triangular solves as a (d, 1) matrix.
template <class T, class VA, class VX>
struct KKDenseLUSerial {
  VA A;
  VX X;
  Kokkos::View<int*, Mem> info;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    namespace KB = KokkosBatched;
    const int m = static_cast<int>(k);
    const int d = static_cast<int>(A.extent(1));
    auto a = Kokkos::subview(A, m, Kokkos::ALL(), Kokkos::ALL());
    const Kokkos::View<T**, Kokkos::LayoutStride, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> x(
        &X(m, 0), Kokkos::LayoutStride(d, X.stride(1), 1, 1));
    int r = KB::SerialLU<KB::Algo::LU::Unblocked>::invoke(a);
    if (r == 0) r = KB::SerialSolveLU<KB::Trans::NoTranspose, KB::Algo::SolveLU::Unblocked>::invoke(a, x);
    info(m) = r;
  }
};

/// One team per matrix (TeamLU + TeamSolveLU on the matrix in global memory).
template <class T, class VA, class VX>
struct KKDenseLUTeam {
  using member_type = typename Kokkos::TeamPolicy<Exec>::member_type;
  VA A;
  VX X;
  Kokkos::View<int*, Mem> info;
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    namespace KB = KokkosBatched;
    const int m = team.league_rank();
    const int d = static_cast<int>(A.extent(1));
    auto a = Kokkos::subview(A, m, Kokkos::ALL(), Kokkos::ALL());
    const Kokkos::View<T**, Kokkos::LayoutStride, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> x(
        &X(m, 0), Kokkos::LayoutStride(d, X.stride(1), 1, 1));
    int r = KB::TeamLU<member_type, KB::Algo::LU::Unblocked>::invoke(team, a);
    team.team_barrier();
    if (r == 0)
      r = KB::TeamSolveLU<member_type, KB::Trans::NoTranspose, KB::Algo::SolveLU::Unblocked>::invoke(team, a, x);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { info(m) = r; });
  }
};
#endif

// ---------------------------------------------------------------------------
// cuBLAS batched getrf + getrs
// ---------------------------------------------------------------------------
#if KBAND_BENCH_CUBLAS
inline const char* cublas_error(cublasStatus_t st) {
  switch (st) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "cuBLAS error";
  }
}

template <class T>
struct CublasGetrf;

template <>
struct CublasGetrf<double> {
  static cublasStatus_t getrf(cublasHandle_t h, int n, double* const A[], int lda, int* piv, int* info, int nb) {
    return cublasDgetrfBatched(h, n, A, lda, piv, info, nb);
  }
  static cublasStatus_t getrs(cublasHandle_t h, int n, const double* const A[], int lda, const int* piv,
                              double* const B[], int ldb, int* info, int nb) {
    return cublasDgetrsBatched(h, CUBLAS_OP_N, n, 1, A, lda, piv, B, ldb, info, nb);
  }
};

template <>
struct CublasGetrf<float> {
  static cublasStatus_t getrf(cublasHandle_t h, int n, float* const A[], int lda, int* piv, int* info, int nb) {
    return cublasSgetrfBatched(h, n, A, lda, piv, info, nb);
  }
  static cublasStatus_t getrs(cublasHandle_t h, int n, const float* const A[], int lda, const int* piv,
                              float* const B[], int ldb, int* info, int nb) {
    return cublasSgetrsBatched(h, CUBLAS_OP_N, n, 1, A, lda, piv, B, ldb, info, nb);
  }
};

/// A cuBLAS handle on the execution space instance's stream, and the device
/// pointer arrays (matrix m at A + m*d*d, right-hand side at B + m*d) and
/// pivots of one batch, built once.
template <class T>
class CublasBatch {
 public:
  CublasBatch(const Exec& exec, T* A, T* B, int nmat, int d) {
    if (cublasCreate(&h_) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate failed");
    cublasSetStream(h_, exec.cuda_stream());
    std::vector<T*> ha(nmat), hb(nmat);
    for (int m = 0; m < nmat; ++m) {
      ha[m] = A + static_cast<std::size_t>(m) * d * d;
      hb[m] = B + static_cast<std::size_t>(m) * d;
    }
    const std::size_t pb = sizeof(T*) * static_cast<std::size_t>(nmat);
    if (cudaMalloc(reinterpret_cast<void**>(&pa_), pb) != cudaSuccess ||
        cudaMalloc(reinterpret_cast<void**>(&pb_), pb) != cudaSuccess ||
        cudaMemcpy(pa_, ha.data(), pb, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(pb_, hb.data(), pb, cudaMemcpyHostToDevice) != cudaSuccess) {
      (void)cudaGetLastError();
      release();
      throw std::runtime_error("cuBLAS pointer arrays: cudaMalloc/cudaMemcpy failed");
    }
  }
  ~CublasBatch() { release(); }
  CublasBatch(const CublasBatch&) = delete;
  CublasBatch& operator=(const CublasBatch&) = delete;
  cublasHandle_t handle() const { return h_; }
  T* const* a() const { return pa_; }
  T* const* b() const { return pb_; }

 private:
  void release() {
    if (pa_) cudaFree(pa_);
    if (pb_) cudaFree(pb_);
    pa_ = pb_ = nullptr;
    if (h_) cublasDestroy(h_);
    h_ = nullptr;
  }
  cublasHandle_t h_ = nullptr;
  T** pa_ = nullptr;
  T** pb_ = nullptr;
};
#endif  // KBAND_BENCH_CUBLAS

}  // namespace kband_bench
