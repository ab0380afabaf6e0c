// kband layouts: one set of types for batches of banded systems.
//
//  * contiguous  : Kokkos::View<T**, Kokkos::LayoutRight, Mem>, extents (nsys, n);
//                  each system's rows are adjacent in memory.
//  * interleaved : Kokkos::View<T**, Kokkos::LayoutLeft, Mem>, extents (nsys, n);
//                  the system index runs fastest (row j of every system together).
//  * SZ-grouped  : kband::GroupedBatch<T, SZ, Mem>, the DistD2 data structure:
//                  memory order of the column-major array (SZ, n, ngroups), i.e. a
//                  group of SZ systems stored interleaved, groups one after another.
//                  The last group is padded internally when nsys % SZ != 0; the
//                  padding belongs to kband and no solver reads or writes it.
//
// Every batch type answers b(s, j) for system s and row j, which is all a kernel
// needs: algorithms are written once over that accessor.
#pragma once

#include "kband_Core.hpp"

namespace kband {

enum class Layout { Contiguous, Interleaved, Grouped };

inline const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Contiguous: return "contiguous";
    case Layout::Interleaved: return "interleaved";
    default: return "grouped";
  }
}

template <class T, class MemSpace = Kokkos::DefaultExecutionSpace::memory_space>
using ContiguousBatch = Kokkos::View<T**, Kokkos::LayoutRight, MemSpace>;

template <class T, class MemSpace = Kokkos::DefaultExecutionSpace::memory_space>
using InterleavedBatch = Kokkos::View<T**, Kokkos::LayoutLeft, MemSpace>;

/// SZ-grouped batch of `nsys` systems of `n` rows. SZ is a compile-time constant.
template <class T, int SZ = default_sz<>::value,
          class MemSpace = Kokkos::DefaultExecutionSpace::memory_space>
class GroupedBatch {
  static_assert(SZ >= 1, "kband: SZ must be positive");

 public:
  using value_type = T;
  using memory_space = MemSpace;
  using view_type = Kokkos::View<T** [SZ], Kokkos::LayoutRight, MemSpace>;  // (ngroups, n, SZ)
  static constexpr int sz = SZ;

  GroupedBatch() = default;

  /// Allocates ceil(nsys / SZ) groups (zero-initialised, padding included).
  GroupedBatch(const std::string& label, int nsys, int n) : nsys_(nsys) {
    impl::require(nsys >= 0 && n >= 0,
                  impl::concat("GroupedBatch '", label, "': nsys (", nsys, ") and n (", n,
                               ") must be non-negative"));
    data_ = view_type(label, groups_for(nsys), n);
  }

  /// Wraps existing storage of extents (ngroups, n, SZ) holding `nsys` systems.
  GroupedBatch(const view_type& data, int nsys) : data_(data), nsys_(nsys) {
    impl::require(nsys >= 0 && static_cast<int>(data.extent(0)) == groups_for(nsys),
                  impl::concat("GroupedBatch: storage holds ", data.extent(0), " groups of SZ=", SZ,
                               " but nsys=", nsys, " needs ", groups_for(nsys)));
  }

  static int groups_for(int nsys) { return (nsys + SZ - 1) / SZ; }

  KOKKOS_INLINE_FUNCTION T& operator()(const int s, const int j) const {
    return data_(s / SZ, j, s % SZ);
  }
  KOKKOS_INLINE_FUNCTION int nsys() const { return nsys_; }
  KOKKOS_INLINE_FUNCTION int n() const { return static_cast<int>(data_.extent(1)); }
  KOKKOS_INLINE_FUNCTION int ngroups() const { return static_cast<int>(data_.extent(0)); }
  KOKKOS_INLINE_FUNCTION const view_type& view() const { return data_; }
  std::string label() const { return data_.label(); }

 private:
  view_type data_;
  int nsys_ = 0;
};

/// Host mirror of a GroupedBatch (the same storage when it is host memory).
template <class T, int SZ, class M>
GroupedBatch<T, SZ, Kokkos::HostSpace> create_mirror_view(const GroupedBatch<T, SZ, M>& b) {
  return GroupedBatch<T, SZ, Kokkos::HostSpace>(Kokkos::create_mirror_view(b.view()), b.nsys());
}

