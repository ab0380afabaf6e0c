// Helpers of the PCR, gtsv, solve_tridiagonal and Householder tests
// (test_pcr.cpp, test_gtsv.cpp, test_householder.cpp), on top of
// kband_test_common.hpp. Same portability rules: device Views are filled and
// read through host mirrors only, every kband call is followed by a fence.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "kband_test_common.hpp"

namespace kband_test {

/// The three layouts (default SZ) in double and float.
using SolverConfigs =
    ::testing::Types<Cfg<double, ContiguousTag>, Cfg<double, InterleavedTag>, Cfg<double, GroupedTag<kSZ>>,
                     Cfg<float, ContiguousTag>, Cfg<float, InterleavedTag>, Cfg<float, GroupedTag<kSZ>>>;

/// kband::Layout of a layout tag.
template <class L>
struct layout_of;
template <>
struct layout_of<ContiguousTag> : std::integral_constant<kband::Layout, kband::Layout::Contiguous> {};
template <>
struct layout_of<InterleavedTag> : std::integral_constant<kband::Layout, kband::Layout::Interleaved> {};
template <int SZ>
struct layout_of<GroupedTag<SZ>> : std::integral_constant<kband::Layout, kband::Layout::Grouped> {};

/// True on backends whose memory the host cannot read (GPUs).
constexpr bool device_backend() {
  return !Kokkos::SpaceAccessibility<Kokkos::HostSpace, Exec::memory_space>::accessible;
}

template <class T>
constexpr double eps_of() {
  return static_cast<double>(std::numeric_limits<T>::epsilon());
}

/// Writes system-major host values into a device batch (NaN everywhere when v
/// is empty); padding slots get the sentinel.
template <class B, class T>
void upload(const B& dst, const std::vector<T>& v) {
  Host<B> h(dst);
  poison(h, nan_value<T>());
  if (!v.empty())
    for (int s = 0; s < h.nsys(); ++s)
      for (int j = 0; j < h.n(); ++j) h(s, j) = v[static_cast<size_t>(s) * h.n() + j];
  h.to_device();
}

template <class B, class T>
B make_batch(const std::string& label, int nsys, int n, const std::vector<T>& v) {
  B b(label, nsys, n);
  upload(b, v);
  return b;
}

/// System-major host copy of a device batch; adds the number of damaged
/// GroupedBatch padding slots to *pad_damage when given.
template <class B>
std::vector<typename Host<B>::value_type> download(const B& src, int* pad_damage = nullptr) {
  Host<B> h(src);
  h.to_host();
  std::vector<typename Host<B>::value_type> v(static_cast<size_t>(h.nsys()) * h.n());
  for (int s = 0; s < h.nsys(); ++s)
    for (int j = 0; j < h.n(); ++j) v[static_cast<size_t>(s) * h.n() + j] = h(s, j);
  if (pad_damage) *pad_damage += padding_damage(h);
  return v;
}

template <class T>
Kokkos::View<T*> make_vector(const std::string& label, const std::vector<T>& v) {
  Kokkos::View<T*> d(label, v.size());
  auto h = Kokkos::create_mirror_view(d);
  for (size_t i = 0; i < v.size(); ++i) h(i) = v[i];
  Kokkos::deep_copy(d, h);
  return d;
}

inline void poison_info(const Kokkos::View<int*>& info) {
  auto h = Kokkos::create_mirror_view(info);
  for (size_t i = 0; i < h.extent(0); ++i) h(i) = kInfoPoison;
  Kokkos::deep_copy(info, h);
}
inline std::vector<int> download_info(const Kokkos::View<int*>& info) {
  auto h = Kokkos::create_mirror_view(info);
  Kokkos::deep_copy(h, info);
  return std::vector<int>(h.data(), h.data() + h.extent(0));
}

template <class T>
int count_differences(const std::vector<T>& x, const std::vector<T>& y) {
  if (x.size() != y.size()) return static_cast<int>(std::max(x.size(), y.size()));
  int bad = 0;
  for (size_t i = 0; i < x.size(); ++i) bad += same_bits(x[i], y[i]) ? 0 : 1;
  return bad;
}

template <class T>
bool all_nan(const T* x, int n) {
  for (int j = 0; j < n; ++j)
    if (!std::isnan(x[j])) return false;
  return true;
}

/// Normwise backward error ||A x - d||_inf / (||A||_inf ||x||_inf + ||d||_inf)
/// of x for the ordinary tridiagonal system (a[0], c[n-1] ignored), evaluated
/// in long double; +inf when x has a non-finite entry.
template <class T>
double tridiag_backward_error(int n, const T* a, const T* b, const T* c, const T* d, const T* x) {
  using R = real_ref;
  R rmax = 0, amax = 0, xmax = 0, dmax = 0;
  for (int j = 0; j < n; ++j) {
    if (!std::isfinite(static_cast<double>(x[j]))) return HUGE_VAL;
    R r = R(b[j]) * R(x[j]) - R(d[j]);
    R row = std::fabs(R(b[j]));
    if (j > 0) {
      r += R(a[j]) * R(x[j - 1]);
      row += std::fabs(R(a[j]));
    }
    if (j < n - 1) {
      r += R(c[j]) * R(x[j + 1]);
      row += std::fabs(R(c[j]));
    }
    rmax = std::max(rmax, std::fabs(r));
    amax = std::max(amax, row);
    xmax = std::max(xmax, std::fabs(R(x[j])));
    dmax = std::max(dmax, std::fabs(R(d[j])));
  }
  const R den = amax * xmax + dmax;
  return den > 0 ? static_cast<double>(rmax / den) : static_cast<double>(rmax);
}

/// Long double tridiagonal LU with partial pivoting (LAPACK gtsv's
/// elimination), O(n) per factorisation and per solve: the reference where the
/// dense DenseLU (n^2 long doubles) is too big, and the tool for condition
/// numbers. a[0] and c[n-1] are ignored. Checked against DenseLU in
/// GTSVReference.MatchesDenseLU.
class TridiagLU {
 public:
  using R = real_ref;
  template <class T>
  TridiagLU(int n, const T* a, const T* b, const T* c) : n_(n), dg_(n), du_(n), du2_(n, 0), f_(n, 0), swap_(n, 0) {
    std::vector<R> dl(n);
    amax_ = 0;
    for (int j = 0; j < n; ++j) {
      dl[j] = j > 0 ? R(a[j]) : R(0);
      dg_[j] = b[j];
      du_[j] = j < n - 1 ? R(c[j]) : R(0);
      amax_ = std::max(amax_, std::fabs(dl[j]) + std::fabs(dg_[j]) + std::fabs(du_[j]));
    }
    // Row i is eliminated against row i+1, whose sub-diagonal entry is dl[i+1].
    for (int i = 0; i + 1 < n; ++i) {
      if (std::fabs(dg_[i]) >= std::fabs(dl[i + 1])) {
        if (dg_[i] == 0) {
          ok_ = false;
          return;
        }
        f_[i] = dl[i + 1] / dg_[i];
        dg_[i + 1] -= f_[i] * du_[i];
      } else {
        swap_[i] = 1;
        f_[i] = dg_[i] / dl[i + 1];
        dg_[i] = dl[i + 1];
        const R tmp = dg_[i + 1];
        dg_[i + 1] = du_[i] - f_[i] * tmp;
        if (i + 2 < n) {
          du2_[i] = du_[i + 1];
          du_[i + 1] = -f_[i] * du2_[i];
        }
        du_[i] = tmp;
      }
    }
    ok_ = dg_[n - 1] != 0;
  }
  bool ok() const { return ok_; }

