// The two flat storage formats of batched pentadiagonal systems (the storage
// annex of the PCR-Penta paper), and their conversion to and from kband's
// batches.
//
// A batch of nsys systems of n rows is six flat arrays a, b, c, d, e, y of
// nsys*n elements (row j of system s: a x(j-2) + b x(j-1) + c x(j) + d x(j+1)
// + e x(j+2) = y):
//  * PentaFormat::Contiguous (PCR-Penta): element (s, j) at s*n + j, every
//    system's rows adjacent: the memory order of kband::ContiguousBatch;
//  * PentaFormat::Interleaved (cuPentaBatch, cuSPARSE gpsvInterleavedBatch,
//    cuBLAS getrfBatched users): element (s, j) at j*nsys + s, the system
//    index fastest: the memory order of kband::InterleavedBatch.
// In both, the entries outside the matrix are stored as zeros: a(s,0),
// a(s,1), b(s,0), d(s,n-1), e(s,n-2), e(s,n-1) (the annex's 7x7 example:
// d_a = (0, 0, a3, .., a7, 0, 0, p3, ..) contiguous, (0, 0, 0, 0, a3, p3, ..)
// interleaved). kband's solvers ignore those entries, so a flat array of
// either format can also be handed to kband without a copy (contiguous_view,
// interleaved_view); export_penta writes the zeros exactly where the annex
// puts them.
#pragma once

#include "kband_Layouts.hpp"

namespace kband {

enum class PentaFormat { Contiguous, Interleaved };

/// The six arrays of the annex; which one decides where the zeros sit.
enum class PentaArray { A, B, C, D, E, Y };

/// True where the annex stores a structural zero: row j of array `w` lies
/// outside an n-row matrix.
KOKKOS_INLINE_FUNCTION bool penta_structural_zero(PentaArray w, int j, int n) {
  switch (w) {
    case PentaArray::A: return j < 2;
    case PentaArray::B: return j < 1;
    case PentaArray::D: return j > n - 2;
    case PentaArray::E: return j > n - 3;
    default: return false;
  }
}

/// Position of element (s, j) in a flat array of format f.
KOKKOS_INLINE_FUNCTION size_t penta_index(PentaFormat f, int nsys, int n, int s, int j) {
  return f == PentaFormat::Contiguous ? static_cast<size_t>(s) * n + j : static_cast<size_t>(j) * nsys + s;
}

/// The six flat arrays of one batch in one format (each of nsys*n elements).
template <class T, class MemSpace = Kokkos::DefaultExecutionSpace::memory_space>
struct PentaArrays {
  using value_type = T;
  using view_type = Kokkos::View<T*, MemSpace>;
  PentaFormat format = PentaFormat::Contiguous;
  int nsys = 0, n = 0;
  view_type a, b, c, d, e, y;