/// Copies a whole GroupedBatch (padding included) between memory spaces.
template <class T, int SZ, class M1, class M2>
void deep_copy(const GroupedBatch<T, SZ, M1>& dst, const GroupedBatch<T, SZ, M2>& src) {
  impl::require(dst.nsys() == src.nsys() && dst.n() == src.n(),
                impl::concat("kband::deep_copy: GroupedBatch extents differ: (", dst.nsys(), ", ", dst.n(),
                             ") vs (", src.nsys(), ", ", src.n(), ")"));
  Kokkos::deep_copy(dst.view(), src.view());
}

template <class Exec, class T, int SZ, class M1, class M2>
void deep_copy(const Exec& exec, const GroupedBatch<T, SZ, M1>& dst, const GroupedBatch<T, SZ, M2>& src) {
  impl::require(dst.nsys() == src.nsys() && dst.n() == src.n(),
                impl::concat("kband::deep_copy: GroupedBatch extents differ: (", dst.nsys(), ", ", dst.n(),
                             ") vs (", src.nsys(), ", ", src.n(), ")"));
  Kokkos::deep_copy(exec, dst.view(), src.view());
}

namespace impl {

/// Uniform description of the three batch types.
template <class B, class Enable = void>
struct batch_traits {
  static constexpr bool is_batch = false;
};

template <class T, class... P>
struct batch_traits<Kokkos::View<T, P...>,
                    std::enable_if_t<Kokkos::View<T, P...>::rank == 2 &&
                                     (std::is_same<typename Kokkos::View<T, P...>::array_layout,
                                                   Kokkos::LayoutRight>::value ||
                                      std::is_same<typename Kokkos::View<T, P...>::array_layout,
                                                   Kokkos::LayoutLeft>::value)>> {
  using type = Kokkos::View<T, P...>;
  using value_type = typename type::non_const_value_type;
  using memory_space = typename type::memory_space;
  static constexpr bool is_batch = true;
  static constexpr Layout layout =
      std::is_same<typename type::array_layout, Kokkos::LayoutRight>::value ? Layout::Contiguous
                                                                           : Layout::Interleaved;
  static constexpr int sz = 0;
  static int nsys(const type& v) { return static_cast<int>(v.extent(0)); }
  static int n(const type& v) { return static_cast<int>(v.extent(1)); }
  static std::string label(const type& v) { return v.label(); }
  static const void* data(const type& v) { return v.data(); }
  static size_t span(const type& v) { return v.span(); }
  /// Flat index k in memory order -> (s, j); returns false for padding.
  KOKKOS_INLINE_FUNCTION static bool decode(const type& v, const size_t k, int& s, int& j) {
    if (layout == Layout::Contiguous) {
      const size_t n = v.extent(1);
      s = static_cast<int>(k / n);
      j = static_cast<int>(k % n);
    } else {
      const size_t ns = v.extent(0);
      s = static_cast<int>(k % ns);
      j = static_cast<int>(k / ns);
    }
    return true;
  }
  KOKKOS_INLINE_FUNCTION static size_t flat_size(const type& v) {
    return v.extent(0) * v.extent(1);
  }
  /// Distance in elements between rows j and j+1 of one system.
  KOKKOS_INLINE_FUNCTION static size_t row_stride(const type& v) { return v.stride_1(); }
  /// Distance in elements between systems s and s+1 at the same row (a
  /// contiguous subview may be padded, so not always n).
  KOKKOS_INLINE_FUNCTION static size_t lane_stride(const type& v) { return v.stride_0(); }
};

template <class T, int SZ, class M>
struct batch_traits<GroupedBatch<T, SZ, M>, void> {
  using type = GroupedBatch<T, SZ, M>;
  using value_type = std::remove_const_t<T>;
  using memory_space = M;
  static constexpr bool is_batch = true;
  static constexpr Layout layout = Layout::Grouped;
  static constexpr int sz = SZ;
  static int nsys(const type& v) { return v.nsys(); }
  static int n(const type& v) { return v.n(); }
  static std::string label(const type& v) { return v.label(); }
  static const void* data(const type& v) { return v.view().data(); }
  static size_t span(const type& v) { return v.view().span(); }
  KOKKOS_INLINE_FUNCTION static bool decode(const type& v, const size_t k, int& s, int& j) {
    const size_t n = static_cast<size_t>(v.n());
    const size_t g = k / (n * SZ);
    j = static_cast<int>((k / SZ) % n);
    s = static_cast<int>(g * SZ + k % SZ);
    return s < v.nsys();
  }
  KOKKOS_INLINE_FUNCTION static size_t flat_size(const type& v) {
    return static_cast<size_t>(v.ngroups()) * v.n() * SZ;
  }
  KOKKOS_INLINE_FUNCTION static constexpr size_t row_stride(const type&) { return SZ; }
  /// Within a group; lanes of a thread never cross a group.
  KOKKOS_INLINE_FUNCTION static constexpr size_t lane_stride(const type&) { return 1; }
};

template <class B>
using batch_value_t = typename batch_traits<B>::value_type;

/// Checks that `b` holds nsys systems of n rows, naming the argument otherwise.
template <class B>
void check_batch(const char* fn, const char* arg, const B& b, int nsys, int n) {
  using tr = batch_traits<B>;
  require(tr::nsys(b) == nsys && tr::n(b) == n,
          concat(fn, ": argument '", arg, "' (", tr::label(b), ") has extents (nsys=", tr::nsys(b),
                 ", n=", tr::n(b), "), expected (nsys=", nsys, ", n=", n, ")"));
}

/// Checks that `b` has the same layout (and SZ) as the reference batch type R.
template <class R, class B>
void check_same_layout(const char* fn, const char* arg) {
  using tr = batch_traits<R>;
  using tb = batch_traits<B>;
  require(tr::layout == tb::layout && tr::sz == tb::sz,
          concat(fn, ": argument '", arg, "' is ", layout_name(tb::layout),
                 (tb::sz ? concat(" (SZ=", tb::sz, ")") : std::string()), " but the batch is ",
                 layout_name(tr::layout), (tr::sz ? concat(" (SZ=", tr::sz, ")") : std::string())));
}

template <class Src, class Dst>
struct ConvertBatch {
  Src src;
  Dst dst;
  KOKKOS_INLINE_FUNCTION void operator()(const size_t k) const {
    int s, j;
    if (batch_traits<Dst>::decode(dst, k, s, j)) dst(s, j) = src(s, j);
  }
};

}  // namespace impl

