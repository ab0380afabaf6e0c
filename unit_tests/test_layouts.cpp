// Layout conversions (kband::convert) and 3D field <-> line batches
// (field_to_lines, lines_to_field, accumulate_lines_to_field).
#include "kband_test_common.hpp"

namespace kband_test {
namespace {

/// Random values plus the awkward ones a copy must preserve bit for bit.
template <class T>
T awkward_value(Rng& rng) {
  const std::uint64_t r = rng.bits() % 16;
  switch (r) {
    case 0: return T(-0.0);
    case 1: return std::numeric_limits<T>::denorm_min();
    case 2: return -std::numeric_limits<T>::infinity();
    case 3: return std::numeric_limits<T>::quiet_NaN();
    case 4: return std::numeric_limits<T>::max();
    default: return static_cast<T>(rng.uniform(-1e3, 1e3));
  }
}

template <class T>
void expect_bits(const T& got, const T& want, int& bad) {
  bad += same_bits(got, want) ? 0 : 1;
}

// ---------------------------------------------------------------------------
// convert between every ordered pair of layouts (and SZs): bit-exact both ways.
// ---------------------------------------------------------------------------
template <class T, class S, class D>
struct ConvPair {
  using value_type = T;
  using src = S;
  using dst = D;
  static std::string name() { return S::name() + "_to_" + D::name() + "_" + type_name(T()); }
};

template <class C>
class Convert : public ::testing::Test {};
using G1 = GroupedTag<kSZ>;
using G2 = GroupedTag<kOtherSZ>;
using ConvertPairs = ::testing::Types<
    ConvPair<double, ContiguousTag, ContiguousTag>, ConvPair<double, ContiguousTag, InterleavedTag>,
    ConvPair<double, ContiguousTag, G1>, ConvPair<double, ContiguousTag, G2>,
    ConvPair<double, InterleavedTag, ContiguousTag>, ConvPair<double, InterleavedTag, InterleavedTag>,
    ConvPair<double, InterleavedTag, G1>, ConvPair<double, InterleavedTag, G2>, ConvPair<double, G1, ContiguousTag>,
    ConvPair<double, G1, InterleavedTag>, ConvPair<double, G1, G1>, ConvPair<double, G1, G2>,
    ConvPair<double, G2, ContiguousTag>, ConvPair<double, G2, InterleavedTag>, ConvPair<double, G2, G1>,
    ConvPair<double, G2, G2>, ConvPair<float, ContiguousTag, G1>, ConvPair<float, G1, InterleavedTag>,
    ConvPair<float, InterleavedTag, ContiguousTag>, ConvPair<float, G2, G1>>;
TYPED_TEST_SUITE(Convert, ConvertPairs, CfgNames);

TYPED_TEST(Convert, RoundTripBitExact) {
  using T = typename TypeParam::value_type;
  using BS = typename TypeParam::src::template batch<T>;
  using BD = typename TypeParam::dst::template batch<T>;
  Exec exec;
  for (int nsys : {1, 3, 7, kSZ + 1, 3 * kSZ - 1, kOtherSZ + 1, 2 * kSZ + 3})
    for (int n : {1, 4, 33}) {
      const std::string what = "nsys=" + std::to_string(nsys) + " n=" + std::to_string(n);
      Rng rng(mix_seed({sizeof(T), static_cast<std::uint64_t>(nsys), static_cast<std::uint64_t>(n)}));
      std::vector<T> v(static_cast<size_t>(nsys) * n);
      for (auto& e : v) e = awkward_value<T>(rng);
      const BS src("src", nsys, n);
      const BD dst("dst", nsys, n);
      const BS back("back", nsys, n);
      Host<BS> hs(src), hb(back);
      Host<BD> hd(dst);
      poison(hs, T(0));
      for (int s = 0; s < nsys; ++s)
        for (int j = 0; j < n; ++j) hs(s, j) = v[static_cast<size_t>(s) * n + j];
      hs.to_device();
      poison(hd, nan_value<T>());
      hd.to_device();
      poison(hb, nan_value<T>());
      hb.to_device();
      const auto src_before = snapshot(src);

      kband::convert(exec, src, dst);
      exec.fence();
      kband::convert(exec, dst, back);
      exec.fence();

      hd.to_host();
      hb.to_host();
      int bad_dst = 0, bad_back = 0;
      for (int s = 0; s < nsys; ++s)
        for (int j = 0; j < n; ++j) {
          expect_bits(hd(s, j), v[static_cast<size_t>(s) * n + j], bad_dst);
          expect_bits(hb(s, j), v[static_cast<size_t>(s) * n + j], bad_back);
        }
      EXPECT_EQ(bad_dst, 0) << what << ": src -> dst not bit-exact";
      EXPECT_EQ(bad_back, 0) << what << ": dst -> src not bit-exact";
      EXPECT_EQ(padding_damage(hd), 0) << what << ": convert wrote into dst padding";
      EXPECT_EQ(padding_damage(hb), 0) << what << ": convert wrote into padding";
      EXPECT_TRUE(snapshot(src) == src_before) << what << ": convert modified src";
    }
  // Empty batches are a no-op.
  EXPECT_NO_THROW(kband::convert(exec, BS("e", 0, 4), BD("e", 0, 4)));
  EXPECT_NO_THROW(kband::convert(exec, BS("e", 3, 0), BD("e", 3, 0)));
  exec.fence();
}

// Converting into / out of a batch that is a subview of a bigger View touches
// nothing outside it (sentinels all around, GroupedBatch padding included).
template <class C>
class ConvertSubview : public ::testing::Test {};
using SubviewConfigs = ::testing::Types<Cfg<double, ContiguousTag>, Cfg<double, InterleavedTag>, Cfg<double, G1>,
                                        Cfg<double, G2>, Cfg<float, G1>>;
TYPED_TEST_SUITE(ConvertSubview, SubviewConfigs, CfgNames);

TYPED_TEST(ConvertSubview, SentinelsIntact) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  using P = Padded<T, L>;
  using Src = kband::ContiguousBatch<T>;
  Exec exec;
  const T sentinel = T(-4242.5);
  for (int nsys : {1, L::sz - 1 > 0 ? L::sz - 1 : 1, L::sz + 1, 3 * L::sz - 1})
    for (int n : {1, 5}) {
      const std::string what = "nsys=" + std::to_string(nsys) + " n=" + std::to_string(n);
      Rng rng(mix_seed({7, static_cast<std::uint64_t>(nsys), static_cast<std::uint64_t>(n)}));
      const Src src("src", nsys, n), back("back", nsys, n);
      Host<Src> hs(src);
      for (int s = 0; s < nsys; ++s)
        for (int j = 0; j < n; ++j) hs(s, j) = static_cast<T>(rng.uniform(-1, 1));
      hs.to_device();
      P dst(nsys, n);
      Kokkos::deep_copy(dst.parent, sentinel);

      kband::convert(exec, src, dst.sub);
      exec.fence();
      kband::convert(exec, dst.sub, back);
      exec.fence();

      auto hp = Kokkos::create_mirror(dst.parent);
      Kokkos::deep_copy(hp, dst.parent);
      Host<Src> hb(back);
      hb.to_host();
      int bad = 0;
      for (int s = 0; s < nsys; ++s)
        for (int j = 0; j < n; ++j) {
          expect_bits(P::at(hp, s, j), hs(s, j), bad);
          expect_bits(hb(s, j), hs(s, j), bad);
          P::at(hp, s, j) = sentinel;
        }
      EXPECT_EQ(bad, 0) << what << ": values not copied bit-exactly";
      int damaged = 0;
      for (size_t i = 0; i < hp.span(); ++i) damaged += same_bits(hp.data()[i], sentinel) ? 0 : 1;
      EXPECT_EQ(damaged, 0) << what << ": convert wrote outside the destination subview";
    }
}

// ---------------------------------------------------------------------------
// 3D fields <-> lines.
// ---------------------------------------------------------------------------
template <class T, class FieldLayout, class LinesTag>
struct FieldCfg {
  using value_type = T;
  using field_layout = FieldLayout;
  using lines = LinesTag;
  static std::string name() {
    return std::string(std::is_same<FieldLayout, Kokkos::LayoutLeft>::value ? "FieldLeft_" : "FieldRight_") +
           LinesTag::name() + "_" + type_name(T());
  }
};

template <class C>
class FieldLines : public ::testing::Test {};
using FieldConfigs =
    ::testing::Types<FieldCfg<double, Kokkos::LayoutLeft, G1>, FieldCfg<double, Kokkos::LayoutRight, G1>,
                     FieldCfg<double, Kokkos::LayoutRight, G2>, FieldCfg<double, Kokkos::LayoutLeft, ContiguousTag>,
                     FieldCfg<double, Kokkos::LayoutRight, InterleavedTag>, FieldCfg<float, Kokkos::LayoutLeft, G1>>;
TYPED_TEST_SUITE(FieldLines, FieldConfigs, CfgNames);

/// The documented mapping (kband_Layouts.hpp): x-lines n = nx, s = j + ny*k;
/// y-lines n = ny, s = i + nx*k; z-lines n = nz, s = i + nx*j.
struct LineIndex {
  int s, r;
};
inline LineIndex line_index(kband::Direction dir, int nx, int ny, int i, int j, int k) {
  (void)ny;
  switch (dir) {
    case kband::Direction::X: return {j + ny * k, i};
    case kband::Direction::Y: return {i + nx * k, j};
    default: return {i + nx * j, k};
  }
}

TYPED_TEST(FieldLines, MappingRoundTripAccumulate) {
  using T = typename TypeParam::value_type;
  using F = Kokkos::View<T***, typename TypeParam::field_layout>;
  using B = typename TypeParam::lines::template batch<T>;
  Exec exec;
  // Extents: small ones; then lines longer than one tile of kband's tiled
  // conversion (32 rows: full and partial row blocks, x and z) and line
  // counts that leave a partial group.
  for (auto ext : {std::make_tuple(5, 6, 7), std::make_tuple(3, 1, 4), std::make_tuple(70, 5, 3),
                   std::make_tuple(33, 4, 66)}) {
    const int nx = std::get<0>(ext), ny = std::get<1>(ext), nz = std::get<2>(ext);
    Rng rng(mix_seed({static_cast<std::uint64_t>(nx), static_cast<std::uint64_t>(ny), sizeof(T)}));
    const F field("field", nx, ny, nz), out("out", nx, ny, nz), acc("acc", nx, ny, nz);
    auto hf = Kokkos::create_mirror_view(field);
    auto hacc = Kokkos::create_mirror(acc);  // kept: the accumulation's starting values
    for (int i = 0; i < nx; ++i)
      for (int j = 0; j < ny; ++j)
        for (int k = 0; k < nz; ++k) {
          hf(i, j, k) = static_cast<T>(rng.uniform(-1, 1));
          hacc(i, j, k) = static_cast<T>(rng.uniform(-1, 1));
        }
    Kokkos::deep_copy(field, hf);
    const auto field_before = snapshot(field);
    for (kband::Direction dir : {kband::Direction::X, kband::Direction::Y, kband::Direction::Z}) {
      const int d = static_cast<int>(dir);
      const std::string what = "dir=" + std::string(1, "XYZ"[d]) + " extents (" + std::to_string(nx) + "," +
                               std::to_string(ny) + "," + std::to_string(nz) + ")";
      const int n = d == 0 ? nx : (d == 1 ? ny : nz);
      const int nsys = nx * ny * nz / n;
      const B lines("lines", nsys, n);
      Host<B> hl(lines);
      poison(hl, nan_value<T>());
      hl.to_device();

      kband::field_to_lines(exec, dir, field, lines);
      exec.fence();
      hl.to_host();
      int bad = 0;
      for (int i = 0; i < nx; ++i)
        for (int j = 0; j < ny; ++j)
          for (int k = 0; k < nz; ++k) {
            const LineIndex li = line_index(dir, nx, ny, i, j, k);
            expect_bits(hl(li.s, li.r), hf(i, j, k), bad);
          }
      EXPECT_EQ(bad, 0) << what << ": field_to_lines does not follow the documented mapping";
      EXPECT_EQ(padding_damage(hl), 0) << what << ": field_to_lines wrote into padding";
      EXPECT_TRUE(snapshot(field) == field_before) << what << ": field_to_lines modified the field";

      // lines -> a NaN-poisoned field: every point written, bit-exact.
      Kokkos::deep_copy(out, nan_value<T>());
      kband::lines_to_field(exec, dir, lines, out);
      exec.fence();
      EXPECT_TRUE(snapshot(out) == field_before) << what << ": lines_to_field round trip not bit-exact";

      // field += scale * lines. With scale = -0.5 the product is exact, so the
      // result is one rounding of the exact sum on every backend (FMA or not):
      // bit-exact. Scale 0.3 and the default scale 1 are checked to 1 ulp.
      for (double scale : {-0.5, 0.3, 1.0}) {
        Kokkos::deep_copy(acc, hacc);
        if (scale == 1.0)
          kband::accumulate_lines_to_field(exec, dir, lines, acc);  // default scale
        else
          kband::accumulate_lines_to_field(exec, dir, lines, acc, static_cast<T>(scale));
        exec.fence();
        auto hres = Kokkos::create_mirror(acc);
        Kokkos::deep_copy(hres, acc);
        int wrong = 0;
        for (int i = 0; i < nx; ++i)
          for (int j = 0; j < ny; ++j)
            for (int k = 0; k < nz; ++k) {
              const T want = static_cast<T>(hacc(i, j, k) + static_cast<T>(scale) * hf(i, j, k));
              const T got = hres(i, j, k);
              if (scale == -0.5 || scale == 1.0) {
                wrong += same_bits(got, want) ? 0 : 1;
              } else {
                const T ulp = std::numeric_limits<T>::epsilon() * (std::fabs(hacc(i, j, k)) + std::fabs(hf(i, j, k)));
                wrong += std::fabs(got - want) <= ulp ? 0 : 1;
              }
            }
        EXPECT_EQ(wrong, 0) << what << " scale=" << scale << ": accumulate != field + scale * lines";
      }
      Host<B> hl2(lines);
      hl2.to_host();
      bad = 0;
      for (int i = 0; i < nx; ++i)
        for (int j = 0; j < ny; ++j)
          for (int k = 0; k < nz; ++k) {
            const LineIndex li = line_index(dir, nx, ny, i, j, k);
            expect_bits(hl2(li.s, li.r), hf(i, j, k), bad);
          }
      EXPECT_EQ(bad + padding_damage(hl2), 0) << what << ": lines_to_field / accumulate modified the lines";
    }
  }
}

}  // namespace
}  // namespace kband_test