  template <class T>
  std::vector<R> solve(const T* d) const {
    std::vector<R> x(d, d + n_);
    for (int i = 0; i + 1 < n_; ++i) {
      if (swap_[i]) {
        const R t = x[i];
        x[i] = x[i + 1];
        x[i + 1] = t - f_[i] * x[i + 1];
      } else {
        x[i + 1] -= f_[i] * x[i];
      }
    }
    for (int i = n_ - 1; i >= 0; --i) {
      R s = x[i];
      if (i + 1 < n_) s -= du_[i] * x[i + 1];
      if (i + 2 < n_) s -= du2_[i] * x[i + 2];
      x[i] = s / dg_[i];
    }
    return x;
  }

  /// ||A||_inf ||A^-1||_inf (n solves, O(n^2)).
  double condition_inf() const {
    std::vector<R> rowsum(n_, 0), e(n_, 0);
    for (int j = 0; j < n_; ++j) {
      e[j] = 1;
      const std::vector<R> col = solve(e.data());
      e[j] = 0;
      for (int i = 0; i < n_; ++i) rowsum[i] += std::fabs(col[i]);
    }
    return static_cast<double>(amax_ * *std::max_element(rowsum.begin(), rowsum.end()));
  }

 private:
  int n_;
  std::vector<R> dg_, du_, du2_, f_;
  std::vector<char> swap_;
  R amax_ = 0;
  bool ok_ = true;
};

/// Poisons x (NaN, or re-uploads d for an in-place solve), info and every
/// team's scratch (NaN), runs `solve`, and returns false (with its checks
/// done) when it was refused with a kband::Error whose message contains
/// `refusal_token` (any other error is a failure). A refused call must leave
/// info untouched.
template <class B, class T>
bool run_solver(const std::string& what, const B& x, bool inplace, const std::vector<T>& d_values,
                const Kokkos::View<int*>& info, const char* refusal_token, const std::function<void()>& solve) {
  upload(x, inplace ? d_values : std::vector<T>());
  poison_info(info);
  fill_team_scratch(Exec(), nan_value<T>());
  try {
    solve();
    Exec().fence();
  } catch (const kband::Error& e) {
    const std::string msg = e.what();
    if (refusal_token == nullptr || msg.find(refusal_token) == std::string::npos) {
      ADD_FAILURE() << what << ": unexpected kband::Error: " << msg;
      return false;
    }
    for (int v : download_info(info)) EXPECT_EQ(v, kInfoPoison) << what << ": refused call wrote info";
    ++stats().scratch_refusals;
    if (stats().first_scratch_refusal.empty()) stats().first_scratch_refusal = what + ": " + msg;
    return false;
  }
  ++stats().solves;
  return true;
}

}  // namespace kband_test