/// Copies every system of `src` into `dst` (any two of the three layouts,
/// same nsys and n). Bit-exact; iterates in the destination's memory order.
template <class ExecSpace, class Src, class Dst>
void convert(const ExecSpace& exec, const Src& src, const Dst& dst) {
  impl::ProfilingRegion region("kband::convert");
  using ts = impl::batch_traits<Src>;
  using td = impl::batch_traits<Dst>;
  static_assert(ts::is_batch && td::is_batch, "kband::convert: arguments must be kband batches");
  impl::require_accessible<Kokkos::View<int*, typename ts::memory_space>, ExecSpace>("src");
  impl::require_accessible<Kokkos::View<int*, typename td::memory_space>, ExecSpace>("dst");
  impl::check_batch("kband::convert", "dst", dst, ts::nsys(src), ts::n(src));
  if (ts::nsys(src) == 0 || ts::n(src) == 0) return;
  Kokkos::parallel_for("kband::convert",
                       impl::Range<ExecSpace, Kokkos::IndexType<size_t>>(exec, 0, td::flat_size(dst)),
                       impl::ConvertBatch<Src, Dst>{src, dst});
}

// ---------------------------------------------------------------------------
// 3D Cartesian fields <-> SZ-grouped lines
// ---------------------------------------------------------------------------

/// Direction of the lines taken out of a 3D field f(i, j, k) of extents (nx, ny, nz).
/// x-lines: n = nx, system s = j + ny*k; y-lines: n = ny, s = i + nx*k;
/// z-lines: n = nz, s = i + nx*j.
enum class Direction { X = 0, Y = 1, Z = 2 };

