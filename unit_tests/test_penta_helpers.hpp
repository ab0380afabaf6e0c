// Helpers of the pentadiagonal tests (test_penta.cpp, test_penta_formats.cpp):
// random pentadiagonal systems, their dense long double reference, and the
// upload of a case into kband batches. Same portability rules as
// kband_test_common.hpp.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "kband_test_solvers.hpp"

namespace kband_test {

/// Row-major dense matrix of one pentadiagonal system: row j holds a[j] at
/// column j-2, b[j] at j-1, c[j] at j, d[j] at j+1, e[j] at j+2. Ordinary
/// systems drop the entries outside the matrix (which may hold anything, NaN
/// included); periodic systems (n >= 5) take every column modulo n.
template <class T>
std::vector<real_ref> dense_pentadiagonal(int n, const T* a, const T* b, const T* c, const T* d, const T* e,
                                          bool periodic) {
  std::vector<real_ref> m(static_cast<size_t>(n) * n, real_ref(0));
  for (int j = 0; j < n; ++j) {
    const T* v[5] = {a, b, c, d, e};
    for (int k = 0; k < 5; ++k) {
      int col = j + k - 2;
      if (periodic) col = (col + n) % n;
      else if (col < 0 || col >= n) continue;
      m[static_cast<size_t>(j) * n + col] += v[k][j];
    }
  }
  return m;
}

/// A batch of pentadiagonal systems with its reference solution. Shared cases
/// hold one matrix (n entries per diagonal), per-system cases nsys*n,
/// system-major, like y and xref.
template <class T>
struct PentaCase {
  int n = 0, nsys = 0;
  bool shared = false, periodic = false;
  std::vector<T> a, b, c, d, e, y;
  std::vector<real_ref> xref;
  size_t idx(int s, int j) const { return static_cast<size_t>(s) * n + j; }
  std::vector<T>* diag(int k) {
    std::vector<T>* v[5] = {&a, &b, &c, &d, &e};
    return v[k];
  }
};

/// Strictly diagonally dominant rows: a, b, d, e uniform in [-1, 1], |c| =
/// |a| + |b| + |d| + |e| + U(0.5, 1.5) (corners included when periodic),
/// random sign. Ordinary systems get NaN in the entries outside the matrix.
template <class T>
void generate_penta(Rng& rng, int n, bool periodic, T* a, T* b, T* c, T* d, T* e) {
  for (int j = 0; j < n; ++j) {
    T* off[4] = {a, b, d, e};
    const int col[4] = {j - 2, j - 1, j + 1, j + 2};
    double sum = 0;
    for (int k = 0; k < 4; ++k) {
      const bool inside = col[k] >= 0 && col[k] < n;
      off[k][j] = static_cast<T>(rng.uniform(-1, 1));
      if (inside || periodic) sum += std::fabs(static_cast<double>(off[k][j]));
      else off[k][j] = nan_value<T>();
    }
    c[j] = static_cast<T>(rng.sign() * (sum + rng.uniform(0.5, 1.5)));
  }
}

template <class T>
void penta_reference(PentaCase<T>& cs) {
  const int n = cs.n;
  cs.xref.assign(static_cast<size_t>(cs.nsys) * n, 0);
  for (int s = 0; s < cs.nsys; ++s) {
    const size_t o = cs.shared ? 0 : cs.idx(s, 0);
    DenseLU lu(dense_pentadiagonal(n, cs.a.data() + o, cs.b.data() + o, cs.c.data() + o, cs.d.data() + o,
                                   cs.e.data() + o, cs.periodic),
               n);
    if (lu.singular()) throw std::runtime_error("kband_test: singular pentadiagonal reference matrix");
    const auto x = lu.solve(cs.y.data() + cs.idx(s, 0));
    std::copy(x.begin(), x.end(), cs.xref.begin() + cs.idx(s, 0));
  }
}

template <class T>
PentaCase<T> make_penta_case(int n, int nsys, bool shared, bool periodic) {
  PentaCase<T> cs;
  cs.n = n, cs.nsys = nsys, cs.shared = shared, cs.periodic = periodic;
  Rng rng(mix_seed({sizeof(T), 0x9e47a, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(nsys),
                    static_cast<std::uint64_t>(shared), static_cast<std::uint64_t>(periodic)}));
  const size_t len = static_cast<size_t>(shared ? 1 : nsys) * n;
  for (int k = 0; k < 5; ++k) cs.diag(k)->resize(len);
  for (size_t o = 0; o < len; o += n)
    generate_penta(rng, n, periodic, cs.a.data() + o, cs.b.data() + o, cs.c.data() + o, cs.d.data() + o,
                   cs.e.data() + o);
  cs.y.resize(static_cast<size_t>(nsys) * n);
  for (auto& v : cs.y) v = static_cast<T>(rng.uniform(-1, 1));
  penta_reference(cs);
  return cs;
}

/// Cached: every layout's suite shares one reference per case.
template <class T>
const PentaCase<T>& get_penta_case(int n, int nsys, bool shared, bool periodic) {
  static std::map<std::tuple<int, int, bool, bool>, PentaCase<T>> cache;
  const auto key = std::make_tuple(n, nsys, shared, periodic);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, make_penta_case<T>(n, nsys, shared, periodic)).first;
  return it->second;
}

/// A per-system case on the device in batch type B.
template <class B>
struct PentaBatches {
  B a, b, c, d, e, y;
  template <class T>
  explicit PentaBatches(const PentaCase<T>& cs)
      : a(make_batch<B>("a", cs.nsys, cs.n, cs.a)),
        b(make_batch<B>("b", cs.nsys, cs.n, cs.b)),
        c(make_batch<B>("c", cs.nsys, cs.n, cs.c)),
        d(make_batch<B>("d", cs.nsys, cs.n, cs.d)),
        e(make_batch<B>("e", cs.nsys, cs.n, cs.e)),
        y(make_batch<B>("y", cs.nsys, cs.n, cs.y)) {}
};

}  // namespace kband_test
