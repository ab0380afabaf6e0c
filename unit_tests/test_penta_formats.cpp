// The two flat formats of the PCR-Penta storage annex (layouts/
// kband_PentaFormats.hpp): the annex's 7x7 two-system example reproduced
// literally in both formats, import/export round trips through every kband
// layout, zero-copy views, and argument errors.
#include "test_penta_helpers.hpp"

namespace kband_test {
namespace {

// ---------------------------------------------------------------------------
// The annex example: systems (a, b, c, d, e | y) and (p, q, r, s, t | z), n = 7.
// Every symbol gets a distinct value; c and r dominate their rows.
// ---------------------------------------------------------------------------
double symbol_value(const std::string& sym) {
  if (sym == "0") return 0.0;
  const char l = sym[0];
  const int i = std::stoi(sym.substr(1));
  const std::string letters = "abcdeypqrstz";
  const int k = static_cast<int>(letters.find(l));
  if (l == 'c' || l == 'r') return 8.0 + i + 0.5 * (k / 6);
  if (l == 'y' || l == 'z') return 0.25 * i - 1.0 + 0.125 * (k / 6);
  return 0.1 * (k % 6 + 1) + 0.01 * i + 0.5 * (k / 6);  // off-diagonals in (0.1, 1.1)
}

/// The annex's arrays, literally: index 0 = contiguous (PCR-Penta), 1 = interleaved.
const std::vector<std::vector<std::string>>& annex(int format) {
  static const std::vector<std::vector<std::string>> contiguous = {
      {"0", "0", "a3", "a4", "a5", "a6", "a7", "0", "0", "p3", "p4", "p5", "p6", "p7"},
      {"0", "b2", "b3", "b4", "b5", "b6", "b7", "0", "q2", "q3", "q4", "q5", "q6", "q7"},
      {"c1", "c2", "c3", "c4", "c5", "c6", "c7", "r1", "r2", "r3", "r4", "r5", "r6", "r7"},
      {"d1", "d2", "d3", "d4", "d5", "d6", "0", "s1", "s2", "s3", "s4", "s5", "s6", "0"},
      {"e1", "e2", "e3", "e4", "e5", "0", "0", "t1", "t2", "t3", "t4", "t5", "0", "0"},
      {"y1", "y2", "y3", "y4", "y5", "y6", "y7", "z1", "z2", "z3", "z4", "z5", "z6", "z7"}};
  static const std::vector<std::vector<std::string>> interleaved = {
      {"0", "0", "0", "0", "a3", "p3", "a4", "p4", "a5", "p5", "a6", "p6", "a7", "p7"},
      {"0", "0", "b2", "q2", "b3", "q3", "b4", "q4", "b5", "q5", "b6", "q6", "b7", "q7"},
      {"c1", "r1", "c2", "r2", "c3", "r3", "c4", "r4", "c5", "r5", "c6", "r6", "c7", "r7"},
      {"d1", "s1", "d2", "s2", "d3", "s3", "d4", "s4", "d5", "s5", "d6", "s6", "0", "0"},
      {"e1", "t1", "e2", "t2", "e3", "t3", "e4", "t4", "e5", "t5", "0", "0", "0", "0"},
      {"y1", "z1", "y2", "z2", "y3", "z3", "y4", "z4", "y5", "z5", "y6", "z6", "y7", "z7"}};
  return format == 0 ? contiguous : interleaved;
}

constexpr int kAnnexN = 7, kAnnexSys = 2;

/// The example as a PentaCase (system-major; NaN outside the matrices), built
/// from the matrices of the annex, not from its arrays.
template <class T>
PentaCase<T> annex_case() {
  PentaCase<T> cs;
  cs.n = kAnnexN, cs.nsys = kAnnexSys;
  const char* letters[2] = {"abcdey", "pqrstz"};
  for (int k = 0; k < 5; ++k) cs.diag(k)->resize(kAnnexN * kAnnexSys);
  cs.y.resize(kAnnexN * kAnnexSys);
  for (int s = 0; s < kAnnexSys; ++s)
    for (int row = 1; row <= kAnnexN; ++row) {  // the annex counts rows from 1
      for (int k = 0; k < 5; ++k) {
        const int col = row + k - 2;
        (*cs.diag(k))[cs.idx(s, row - 1)] =
            col >= 1 && col <= kAnnexN ? static_cast<T>(symbol_value(letters[s][k] + std::to_string(row)))
                                       : nan_value<T>();
      }
      cs.y[cs.idx(s, row - 1)] = static_cast<T>(symbol_value(letters[s][5] + std::to_string(row)));
    }
  penta_reference(cs);
  return cs;
}

template <class T>
kband::PentaArrays<T> annex_arrays(int format) {
  kband::PentaArrays<T> arr("annex", format == 0 ? kband::PentaFormat::Contiguous : kband::PentaFormat::Interleaved,
                            kAnnexSys, kAnnexN);
  for (int k = 0; k < 6; ++k) {
    std::vector<T> v;
    for (const auto& sym : annex(format)[k]) v.push_back(static_cast<T>(symbol_value(sym)));
    const auto& dst = arr.array(static_cast<kband::PentaArray>(k));
    auto h = Kokkos::create_mirror_view(dst);
    for (size_t i = 0; i < v.size(); ++i) h(i) = v[i];
    Kokkos::deep_copy(dst, h);
  }
  return arr;
}

template <class V>
std::vector<typename V::non_const_value_type> to_host(const V& v) {
  auto h = Kokkos::create_mirror_view(v);
  Kokkos::deep_copy(h, v);
  return std::vector<typename V::non_const_value_type>(h.data(), h.data() + h.extent(0));
}

template <class C>
class PentaFormats : public ::testing::Test {};
TYPED_TEST_SUITE(PentaFormats, SolverConfigs, CfgNames);

// Export of the example from each layout gives the annex's arrays bit for bit
// (zeros included) in both formats.
TYPED_TEST(PentaFormats, AnnexExampleExport) {
  using T = typename TypeParam::value_type;
  using B = typename TypeParam::layout::template batch<T>;
  const PentaCase<T> cs = annex_case<T>();
  const PentaBatches<B> p(cs);
  Exec exec;
  for (int format : {0, 1}) {
    kband::PentaArrays<T> out("out", format == 0 ? kband::PentaFormat::Contiguous : kband::PentaFormat::Interleaved,
                              kAnnexSys, kAnnexN);
    for (int k = 0; k < 6; ++k) Kokkos::deep_copy(out.array(static_cast<kband::PentaArray>(k)), nan_value<T>());
    kband::export_penta(exec, p.a, p.b, p.c, p.d, p.e, p.y, out);
    exec.fence();
    for (int k = 0; k < 6; ++k) {
      const std::vector<T> got = to_host(out.array(static_cast<kband::PentaArray>(k)));
      ASSERT_EQ(got.size(), annex(format)[k].size());
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_TRUE(same_bits(got[i], static_cast<T>(symbol_value(annex(format)[k][i]))))
            << "format " << format << " array " << "abcdey"[k] << "[" << i << "] = " << got[i] << ", annex says "
            << annex(format)[k][i];
    }
  }
}

// Import of the annex's literal arrays into each layout, then penta and
// pcr_penta solve the example; the zero-copy views solve it in place.
TYPED_TEST(PentaFormats, AnnexExampleImportAndSolve) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using B = typename L::template batch<T>;
  const PentaCase<T> cs = annex_case<T>();
  Exec exec;
  for (int format : {0, 1}) {
    const std::string what = L::name() + " format " + std::to_string(format);
    const kband::PentaArrays<T> arr = annex_arrays<T>(format);
    std::vector<B> bt;
    for (const char* l : {"a", "b", "c", "d", "e", "y"}) bt.emplace_back(make_batch<B>(l, kAnnexSys, kAnnexN, std::vector<T>()));
    kband::import_penta(exec, arr, bt[0], bt[1], bt[2], bt[3], bt[4], bt[5]);
    exec.fence();
    // the batch holds the matrix entries, and zeros where the matrix has none
    for (int k = 0; k < 6; ++k) {
      const std::vector<T> got = download(bt[k]);
      const std::vector<T>& ref = k < 5 ? *const_cast<PentaCase<T>&>(cs).diag(k) : cs.y;
      for (size_t i = 0; i < got.size(); ++i) {
        const T expect = std::isnan(ref[i]) ? T(0) : ref[i];
        EXPECT_TRUE(same_bits(got[i], expect)) << what << " array " << "abcdey"[k] << " (s,j)=(" << i / kAnnexN
                                               << "," << i % kAnnexN << ")";
      }
    }
    const B x("x", kAnnexSys, kAnnexN);
    Kokkos::View<int*> info("info", kAnnexSys);
    for (bool pcr : {false, true}) {
      ASSERT_TRUE(run_solver(what, x, false, cs.y, info, nullptr, [&] {
        if (pcr) kband::pcr_penta(exec, bt[0], bt[1], bt[2], bt[3], bt[4], bt[5], x, info);
        else kband::penta(exec, bt[0], bt[1], bt[2], bt[3], bt[4], bt[5], x, info);
      }));
      check_against_reference(what + (pcr ? " pcr_penta" : " penta"), cs, download(x), download_info(info), Tol<T>::dominant,
                  pcr ? "pcr_penta" : "penta");
    }
  }
}

template <class T, class BX, class F>
void solve_views(const std::string& what, const PentaCase<T>& cs, const kband::PentaArrays<T>& arr, F&& view) {
  Exec exec;
  const BX a = view(arr.a), b = view(arr.b), c = view(arr.c), d = view(arr.d), e = view(arr.e), y = view(arr.y);
  EXPECT_EQ(a.data(), arr.a.data()) << what << ": not a view of the flat array";
  Kokkos::View<int*> info("info", kAnnexSys);
  poison_info(info);
  kband::penta(exec, a, b, c, d, e, y, y, info);  // in place: y becomes x
  exec.fence();
  check_against_reference(what, cs, download(y), download_info(info), Tol<T>::dominant, "penta");
}

TEST(PentaFormatsViews, ZeroCopyAnnexArrays) {
  using T = double;
  const PentaCase<T> cs = annex_case<T>();
  solve_views<T, kband::ContiguousBatch<T>>("contiguous_view", cs, annex_arrays<T>(0), [](const Kokkos::View<T*>& f) {
    return kband::contiguous_view(f, kAnnexSys, kAnnexN);
  });
  solve_views<T, kband::InterleavedBatch<T>>("interleaved_view", cs, annex_arrays<T>(1),
                                             [](const Kokkos::View<T*>& f) {
                                               return kband::interleaved_view(f, kAnnexSys, kAnnexN);
                                             });
}

// Random batches: export then import through every layout and both formats
// gives back the batch, with zeros at the structural positions only.
TYPED_TEST(PentaFormats, RoundTrip) {
  using T = typename TypeParam::value_type;
  using B = typename TypeParam::layout::template batch<T>;
  Exec exec;
  for (int n : {1, 2, 3, 7, 11})
    for (int nsys : {1, kSZ + 1}) {
      const PentaCase<T>& cs = get_penta_case<T>(n, nsys, false, false);
      const PentaBatches<B> p(cs);
      for (auto fmt : {kband::PentaFormat::Contiguous, kband::PentaFormat::Interleaved}) {
        kband::PentaArrays<T> arr("rt", fmt, nsys, n);
        kband::export_penta(exec, p.a, p.b, p.c, p.d, p.e, p.y, arr);
        std::vector<B> back;
        for (const char* l : {"a", "b", "c", "d", "e", "y"}) back.emplace_back(make_batch<B>(l, nsys, n, std::vector<T>()));
        kband::import_penta(exec, arr, back[0], back[1], back[2], back[3], back[4], back[5]);
        exec.fence();
        for (int k = 0; k < 6; ++k) {
          const auto w = static_cast<kband::PentaArray>(k);
          const std::vector<T>& ref = k < 5 ? *const_cast<PentaCase<T>&>(cs).diag(k) : cs.y;
          const std::vector<T> flat = to_host(arr.array(w));
          int pad = 0;
          const std::vector<T> got = download(back[k], &pad);
          EXPECT_EQ(pad, 0);
          int bad = 0;
          for (int s = 0; s < nsys; ++s)
            for (int j = 0; j < n; ++j) {
              const T expect = kband::penta_structural_zero(w, j, n) ? T(0) : ref[cs.idx(s, j)];
              bad += same_bits(got[cs.idx(s, j)], expect) ? 0 : 1;
              bad += same_bits(flat[kband::penta_index(fmt, nsys, n, s, j)], expect) ? 0 : 1;
            }
          EXPECT_EQ(bad, 0) << "n=" << n << " nsys=" << nsys << " array " << "abcdey"[k];
        }
      }
    }
}

TEST(PentaFormatsViews, Errors) {
  using T = double;
  Exec exec;
  const Kokkos::View<T*> flat("flat", 13);
  const kband::ContiguousBatch<T> b("b", 2, 7);
  EXPECT_THROW(kband::import_penta_array(exec, kband::PentaFormat::Contiguous, flat, b), kband::Error);
  EXPECT_THROW(kband::export_penta_array(exec, kband::PentaFormat::Interleaved, kband::PentaArray::A, b, flat),
               kband::Error);
  EXPECT_THROW(kband::contiguous_view(flat, 2, 7), kband::Error);
  EXPECT_THROW(kband::interleaved_view(flat, 7, 2), kband::Error);
  EXPECT_THROW(kband::PentaArrays<T>("neg", kband::PentaFormat::Contiguous, -1, 3), kband::Error);
}

}  // namespace
}  // namespace kband_test