namespace impl {

struct LineMap {
  int nx, ny, nz;
  Direction dir;
  KOKKOS_INLINE_FUNCTION int nsys() const {
    return dir == Direction::X ? ny * nz : (dir == Direction::Y ? nx * nz : nx * ny);
  }
  KOKKOS_INLINE_FUNCTION int n() const {
    return dir == Direction::X ? nx : (dir == Direction::Y ? ny : nz);
  }
  /// Point (s, r) of the batch -> field indices.
  KOKKOS_INLINE_FUNCTION void point(const int s, const int r, int& i, int& j, int& k) const {
    if (dir == Direction::X) {
      i = r; j = s % ny; k = s / ny;
    } else if (dir == Direction::Y) {
      i = s % nx; j = r; k = s / nx;
    } else {
      i = s % nx; j = s / nx; k = r;
    }
  }
};

template <class Field, class B, int Mode>  // Mode 0: field -> batch, 1: batch -> field, 2: field += scale * batch
struct FieldLines {
  Field f;
  B b;
  LineMap map;
  batch_value_t<B> scale;
  KOKKOS_INLINE_FUNCTION void operator()(const size_t kk) const {
    int s, r;
    if (!batch_traits<B>::decode(b, kk, s, r)) return;
    int i, j, k;
    map.point(s, r, i, j, k);
    if (Mode == 0) b(s, r) = f(i, j, k);
    else if (Mode == 1) f(i, j, k) = b(s, r);
    else f(i, j, k) += scale * b(s, r);
  }
};

template <int Mode, class ExecSpace, class Field, class B>
void field_lines_flat(const char* fn, const ExecSpace& exec, const LineMap& map, const Field& f, const B& b,
                      batch_value_t<B> scale) {
  Kokkos::parallel_for(fn,
                       impl::Range<ExecSpace, Kokkos::IndexType<size_t>>(exec, 0, batch_traits<B>::flat_size(b)),
                       FieldLines<Field, B, Mode>{f, b, map, scale});
}

}  // namespace impl

/// Tiles of the `dir`-directed lines of a 3D field f(i, j, k), for team
/// kernels that move data between the field and SZ-grouped lines (kband's
/// conversions below, and fused kernels of applications such as
/// examples/transport). Tile t of a league of `league` tiles is group
/// g = t / row_blocks (lines g*SZ .. g*SZ + lanes - 1) and the rows r0 ..
/// r0 + rows - 1 of those lines (Rows per tile, fewer in the last block).
/// offset(s) is the position of row 0 of line s relative to field.data(),
/// by the field's strides; row r of the line lies row_stride further per
/// row. `transpose`: the lines run along the field's unit-stride index
/// (x-lines of a LayoutLeft field, z-lines of a LayoutRight one), so a
/// kernel stages each tile through team scratch to read and write both
/// sides along their contiguous index; otherwise the lanes of a row are
/// the field's closest points and a kernel accesses both lane-fastest.
/// Index arithmetic: one division per tile and per line of a tile, none per
/// point. Requires a league below 2^31 tiles (checked).
template <int SZ, int Rows = 32>
struct LineTiles {
  static_assert(Rows >= 1, "kband::LineTiles: Rows must be positive");
  static constexpr int rows_per_tile = Rows;
  impl::LineMap map{0, 0, 0, Direction::X};
  long long st[3] = {0, 0, 0};
  long long row_stride = 0;
  int nsys = 0, n = 0, row_blocks = 0, league = 0;
  bool transpose = false;

  LineTiles() = default;
  template <class Field>
  LineTiles(Direction dir, const Field& f) {
    static_assert(Field::rank == 3, "kband::LineTiles: the Cartesian field must be a rank-3 View");
    map = impl::LineMap{static_cast<int>(f.extent(0)), static_cast<int>(f.extent(1)), static_cast<int>(f.extent(2)),
                        dir};
    st[0] = static_cast<long long>(f.stride_0());
    st[1] = static_cast<long long>(f.stride_1());
    st[2] = static_cast<long long>(f.stride_2());
    nsys = map.nsys();
    n = map.n();
    row_stride = st[static_cast<int>(dir)];
    transpose = row_stride == 1 && n > 1;
    row_blocks = (n + Rows - 1) / Rows;
    const long long tiles = static_cast<long long>((nsys + SZ - 1) / SZ) * row_blocks;
    impl::require(tiles < (1LL << 31), impl::concat("kband::LineTiles: ", tiles, " tiles of (", SZ, " lines x ",
                                                    Rows, " rows) exceed a league of 2^31 teams"));
    league = static_cast<int>(tiles);
  }