  PentaArrays() = default;
  /// Allocates six zero-initialised arrays.
  PentaArrays(const std::string& label, PentaFormat f, int nsys_, int n_) : format(f), nsys(nsys_), n(n_) {
    impl::require(nsys_ >= 0 && n_ >= 0, impl::concat("PentaArrays '", label, "': nsys (", nsys_, ") and n (", n_,
                                                      ") must be non-negative"));
    const size_t len = static_cast<size_t>(nsys_) * n_;
    a = view_type(label + "_a", len), b = view_type(label + "_b", len), c = view_type(label + "_c", len);
    d = view_type(label + "_d", len), e = view_type(label + "_e", len), y = view_type(label + "_y", len);
  }
  const view_type& array(PentaArray w) const {
    switch (w) {
      case PentaArray::A: return a;
      case PentaArray::B: return b;
      case PentaArray::C: return c;
      case PentaArray::D: return d;
      case PentaArray::E: return e;
      default: return y;
    }
  }
};

namespace impl {

template <class V>
void check_flat(const char* fn, const V& flat, int nsys, int n) {
  static_assert(V::rank == 1, "kband: a flat pentadiagonal array must be a rank-1 View");
  require(flat.extent(0) == static_cast<size_t>(nsys) * n,
          concat(fn, ": flat array '", flat.label(), "' has ", flat.extent(0), " elements, expected nsys*n = ", nsys,
                 "*", n, " = ", static_cast<size_t>(nsys) * n));
}

template <class V, class B>
struct PentaImport {
  V flat;
  B dst;
  PentaFormat f;
  int nsys, n;
  KOKKOS_INLINE_FUNCTION void operator()(const size_t k) const {
    int s, j;
    if (batch_traits<B>::decode(dst, k, s, j)) dst(s, j) = flat(penta_index(f, nsys, n, s, j));
  }
};

template <class B, class V>
struct PentaExport {
  B src;
  V flat;
  PentaFormat f;
  PentaArray w;
  int nsys, n;
  KOKKOS_INLINE_FUNCTION void operator()(const size_t k) const {
    const int s = static_cast<int>(f == PentaFormat::Contiguous ? k / n : k % nsys);
    const int j = static_cast<int>(f == PentaFormat::Contiguous ? k % n : k / nsys);
    flat(k) = penta_structural_zero(w, j, n) ? batch_value_t<B>(0) : src(s, j);
  }
};

}  // namespace impl

/// Copies one flat array of format f into a kband batch (any layout) whose
/// extents (nsys, n) give the flat array's shape. Bit-exact (the zeros too).
template <class Exec, class V, class B>
void import_penta_array(const Exec& exec, PentaFormat f, const V& flat, const B& dst) {
  const char* fn = "kband::import_penta_array";
  impl::ProfilingRegion region(fn);
  using tb = impl::batch_traits<B>;
  static_assert(tb::is_batch, "kband::import_penta_array: dst must be a kband batch");
  impl::require_accessible<V, Exec>("flat");
  const int nsys = tb::nsys(dst), n = tb::n(dst);
  impl::check_flat(fn, flat, nsys, n);
  if (nsys == 0 || n == 0) return;
  Kokkos::parallel_for(fn, impl::Range<Exec, Kokkos::IndexType<size_t>>(exec, 0, tb::flat_size(dst)),
                       impl::PentaImport<V, B>{flat, dst, f, nsys, n});
}

/// Writes a kband batch into one flat array of format f, with the annex's
/// structural zeros for array `w` (whatever the batch holds there).
template <class Exec, class B, class V>
void export_penta_array(const Exec& exec, PentaFormat f, PentaArray w, const B& src, const V& flat) {
  const char* fn = "kband::export_penta_array";
  impl::ProfilingRegion region(fn);
  using tb = impl::batch_traits<B>;
  static_assert(tb::is_batch, "kband::export_penta_array: src must be a kband batch");
  impl::require_accessible<V, Exec>("flat");
  const int nsys = tb::nsys(src), n = tb::n(src);
  impl::check_flat(fn, flat, nsys, n);
  if (nsys == 0 || n == 0) return;
  Kokkos::parallel_for(fn, impl::Range<Exec, Kokkos::IndexType<size_t>>(exec, 0, flat.extent(0)),
                       impl::PentaExport<B, V>{src, flat, f, w, nsys, n});
}

/// Imports all six arrays into batches of any one layout with extents
/// (src.nsys, src.n).
template <class Exec, class T, class M, class BA, class BB, class BC, class BD, class BE, class BY>
void import_penta(const Exec& exec, const PentaArrays<T, M>& src, const BA& a, const BB& b, const BC& c,
                  const BD& d, const BE& e, const BY& y) {
  impl::ProfilingRegion region("kband::import_penta");
  impl::check_batch("kband::import_penta", "a", a, src.nsys, src.n);
  import_penta_array(exec, src.format, src.a, a);
  import_penta_array(exec, src.format, src.b, b);
  import_penta_array(exec, src.format, src.c, c);
  import_penta_array(exec, src.format, src.d, d);
  import_penta_array(exec, src.format, src.e, e);
  import_penta_array(exec, src.format, src.y, y);
}

/// Exports six batches into dst (format, nsys and n of dst), zeros included.
template <class Exec, class BA, class BB, class BC, class BD, class BE, class BY, class T, class M>
void export_penta(const Exec& exec, const BA& a, const BB& b, const BC& c, const BD& d, const BE& e, const BY& y,
                  const PentaArrays<T, M>& dst) {
  impl::ProfilingRegion region("kband::export_penta");
  impl::check_batch("kband::export_penta", "a", a, dst.nsys, dst.n);
  export_penta_array(exec, dst.format, PentaArray::A, a, dst.a);
  export_penta_array(exec, dst.format, PentaArray::B, b, dst.b);
  export_penta_array(exec, dst.format, PentaArray::C, c, dst.c);
  export_penta_array(exec, dst.format, PentaArray::D, d, dst.d);
  export_penta_array(exec, dst.format, PentaArray::E, e, dst.e);
  export_penta_array(exec, dst.format, PentaArray::Y, y, dst.y);
}

/// A flat PCR-Penta-format array (nsys*n elements) seen, without a copy, as
/// the ContiguousBatch (nsys, n) of the same memory (it must outlive the batch).
template <class T, class... P>
ContiguousBatch<T, typename Kokkos::View<T*, P...>::memory_space> contiguous_view(const Kokkos::View<T*, P...>& flat,
                                                                                 int nsys, int n) {
  impl::check_flat("kband::contiguous_view", flat, nsys, n);
  impl::require(flat.span_is_contiguous(), "kband::contiguous_view: the flat array must be contiguous");
  return ContiguousBatch<T, typename Kokkos::View<T*, P...>::memory_space>(flat.data(), nsys, n);
}

/// A flat interleaved-format array (cuPentaBatch / gpsvInterleavedBatch) seen,
/// without a copy, as the InterleavedBatch (nsys, n) of the same memory.
template <class T, class... P>
InterleavedBatch<T, typename Kokkos::View<T*, P...>::memory_space> interleaved_view(
    const Kokkos::View<T*, P...>& flat, int nsys, int n) {
  impl::check_flat("kband::interleaved_view", flat, nsys, n);
  impl::require(flat.span_is_contiguous(), "kband::interleaved_view: the flat array must be contiguous");
  return InterleavedBatch<T, typename Kokkos::View<T*, P...>::memory_space>(flat.data(), nsys, n);
}

}  // namespace kband