  /// Tile t: group g, first row r0, its row and lane (line) counts.
  KOKKOS_INLINE_FUNCTION void tile(const int t, int& g, int& r0, int& rows, int& lanes) const {
    g = t / row_blocks;
    r0 = (t - g * row_blocks) * Rows;
    rows = n - r0 < Rows ? n - r0 : Rows;
    lanes = nsys - g * SZ < SZ ? nsys - g * SZ : SZ;
  }
  /// Offset of row 0 of line s from the field's data pointer.
  KOKKOS_INLINE_FUNCTION long long offset(const int s) const {
    int i, j, k;
    map.point(s, 0, i, j, k);
    return i * st[0] + j * st[1] + k * st[2];
  }
  /// Team-collective: off[l] = offset of row r0 of line g*SZ + l, l < lanes
  /// (off: SZ entries of team scratch); ends with a team barrier.
  template <class Member>
  KOKKOS_INLINE_FUNCTION void row_offsets(const Member& t, const int g, const int r0, const int lanes,
                                          long long* off) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, lanes),
                         [&](const int l) { off[l] = offset(g * SZ + l) + r0 * row_stride; });
    t.team_barrier();
  }
  /// Team size of kband's tile kernels: one tile per team, 256 threads on
  /// GPUs (4 points each for SZ = 32), one thread per team on CPUs.
  template <class ExecSpace>
  static int team_size() {
    return impl::is_device_exec<ExecSpace>::value ? (SZ * Rows < 256 ? SZ * Rows : 256) : 1;
  }
};

namespace impl {

/// Moves `total` items of a team through registers: item e is read by
/// load(e, v) (false: no item there) and written by store(e, v). Each thread
/// issues the loads of U items before their stores, so U loads per thread
/// are in flight; a plain loop over the items would wait for every load in
/// turn, as the compiler cannot prove that a store does not alias the next
/// load. Items are dealt round-robin (item e to thread e % team_size), so
/// the threads of a warp touch consecutive items.
template <int U, class T, class Member, class Load, class Store>
KOKKOS_INLINE_FUNCTION void team_move(const Member& t, const int total, const Load& load, const Store& store) {
  const int ts = t.team_size();
  for (int base = t.team_rank(); base < total; base += U * ts) {
    T v[U];
    bool ok[U];
    for (int u = 0; u < U; ++u) {
      const int e = base + u * ts;
      ok[u] = e < total && load(e, v[u]);
    }
    for (int u = 0; u < U; ++u)
      if (ok[u]) store(base + u * ts, v[u]);
  }
}

/// Field <-> GroupedBatch, one LineTiles tile per team (see there); Mode as
/// in FieldLines. Team scratch: the tile's SZ line offsets, then (transpose
/// only) the tile itself as [lane][row], rows padded to Rows + 1.
template <class ExecSpace, class Field, class V, int SZ, int Mode>
struct FieldLinesTiled {
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using value_type = typename V::non_const_value_type;
  static constexpr int R = 32;
  static constexpr int kU = 4;  // items in flight per thread (team_move)
  Field f;
  V b;  // GroupedBatch storage (ngroups, n, SZ)
  LineTiles<SZ, R> tiles;
  value_type scale;

  static size_t scratch_bytes(bool transpose) {
    return SZ * sizeof(long long) + (transpose ? static_cast<size_t>(SZ) * (R + 1) * sizeof(value_type) : 0);
  }
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& t) const {
    int g, r0, rows, lanes;
    tiles.tile(t.league_rank(), g, r0, rows, lanes);
    long long* off = static_cast<long long*>(t.team_shmem().get_shmem(SZ * sizeof(long long)));
    tiles.row_offsets(t, g, r0, lanes, off);
    auto* fp = f.data();
    value_type* bp = &b(g, r0, 0);  // row r0 + r, lane l at bp[r * SZ + l]
    const long long rs = tiles.row_stride;
    if (!tiles.transpose) {
      team_move<kU, value_type>(
          t, rows * SZ,
          [&](const int e, value_type& v) {
            const int l = e % SZ;
            if (l >= lanes) return false;
            if constexpr (Mode == 0) v = fp[off[l] + (e / SZ) * rs];
            else if constexpr (Mode == 1) v = bp[e];
            else v = fp[off[l] + (e / SZ) * rs] + scale * bp[e];
            return true;
          },
          [&](const int e, const value_type v) {
            if constexpr (Mode == 0) bp[e] = v;
            else fp[off[e % SZ] + (e / SZ) * rs] = v;
          });
      return;
    }
    value_type* tile = static_cast<value_type*>(t.team_shmem().get_shmem(SZ * (R + 1) * sizeof(value_type)));
    // the field side: item e = (lane e / R, row e % R), rows contiguous in the field
    auto field_item = [&](const int e, int& l, int& r) {
      l = e / R;
      r = e % R;
      return r < rows;
    };
    // the batch side: item e = (row e / SZ, lane e % SZ), lanes contiguous in the batch
    auto tile_at = [&](const int e) -> value_type& { return tile[(e % SZ) * (R + 1) + e / SZ]; };
    if constexpr (Mode == 0) {
      team_move<kU, value_type>(
          t, lanes * R,
          [&](const int e, value_type& v) {
            int l, r;
            if (!field_item(e, l, r)) return false;
            v = fp[off[l] + r];
            return true;
          },
          [&](const int e, const value_type v) { tile[(e / R) * (R + 1) + e % R] = v; });
      t.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(t, rows * SZ), [&](const int e) {
        if (e % SZ < lanes) bp[e] = tile_at(e);
      });
    } else {
      team_move<kU, value_type>(
          t, rows * SZ,
          [&](const int e, value_type& v) {
            if (e % SZ >= lanes) return false;
            v = bp[e];
            return true;
          },
          [&](const int e, const value_type v) { tile_at(e) = v; });
      t.team_barrier();
      team_move<kU, value_type>(
          t, lanes * R,
          [&](const int e, value_type& v) {
            int l, r;
            if (!field_item(e, l, r)) return false;
            v = tile[l * (R + 1) + r];
            if constexpr (Mode == 2) v = fp[off[l] + r] + scale * v;
            return true;
          },
          [&](const int e, const value_type v) { fp[off[e / R] + e % R] = v; });
    }
  }
};

template <int Mode, class ExecSpace, class Field, class B>
void field_lines(const char* fn, const ExecSpace& exec, Direction dir, const Field& f, const B& b,
                 batch_value_t<B> scale) {
  static_assert(Field::rank == 3, "kband: the Cartesian field must be a rank-3 View");
  using tb = batch_traits<B>;
  static_assert(tb::is_batch, "kband: the line batch must be a kband batch");
  LineMap map{static_cast<int>(f.extent(0)), static_cast<int>(f.extent(1)),
              static_cast<int>(f.extent(2)), dir};
  check_batch(fn, "lines", b, map.nsys(), map.n());
  if (map.nsys() == 0 || map.n() == 0) return;
  if constexpr (tb::layout == Layout::Grouped) {
    using V = std::decay_t<decltype(b.view())>;
    using K = FieldLinesTiled<ExecSpace, Field, V, tb::sz, Mode>;
    const K k{f, b.view(), LineTiles<tb::sz, K::R>(dir, f), scale};
    impl::Team<ExecSpace> policy(exec, k.tiles.league, LineTiles<tb::sz, K::R>::template team_size<ExecSpace>());
    Kokkos::parallel_for(fn, policy.set_scratch_size(0, Kokkos::PerTeam(K::scratch_bytes(k.tiles.transpose))), k);
  } else {
    field_lines_flat<Mode>(fn, exec, map, f, b, scale);
  }
}

}  // namespace impl

/// Gathers the `dir`-directed lines of field (nx, ny, nz) into a batch
/// (normally a GroupedBatch; any batch type works).
template <class ExecSpace, class Field, class B>
void field_to_lines(const ExecSpace& exec, Direction dir, const Field& field, const B& lines) {
  impl::ProfilingRegion region("kband::field_to_lines");
  impl::field_lines<0>("kband::field_to_lines", exec, dir, field, lines, 0);
}

/// Scatters a batch of `dir`-directed lines back into the field.
template <class ExecSpace, class B, class Field>
void lines_to_field(const ExecSpace& exec, Direction dir, const B& lines, const Field& field) {
  impl::ProfilingRegion region("kband::lines_to_field");
  impl::field_lines<1>("kband::lines_to_field", exec, dir, field, lines, 0);
}

/// field += scale * lines, for accumulating y- and z-direction terms into an
/// x-layout result (seed 002, section 5.3).
template <class ExecSpace, class B, class Field>
void accumulate_lines_to_field(const ExecSpace& exec, Direction dir, const B& lines,
                               const Field& field, impl::batch_value_t<B> scale = 1) {
  impl::ProfilingRegion region("kband::accumulate_lines_to_field");
  impl::field_lines<2>("kband::accumulate_lines_to_field", exec, dir, field, lines, scale);
}

}  // namespace kband
