// Batched Thomas (tridiagonal LU without pivoting) and periodic Thomas.
//
//   kband::thomas(exec, a, b, c, d, x, info)            per-system coefficients
//   kband::periodic_thomas(exec, a, b, c, d, x, info)   cyclic systems
//   kband::TridiagonalFactor f(exec, a, b, c[, Boundary::Periodic]);
//   kband::thomas(exec, f, d, x, info[, opt[, ws]])     one matrix, many RHS
//
// a, b, c, d, x are batches of one layout (ContiguousBatch, InterleavedBatch or
// GroupedBatch) with extents (nsys, n): row j of system s reads
//   a(s,j) x(s,j-1) + b(s,j) x(s,j) + c(s,j) x(s,j+1) = d(s,j).
// a(s,0) and c(s,n-1) are ignored for ordinary systems; for periodic systems
// they are the corner entries coupling row 0 to x(s,n-1) and row n-1 to x(s,0).
// x may be the same batch as d (in-place solve); it must not alias a, b or c.
// info(s) = 0 on success, k > 0 when the pivot of row k (1-based) was zero or
// not finite, in which case x(s,:) is set to NaN. No call fences.
//
// Thomas does not pivot: it is stable for diagonally dominant and symmetric
// positive definite systems. periodic_thomas (and the periodic factor) use the
// Sherman-Morrison correction with gamma = -b(s,0), as suits the diagonally
// dominant cyclic systems of compact schemes: b(s,0) = 0 gives info = 1 even
// when the cyclic matrix is nonsingular.
#pragma once

#include "impl/kband_Thomas_impl.hpp"
#include "impl/kband_ThomasParts_impl.hpp"
#include "impl/kband_ThomasRegisters_impl.hpp"
#include "impl/kband_ThomasWindow_impl.hpp"

#include <limits>

namespace kband {

/// Where the forward-pass intermediates live. Auto picks per backend, layout
/// and size: on GPUs (kband::thomas, kband::penta) Registers for
/// interleaved and grouped batches (tridiagonal, per-system coefficients:
/// n <= 2048, one segment of M = 8 rows a thread up to n = 128 interleaved
/// (M = 4 for n <= 32) and 512 grouped, two segments of M = 16 beyond (M =
/// 32 in float past interleaved n = 256), up to n = 1024 interleaved, four
/// segments up to 2048 interleaved; shared
/// factor: n <= 512, 32 chunks of M = 16; penta: n <= 128, 16 M with
/// per-system coefficients and 8 M with a shared factor) and for contiguous
/// per-system tridiagonal batches (teams of 64-128 threads where the
/// systems allow; M = 8 in double up to n = 2048, M = 16 beyond and in
/// float), Window for per-system (non-periodic) interleaved batches of
/// n > 2048, grouped ones of n > 2048, and from n > 512 (interleaved) or
/// n > 256 (grouped) when the caller passes a workspace
/// (thomas_workspace_size) (window_auto), else
/// Recompute (shared factors, interleaved and grouped batches of enough
/// systems), Scratch or Global; on hosts Global, except per-system
/// kband::thomas, periodic_thomas, penta and periodic_penta: Scratch while
/// a thread's rows fit the backend's team scratch (Serial: 20 MB; one
/// core of a Xeon VM, 2^20 points, n = 64..4096, against Global with a
/// workspace passed: thomas grouped 1.15-1.4x faster, interleaved 1.3-2.3x,
/// contiguous 1.1-1.2x; penta 1.1-1.6x).
///  * Global: in the output and a workspace (any size, any backend);
///  * Scratch: in team scratch memory, a thread per system (on hosts
///    per-system thomas' y' and penta's z go through x, and a thread's lanes
///    run as vector packs, its buffer a fraction of the Global variant's
///    workspace, reused by every call and kept in cache; on GPUs penta's z
///    goes through x where three rows a thread miss the on-chip level but
///    two fit);
///  * Registers: in registers, a team of threads per system, each holding a
///    chunk of rows, joined by scans in team scratch: the solve reads its
///    inputs once and writes x once. kband::thomas and kband::penta
///    (non-periodic per-system coefficients, and shared factors) only; it
///    needs teams of ceil(n / M) threads (M = 8 rows per thread with
///    per-system coefficients, 16 on GPUs for contiguous float batches and
///    contiguous double ones past n = 2048, 16 with a shared factor;
///    ceil(n / 32) in two segments, ceil(n / 64) in four, half as many in
///    float past interleaved n = 256 and grouped n = 512), so host backends
///    serve it for n <= M only.
///  * Window: per-system, non-periodic kband::thomas, kband::penta and
///    kband::gtsv (penta and gtsv: asked for only, not Auto). A thread per
///    system keeps its latest rows in a ring in team scratch and writes
///    each block of rows as soon as the rows after it decide the block to
///    the unit roundoff times ||x||_inf (a bound checked on the system's own
///    coefficients, so the result is as accurate as Thomas' whatever the
///    matrix): inputs read once and x written once at any n. A system whose
///    rows do not settle within the ring (|c'| near or above 1: weakly or
///    not diagonally dominant) goes on in the Global variant's workspace,
///    which it needs (thomas_workspace_size; allocated per call when none
///    or too short a one is passed). Meant for interleaved and grouped
///    batches on GPUs (contiguous ones are served, slowly).
///  * Recompute: shared factors only (kband::thomas with a TridiagonalFactor,
///    kband::penta with a PentadiagonalFactor).
///    No intermediate row is stored: the forward pass runs twice, the first
///    time keeping y at the first row (penta: the first two rows) of every
///    block of 16 rows (in x), the
///    second time a block at a time, from the last one down, into the
///    backward pass. A solve reads d twice and writes x once, where Global
///    reads d once and moves x three times. Auto uses it on GPUs for
///    interleaved and grouped batches that Registers does not serve, when
///    the batch has systems for at least an eighth of the device's threads
///    (with a shared factor: counting up to 16 parts a system, below).
///    kband::thomas with a TridiagonalFactor cuts the systems of a batch
///    too small to fill a GPU with a thread per system into 2, 4, 8 or 16
///    parts, a thread each (SolveOptions::segment_rows forces it): pass 1
///    runs over every part from y = 0, a small kernel joins the parts (the
///    recurrences are linear, and the matrix shared, so a part's effect on
///    the next is a fixed function computed with the factor), and pass 2
///    runs over every part from its corrected start. The data movement is
///    the same; two or three numbers a part go to rows of x, or, when x is
///    d, to a workspace of thomas_workspace_size(factor, x) elements.
enum class Variant { Auto, Global, Scratch, Registers, Recompute, Window };

inline const char* variant_name(Variant v) {
  switch (v) {
    case Variant::Global: return "global";
    case Variant::Scratch: return "scratch";
    case Variant::Registers: return "registers";
    case Variant::Recompute: return "recompute";
    case Variant::Window: return "window";
    default: return "auto";
  }
}

struct SolveOptions {
  Variant variant = Variant::Auto;
  // threads per team on GPUs (Registers: about, at least ceil(n/M);
  // Recompute: at most 128; pcr segments: also the most threads a team gets
  // in the solve for the segments' end rows, and on host backends, whose
  // teams have one thread, the teams a system gets there); 0 = kband's choice
  int team_size = 0;
  // Registers: blocks of systems each team solves in turn, loading the next
  // block's rows while it solves one (at most 64); 0 = kband's choice
  int blocks_per_team = 0;
  // pcr (Registers): cut each system into segments of about this many rows,
  // one team each; the solve then reads a, b, c, d twice (a summary pass and
  // a solve pass, with a small solve for the segments' end rows between);
  // 0 = kband's choice (GPUs: 256-row segments for long systems too few to
  // fill the device with a team each, or too long for a team's threads);
  // thomas with a shared factor (Recompute): cut each system into parts of
  // at most about this many rows, a thread each (2, 4, 8 or 16 parts, parts
  // of at least 16 rows); 0 = kband's choice (GPUs: batches with systems
  // for fewer than a fifth of the device's threads, in parts until they
  // have threads for 4/9 of them)
  int segment_rows = 0;
};

enum class Boundary { NonPeriodic, Periodic };

namespace impl {

/// Lanes (systems) per thread: 1 on GPUs; on CPUs a vector's worth when
/// the layout puts consecutive systems next to each other. On the contiguous
/// layout a CPU thread takes 8 systems when it streams one array per system
/// (shared coefficients: 8 independent recurrences, 16 streams); with four
/// input arrays per system, 8 lanes would be 40 streams, more than the
/// hardware prefetchers follow, so it takes one.
template <class Exec, class BX, int Streams = 4>
struct thomas_lanes {
  static constexpr Layout L = batch_traits<BX>::layout;
  static constexpr int value =
      is_device_exec<Exec>::value || (L == Layout::Contiguous && Streams > 1)
          ? 1
          : (L == Layout::Grouped ? (batch_traits<BX>::sz <= 32 ? batch_traits<BX>::sz : 32) : 8);
};
/// Lanes per CPU thread of the per-system thomas solves: on interleaved
/// batches two packs, which advance together row by row
/// (ThomasPerSystem::solve_packed<2>), so that each visit of a row's page
/// (a page a row in a large batch) serves both (one core of a Xeon, 2^20
/// points, n = 64..4096: 2.8-3.6 ns a point against 4.2-5.8 with one pack;
/// four packs: 2.9-3.5).
template <class Exec, class BX>
struct per_system_lanes {
  static constexpr int value =
      !is_device_exec<Exec>::value && batch_traits<BX>::layout == Layout::Interleaved ? 2 * thomas_lanes<Exec, BX>::value
                                                                                      : thomas_lanes<Exec, BX>::value;
};
/// Lanes per CPU thread of the Global shared-factor solve: two
/// packs of 8 where the batch puts 8 consecutive systems next to each other
/// (the kernel advances both at once from KBAND_HOST_PAIR_ROWS rows on).
template <class Exec, class BX, int W>
struct shared_pack_lanes {
  static constexpr Layout L = batch_traits<BX>::layout;
  static constexpr int value =
      W == 8 && (L == Layout::Interleaved || (L == Layout::Grouped && batch_traits<BX>::sz == 8)) ? 16 : W;
};
/// Rows whose loads are issued together before the recurrence uses them, so
/// that a GPU thread keeps enough bytes in flight: 16 rows when one array is
/// streamed (shared coefficients), 8 when four are (per-system coefficients).
/// (H200: 32 and 16 were slower, the extra registers cost residency.)
#ifndef KBAND_UNROLL_ONE_STREAM
#define KBAND_UNROLL_ONE_STREAM 16
#endif
#ifndef KBAND_UNROLL_FOUR_STREAMS
#define KBAND_UNROLL_FOUR_STREAMS 8
#endif
/// Rows per block of the Recompute variant (one checkpoint per block; a
/// block's rows are held while pass 2 runs through them).
#ifndef KBAND_RECOMPUTE_ROWS
#define KBAND_RECOMPUTE_ROWS 16
#endif

template <class Exec, class BX, int Streams = 4>
struct thomas_unroll {
  static constexpr int value =
      is_device_exec<Exec>::value ? (Streams == 1 ? KBAND_UNROLL_ONE_STREAM : KBAND_UNROLL_FOUR_STREAMS) : 1;
};

template <class Exec, class T>
ThomasGeometry thomas_geometry(const char* fn, int nsys, int n, int lanes, int nbuf_scratch,
                               const SolveOptions& opt, bool contiguous) {
  ThomasGeometry g;
  g.nsys = nsys;
  g.n = n;
  g.lanes = lanes;
  g.nbuf = nbuf_scratch;
  const bool device = is_device_exec<Exec>::value;
  const size_t per_thread = static_cast<size_t>(n) * nbuf_scratch * lanes * sizeof(T);
  const size_t max_scratch = Kokkos::TeamPolicy<Exec>::scratch_size_max(0);
  int ts = device ? (opt.team_size > 0 ? opt.team_size : 0) : 1;
  Variant v = opt.variant;
  require(v != Variant::Registers,
          concat(fn, ": Variant::Registers is offered by kband::thomas and kband::penta (non-periodic "
                     "per-system coefficients, and shared factors) and kband::gtsv only"));
  require(v != Variant::Recompute,
          concat(fn, ": Variant::Recompute is offered by kband::thomas with a shared factor "
                     "(TridiagonalFactor), kband::penta with a PentadiagonalFactor and kband::gtsv only"));
  require(v != Variant::Window,
          concat(fn, ": Variant::Window is offered by kband::thomas, kband::penta (per-system coefficients, "
                     "non-periodic) and kband::gtsv only"));
  if (v == Variant::Auto) {
    // On GPUs Scratch pays while a team of 32 keeps its rows on chip with room
    // for several teams per multiprocessor. On the contiguous layout it pays
    // at any size, even from level-1 scratch, whose slots are interleaved per
    // team while the Global variant's rows are strided across threads (H200,
    // n >= 128: 8-10x vs 22-25x the copy time). CPU caches hold the rows anyway.
    const bool fits = per_thread * 32 <= (contiguous ? static_cast<size_t>(Kokkos::TeamPolicy<Exec>::scratch_size_max(1))
                                                     : 48 * 1024);
    v = (device && fits) ? Variant::Scratch : Variant::Global;
  }
  if (v == Variant::Scratch) {
    if (ts == 0) {
      ts = 32;
      while (ts < 128 && per_thread * ts * 2 <= 48 * 1024) ts *= 2;
    }
    g.scratch_bytes = per_thread * ts;
    const size_t max_scratch1 = Kokkos::TeamPolicy<Exec>::scratch_size_max(1);
    g.scratch_level = g.scratch_bytes <= max_scratch ? 0 : 1;
    require(g.scratch_bytes <= (g.scratch_level == 0 ? max_scratch : max_scratch1),
            concat(fn, ": Variant::Scratch needs ", g.scratch_bytes,
                   " bytes of team scratch for n=", n, " but the backend offers ", max_scratch1,
                   "; use Variant::Global or a smaller team_size"));
    g.scratch = true;
  } else {
    if (ts == 0) ts = 128;
  }
  g.team_size = ts;
  const long items = (static_cast<long>(nsys) + lanes - 1) / lanes;
  g.league = static_cast<int>((items + ts - 1) / ts);
  return g;
}

/// Whether a host thread's rows (n rows of `lanes` systems, nbuf values a
/// row) fit the backend's team scratch: Auto's condition for the Scratch
/// packs of the per-system solves on hosts (Global, with a workspace,
/// beyond).
template <class Exec, class T>
bool host_rows_fit_scratch(int n, int lanes, int nbuf) {
  return static_cast<size_t>(n) * lanes * nbuf * sizeof(T) <=
         static_cast<size_t>(Kokkos::TeamPolicy<Exec>::scratch_size_max(1));
}

/// Contiguous batches on CPUs (Auto, Global, Scratch): a thread takes a pack
/// of LanePack<T>::L systems through transposed blocks, with its nbuf rows of
/// intermediates a system in its team scratch (Scratch; Auto while they fit)
/// or in the workspace ws (Global; `label` names it when it must grow).
/// launch(g, base, scratch) runs the kernel (`scratch` a std::bool_constant).
/// Returns false, having done nothing, for the other variants.
template <class Exec, class BX, class WS, class Launch>
bool host_contiguous_packs(const char* fn, const Exec& exec, int nsys, int n, int nbuf, const SolveOptions& opt,
                           WS& ws, const char* label, const Launch& launch) {
  using T = batch_value_t<BX>;
  using tx = batch_traits<BX>;
  if (opt.variant != Variant::Auto && opt.variant != Variant::Global && opt.variant != Variant::Scratch) return false;
  constexpr int WC = LanePack<T>::L;
  SolveOptions og = opt;
  if (og.variant == Variant::Auto)
    og.variant = host_rows_fit_scratch<Exec, T>(n, WC, nbuf) ? Variant::Scratch : Variant::Global;
  const ThomasGeometry g = thomas_geometry<Exec, T>(fn, nsys, n, WC, nbuf, og, true);
  if (!g.scratch) grow_workspace(exec, ws, WorkspaceMap<tx::layout, tx::sz>::extent(nsys, n) * nbuf, label);
  const ThomasBase<Exec, BX, T, WC> base{nsys, n, g.scratch, g.scratch_level, ws, std::numeric_limits<T>::quiet_NaN()};
  if (g.scratch)
    launch(g, base, std::true_type{});
  else
    launch(g, base, std::false_type{});
  return true;
}

template <class Exec, class Functor, class... Props>
void launch_thomas(const char* label, const Exec& exec, const ThomasGeometry& g, const Functor& f, Props...) {
  if (g.nsys == 0) return;
  impl::Team<Exec, Props...> policy(exec, g.league, g.team_size);
  if (g.scratch) policy.set_scratch_size(g.scratch_level, Kokkos::PerTeam(g.scratch_bytes));
  Kokkos::parallel_for(label, policy, f);
}

template <class InfoView>
void check_info(const char* fn, const InfoView& info, int nsys) {
  static_assert(InfoView::rank == 1 && std::is_same<typename InfoView::value_type, int>::value,
                "kband: info must be a rank-1 View of int");
  require(static_cast<int>(info.extent(0)) == nsys,
          concat(fn, ": argument 'info' (", info.label(), ") has extent ", info.extent(0),
                 ", expected nsys=", nsys));
}

/// A device scalar's value on the host (fences): the factors' info().
template <class V>
int read_scalar(const V& v) {
  int h = 0;
  Kokkos::deep_copy(h, v);
  return h;
}

/// Checks of a shared-coefficient factor's a, b, c; returns n.
template <class Exec, class VA, class VB, class VC>
int check_factor_args(const char* fn, const VA& a, const VB& b, const VC& c, int min_n) {
  static_assert(VA::rank == 1 && VB::rank == 1 && VC::rank == 1, "kband: factor coefficients must be rank-1 Views");
  require_accessible<VA, Exec>("a");
  require_accessible<VB, Exec>("b");
  require_accessible<VC, Exec>("c");
  const int n = static_cast<int>(b.extent(0));
  require(n >= min_n, concat(fn, ": n=", n, ", the minimum is ", min_n));
  require(static_cast<int>(a.extent(0)) == n && static_cast<int>(c.extent(0)) == n,
          concat(fn, ": a, b, c must have one length; got ", a.extent(0), ", ", b.extent(0), ", ", c.extent(0)));
  return n;
}

/// Argument checks shared by the per-system banded solvers: x, info and the
/// batches bs (named by `names`: the coefficients, then the right-hand side,
/// which alone may alias x) in one layout and x's extents, n >= min_n.
template <class Exec, class BX, class Info, class... B>
void check_banded_args(const char* fn, const char* const (&names)[sizeof...(B)], int min_n, const BX& x,
                       const Info& info, const B&... bs) {
  using T = batch_value_t<BX>;
  using tx = batch_traits<BX>;
  constexpr int N = sizeof...(B);
  static_assert(tx::is_batch, "kband: x must be a kband batch (ContiguousBatch, InterleavedBatch or GroupedBatch)");
  static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                "kband: float and double are supported");
  require_accessible<Kokkos::View<T*, typename tx::memory_space>, Exec>("x");
  int k = 0;
  (void)std::initializer_list<int>{
      (require_accessible<Kokkos::View<T*, typename batch_traits<B>::memory_space>, Exec>(names[k++]), 0)...};
  require_accessible<Info, Exec>("info");
  k = 0;
  (void)std::initializer_list<int>{(check_same_layout<BX, B>(fn, names[k++]), 0)...};
  const int nsys = tx::nsys(x), n = tx::n(x);
  require(n >= min_n, concat(fn, ": n=", n, " rows, the minimum is ", min_n));
  k = 0;
  (void)std::initializer_list<int>{(check_batch(fn, names[k++], bs, nsys, n), 0)...};
  check_info(fn, info, nsys);
  const void* xp = tx::data(x);
  bool alias = false;
  k = 0;
  (void)std::initializer_list<int>{(alias = alias || (k++ < N - 1 && xp == batch_traits<B>::data(bs)), 0)...};
  if (alias) {
    std::string coefficients;
    for (int i = 0; i < N - 1; ++i) coefficients += std::string(i == 0 ? "" : i == N - 2 ? " or " : ", ") + names[i];
    require(false, concat(fn, ": x must not alias ", coefficients, " (it may alias ", names[N - 1], ")"));
  }
}

/// Argument checks shared by the per-system tridiagonal solvers.
template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info>
void check_tridiagonal_args(const char* fn, const BA& a, const BB& b, const BC& c, const BD& d, const BX& x,
                            const Info& info, int min_n) {
  static const char* const names[] = {"a", "b", "c", "d"};
  check_banded_args<Exec>(fn, names, min_n, x, info, a, b, c, d);
}

/// Launch geometry of the shared-factor Recompute kernels: a thread per
/// system (W lanes on CPUs), teams of at most 128 threads, no scratch.
template <class Exec, class T>
ThomasGeometry recompute_geometry(const char* fn, int nsys, int n, int lanes, const SolveOptions& opt) {
  SolveOptions og = opt;
  og.variant = Variant::Global;
  og.team_size = opt.team_size > 0 && opt.team_size < 128 ? opt.team_size : 128;
  return thomas_geometry<Exec, T>(fn, nsys, n, lanes, 1, og, false);
}

/// Launches the Registers kernel f when the variant asks for it (or Auto
/// prefers it: GPUs; interleaved and grouped batches with n <= kAutoChunks M
/// (interleaved: kAutoChunksInterleaved M),
/// contiguous per-system batches; teams big enough); returns false to fall
/// back to the other variants under Auto.
template <class Exec, Layout L, int MinBlocks = 0, class F>
bool use_registers(const char* fn, const SolveOptions& opt, const Exec& exec, int nsys, int n, int M,
                   size_t scratch_per_thread, F& f, int segments = 1) {
  const Variant v = opt.variant;
  // Auto (GPUs): grouped batches up to F::kAutoChunks chunks of M rows per
  // system, interleaved ones up to F::kAutoChunksInterleaved (per-system
  // Thomas: 64 and 16 of 8 rows, in two segments 128 and 64 of 16 (64 and
  // 32 of 32 in float), in four 256 and 128 (128 and 64); shared factors:
  // 32; beyond that the other variants are as fast or faster);
  // contiguous batches of per-system systems at any n the teams allow (H200:
  // 3.5-5.9x the copy time against 8-10.5x for Scratch)
  const int chunks = L == Layout::Interleaved ? F::kAutoChunksInterleaved : F::kAutoChunks;
  const bool prefer = L == Layout::Contiguous ? F::kAutoContiguous : n <= chunks * M;
  if (v == Variant::Auto && !(is_device_exec<Exec>::value && prefer)) return false;
  const RegisterGeometry g = register_geometry(
      exec, nsys, n, M, L == Layout::Contiguous, scratch_per_thread, opt.team_size, opt.blocks_per_team, f, segments);
  if (!g.ok) {
    require(v == Variant::Auto, concat(fn, ": ", g.why));
    return false;
  }
  launch_registers<MinBlocks>(fn, exec, g, f);
  return true;
}

/// The Window variants of per-system, non-periodic thomas and penta
/// (kband_ThomasWindow_impl.hpp, kband_PentaWindow_impl.hpp): a thread per
/// system, teams of 32 threads on GPUs (a warp of systems), the ring of rows
/// in level-0 team scratch (per_thread bytes a thread); the Global variant's
/// workspace for systems whose lag outgrows the ring.
template <class Exec>
ThomasGeometry window_geometry(const char* fn, int nsys, int n, const SolveOptions& opt, size_t per_thread) {
  ThomasGeometry g;
  g.nsys = nsys;
  g.n = n;
  g.lanes = 1;
  g.team_size = opt.team_size > 0 ? opt.team_size : (is_device_exec<Exec>::value ? 32 : 1);
  g.league = static_cast<int>((static_cast<long>(nsys) + g.team_size - 1) / g.team_size);
  g.scratch = true;
  g.scratch_level = 0;
  g.scratch_bytes = per_thread * g.team_size;
  const size_t cap = Kokkos::TeamPolicy<Exec>::scratch_size_max(0);
  require(g.scratch_bytes <= cap, concat(fn, ": Variant::Window needs ", g.scratch_bytes,
                                         " bytes of level-0 team scratch for teams of ", g.team_size,
                                         " threads but the backend offers ", cap, "; use a smaller team_size"));
  return g;
}
template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info, class WS>
void thomas_window(const char* fn, const Exec& exec, const BA& a, const BB& b, const BC& c, const BD& d,
                   const BX& x, const Info& info, const SolveOptions& opt, WS& ws) {
  using tx = batch_traits<BX>;
  using Shape = WindowShape<batch_value_t<BX>>;
  using F = ThomasWindow<Exec, BA, BB, BC, BD, BX, Info, Shape::R, Shape::B>;
  const int nsys = tx::nsys(x), n = tx::n(x);
  const ThomasGeometry g = window_geometry<Exec>(fn, nsys, n, opt, F::scratch_per_thread());
  grow_workspace(exec, ws, WorkspaceMap<tx::layout, tx::sz>::extent(nsys, n), "kband::thomas::ws");
  launch_thomas(fn, exec, g, F(nsys, n, a, b, c, d, x, info, ws.data()));
}

/// Whether Auto takes the Window variant: GPUs, interleaved and grouped
/// batches past the sizes whose Registers kernels are as fast, where the
/// Global variant would allocate its workspace anyway (n > 2048) or the
/// caller passed one (has_ws). H200, kband-bench (double, 2^27 points), bw
/// over the copy, Window against Registers: interleaved n = 512 0.73 /
/// 0.70, 1024 0.73 / 0.56, 2048 0.74 / 0.50, 4096 0.73 / 0.33 (Auto was
/// Global there: 0.51), 8192 0.57 / 0.21; grouped n = 256 0.73 / 0.67, 512
/// 0.74 / 0.57, 1024 0.71 / 0.62, 2048 0.72 / 0.54, 4096 0.72 / 0.41; float
/// interleaved n = 256 0.79 / 0.65 (Auto), 1024 0.74, 4096 0.68.
template <class Exec, Layout L>
bool window_auto(int n, bool has_ws) {
  if (!is_device_exec<Exec>::value || L == Layout::Contiguous) return false;
  const int from = L == Layout::Interleaved ? 512 : 256;
  return n > 2048 || (has_ws && n > from);
}

template <bool Periodic, class Exec, class BA, class BB, class BC, class BD, class BX, class Info>
void thomas_per_system(const char* fn, const Exec& exec, const BA& a, const BB& b, const BC& c,
                       const BD& d, const BX& x, const Info& info, const SolveOptions& opt,
                       Kokkos::View<batch_value_t<BX>*, typename batch_traits<BX>::memory_space> ws) {
  ProfilingRegion region(fn);
  using T = batch_value_t<BX>;
  using tx = batch_traits<BX>;
  check_tridiagonal_args<Exec>(fn, a, b, c, d, x, info, Periodic ? 3 : 1);
  const int nsys = tx::nsys(x), n = tx::n(x);
  if (!Periodic &&
      (opt.variant == Variant::Window ||
       (opt.variant == Variant::Auto &&
        window_auto<Exec, tx::layout>(n, ws.extent(0) >= WorkspaceMap<tx::layout, tx::sz>::extent(nsys, n))))) {
    thomas_window(fn, exec, a, b, c, d, x, info, opt, ws);
    return;
  }
  if (!Periodic && (opt.variant == Variant::Registers || opt.variant == Variant::Auto)) {
    // one segment of M = 8 rows a thread up to its Auto limit; beyond, on
    // interleaved and grouped batches, two segments of M = 16 (32 in float
    // past interleaved n = 256), and four on interleaved batches past the
    // two segments' Auto limit
    constexpr int M = kRegisterRowsPerSystem;
    using F = ThomasPerSystemRegisters<Exec, BA, BB, BC, BD, BX, Info, M>;
    const T nan = std::numeric_limits<T>::quiet_NaN();
    constexpr bool il = tx::layout == Layout::Interleaved;
    const int one = (il ? F::kAutoChunksInterleaved : F::kAutoChunks) * M;
    if (tx::layout == Layout::Contiguous || n <= one) {
      if constexpr (il) {
        // Auto, GPUs, interleaved n <= 32: chunks of M = 4 rows (H100, n = 32:
        // 0.0139 ns a point against 0.0141-0.0145 with M = 8; n = 64: 0.0139-0.0151
        // against 0.0133-0.0135)
        constexpr int M4 = kRegisterRowsShortInterleaved;
        if (is_device_exec<Exec>::value && opt.variant == Variant::Auto && n <= kShortInterleavedRows) {
          using F4 = ThomasPerSystemRegisters<Exec, BA, BB, BC, BD, BX, Info, M4>;
          F4 f(typename F4::Base{nsys, n, 1, 1, false, nan}, a, b, c, d, x, info);
          if (use_registers<Exec, tx::layout>(fn, opt, exec, nsys, n, M4, F4::scratch_per_thread(), f)) return;
        }
      }
      if constexpr (tx::layout == Layout::Contiguous && is_device_exec<Exec>::value) {
        // contiguous batches on GPUs: teams of 64-128 threads (more teams an
        // SM), M = 8 rows a thread in double up to n = 2048, 16 beyond
        // (teams of 512 threads of 8 rows do not fit) and in float (the
        // same registers as double's 8). H100, ns a point, against teams of
        // kSystemsPerTeam systems of 8 rows: double n = 256 / 512 / 1024
        // 0.0143 / 0.0151 / 0.0155 against 0.0175 / 0.0179 / 0.0189, n =
        // 4096 0.0288 against Scratch's 0.0485; float n = 256 / 1024 / 4096
        // / 8192 0.0068 / 0.0071 / 0.0093 / 0.0110 against 0.0078 / 0.0089 /
        // 0.0100 / 0.0391 (Scratch)
        // Double past n = 4096: two segments of 16 rows a thread (one
        // segment would need teams of 512 threads, which do not fit; Auto
        // took Scratch). H100, time over the copy time, n = 6000 / 8192:
        // 5.87 / 5.19 against Scratch's 8.77 / 8.45
        constexpr int M16 = kRegisterRowsTwoSegments;
        if (sizeof(T) >= 8 && n > kContiguousRows16) {
          using F2 = ThomasPerSystemRegisters<Exec, BA, BB, BC, BD, BX, Info, M16, 2>;
          F2 f(typename F2::Base{nsys, n, 1, 1, false, nan}, a, b, c, d, x, info);
          SolveOptions o2 = opt;
          if (o2.team_size <= 0)
            o2.team_size = contiguous_team(F::kSystemsPerTeam * ((n + 2 * M16 - 1) / (2 * M16)));
          if (use_registers<Exec, tx::layout, 1>(fn, o2, exec, nsys, n, M16, F2::scratch_per_thread(), f, 2)) return;
        }
        using F16 = ThomasPerSystemRegisters<Exec, BA, BB, BC, BD, BX, Info, M16>;
        const bool wide = sizeof(T) < 8 || n > kContiguousRows8;
        const int mc = wide ? kRegisterRowsTwoSegments : M;
        SolveOptions oc = opt;
        if (oc.team_size <= 0) oc.team_size = contiguous_team(F::kSystemsPerTeam * ((n + mc - 1) / mc));
        if (wide) {
          F16 f(typename F16::Base{nsys, n, 1, 1, false, nan}, a, b, c, d, x, info);
          if (use_registers<Exec, tx::layout>(fn, oc, exec, nsys, n, mc, F16::scratch_per_thread(), f)) return;
        } else {
          F f(typename F::Base{nsys, n, 1, 1, false, nan}, a, b, c, d, x, info);
          if (use_registers<Exec, tx::layout>(fn, oc, exec, nsys, n, M, F::scratch_per_thread(), f)) return;
        }
      } else {
        F f(typename F::Base{nsys, n, 1, 1, false, nan}, a, b, c, d, x, info);
        if (use_registers<Exec, tx::layout>(fn, opt, exec, nsys, n, M, F::scratch_per_thread(), f)) return;
      }
    } else if constexpr (tx::layout != Layout::Contiguous) {
      // M = 16 rows a thread for interleaved n <= 256 (teams of 128 threads,
      // two an SM: F2's kTeamShortInterleaved); beyond, M = 16 in double and
      // 32 in float (register_rows_segments)
      constexpr int M2 = kRegisterRowsTwoSegments;
      constexpr int ML = register_rows_segments<T>();
      using F2 = ThomasPerSystemRegisters<Exec, BA, BB, BC, BD, BX, Info, M2, 2>;
      using FL = ThomasPerSystemRegisters<Exec, BA, BB, BC, BD, BX, Info, ML, 2>;
      const int two = (il ? FL::kAutoChunksInterleaved : FL::kAutoChunks) * ML;
      // LaunchBounds<256, 1>: H100, 2 % faster than without
      if (il && n <= F2::kShortInterleaved) {
        F2 f(typename F2::Base{nsys, n, 1, 1, false, nan}, a, b, c, d, x, info);
        SolveOptions o2 = opt;
        if (o2.team_size <= 0) o2.team_size = F2::kTeamShortInterleaved;
        if (use_registers<Exec, tx::layout, 1>(fn, o2, exec, nsys, n, M2, F2::scratch_per_thread(), f, 2)) return;
      } else if (!il || n <= two) {
        FL f(typename FL::Base{nsys, n, 1, 1, false, nan}, a, b, c, d, x, info);
        if (use_registers<Exec, tx::layout, 1>(fn, opt, exec, nsys, n, ML, FL::scratch_per_thread(), f, 2)) return;
      } else if constexpr (il) {
        using F4 = ThomasPerSystemRegisters<Exec, BA, BB, BC, BD, BX, Info, ML, 4>;
        F4 f(typename F4::Base{nsys, n, 1, 1, false, nan}, a, b, c, d, x, info);
        if (use_registers<Exec, tx::layout, 1>(fn, opt, exec, nsys, n, ML, F4::scratch_per_thread(), f, 4)) return;
      }
    }
  }
  // contiguous batches on CPUs, Global: a thread takes a pack of
  // LanePack<T>::L systems through transposed blocks
  // (ThomasPerSystem::solve_contiguous_pack; lane by lane, a thread runs one
  // system, whose pivots' divisions lie on its chain); periodic too
  // (Auto and Scratch: c' in the thread's team scratch, Global: in the
  // workspace)
  if constexpr (!is_device_exec<Exec>::value && KBAND_HOST_VECTOR_PACKS && tx::layout == Layout::Contiguous) {
    const auto launch = [&](const ThomasGeometry& g, const auto& base, auto scratch) {
      launch_thomas(fn, exec, g,
                    ThomasPerSystem<Exec, BA, BB, BC, BD, BX, Info, LanePack<T>::L, 1, Periodic,
                                    decltype(scratch)::value, false>(base, a, b, c, d, x, info));
    };
    if (host_contiguous_packs<Exec, BX>(fn, exec, nsys, n, Periodic ? 2 : 1, opt, ws, "kband::thomas::ws", launch))
      return;
  }
  constexpr int W = per_system_lanes<Exec, BX>::value;
  constexpr int U = thomas_unroll<Exec, BX>::value;
  // CPUs, interleaved and grouped batches: a thread's lanes run as vector
  // packs (ThomasPerSystem::solve_packed), with y' in x; Auto keeps c' in
  // team scratch (a buffer per thread that Kokkos keeps between calls and
  // that stays in cache) rather than in a workspace the size of the batch
  constexpr bool host_packs = !is_device_exec<Exec>::value && W > 1 && W % LanePack<T>::L == 0;
  SolveOptions o = opt;
  if (host_packs && o.variant == Variant::Auto)
    o.variant = host_rows_fit_scratch<Exec, T>(n, W, Periodic ? 2 : 1) ? Variant::Scratch : Variant::Global;
  const ThomasGeometry g = thomas_geometry<Exec, T>(fn, nsys, n, W, (host_packs ? 1 : 2) + (Periodic ? 1 : 0), o,
                                                     tx::layout == Layout::Contiguous);
  if (!g.scratch)
    grow_workspace(exec, ws, WorkspaceMap<tx::layout, tx::sz>::extent(nsys, n) * (Periodic ? 2 : 1), "kband::thomas::ws");
  using Base = ThomasBase<Exec, BX, T, W>;
  Base base{nsys, n, g.scratch, g.scratch_level, ws, std::numeric_limits<T>::quiet_NaN()};
  if (g.scratch && host_packs)
    launch_thomas(fn, exec, g,
                  ThomasPerSystem<Exec, BA, BB, BC, BD, BX, Info, W, U, Periodic, true, false>(base, a, b, c, d, x, info));
  else if (g.scratch)
    launch_thomas(fn, exec, g, ThomasPerSystem<Exec, BA, BB, BC, BD, BX, Info, W, U, Periodic, true>(base, a, b, c, d, x, info));
  else
    launch_thomas(fn, exec, g, ThomasPerSystem<Exec, BA, BB, BC, BD, BX, Info, W, U, Periodic, false>(base, a, b, c, d, x, info));
}

}  // namespace impl

/// Workspace (elements) the Global variant of thomas/periodic_thomas uses for
/// a batch like x; pass a View this long to avoid an allocation per call.
template <class BX>
size_t thomas_workspace_size(const BX& x, Boundary bc = Boundary::NonPeriodic) {
  using tx = impl::batch_traits<BX>;
  return impl::WorkspaceMap<tx::layout, tx::sz>::extent(tx::nsys(x), tx::n(x)) *
         (bc == Boundary::Periodic ? 2 : 1);
}

template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info>
void thomas(const Exec& exec, const BA& a, const BB& b, const BC& c, const BD& d, const BX& x,
            const Info& info, const SolveOptions& opt = {},
            const Kokkos::View<impl::batch_value_t<BX>*, typename impl::batch_traits<BX>::memory_space>&
                workspace = {}) {
  impl::thomas_per_system<false>("kband::thomas", exec, a, b, c, d, x, info, opt, workspace);
}

template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info>
void periodic_thomas(const Exec& exec, const BA& a, const BB& b, const BC& c, const BD& d,
                     const BX& x, const Info& info, const SolveOptions& opt = {},
                     const Kokkos::View<impl::batch_value_t<BX>*, typename impl::batch_traits<BX>::memory_space>&
                         workspace = {}) {
  impl::thomas_per_system<true>("kband::periodic_thomas", exec, a, b, c, d, x, info, opt, workspace);
}

/// A tridiagonal matrix shared by every system of a batch, factored once on
/// the device (one thread; no fence) and reused for any number of solves.
/// a, b, c are rank-1 Views of length n with the same conventions as above.
template <class T, class MemSpace = Kokkos::DefaultExecutionSpace::memory_space>
class TridiagonalFactor {
 public:
  using value_type = T;
  using memory_space = MemSpace;

  TridiagonalFactor() = default;

  template <class Exec, class VA, class VB, class VC>
  TridiagonalFactor(const Exec& exec, const VA& a, const VB& b, const VC& c,
                    Boundary bc = Boundary::NonPeriodic) {
    impl::ProfilingRegion region("kband::TridiagonalFactor");
    const bool periodic = bc == Boundary::Periodic;
    const int n = impl::check_factor_args<Exec>("kband::TridiagonalFactor", a, b, c, periodic ? 3 : 1);
    auto alloc = [&](const char* l, int len) {
      return Kokkos::View<T*, MemSpace>(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string(l)), len);
    };
    f_.n = n;
    f_.periodic = periodic;
    f_.a = alloc("kband::factor::a", n);
    f_.cp = alloc("kband::factor::cp", n);
    f_.w = alloc("kband::factor::w", n);
    f_.g = alloc("kband::factor::g", periodic ? n : 0);
    f_.z = alloc("kband::factor::z", periodic ? n : 0);
    f_.scal = Kokkos::View<T[2], MemSpace>(Kokkos::view_alloc(exec, std::string("kband::factor::scal")));
    f_.info = Kokkos::View<int, MemSpace>(Kokkos::view_alloc(exec, std::string("kband::factor::info")));
    // the Recompute variant in parts: levels Q = 2 .. 2^L of parts of at
    // least KBAND_RECOMPUTE_ROWS rows
    const int L = impl::RecomputeParts::levels(n, KBAND_RECOMPUTE_ROWS);
    f_.part_levels = L;
    f_.pgain = alloc("kband::factor::pgain", L * n);
    f_.pgamma = alloc("kband::factor::pgamma", L * n);
    f_.pseg = alloc("kband::factor::pseg", L > 0 ? 2 * ((2 << L) - 2) : 0);
    Kokkos::parallel_for("kband::TridiagonalFactor", impl::Range<Exec>(exec, 0, 1),
                         impl::FactorKernel<T, MemSpace, VA, VB, VC>{f_, a, b, c});
    // a thread per part of every level
    if (L > 0)
      Kokkos::parallel_for("kband::TridiagonalFactor::parts", impl::Range<Exec>(exec, 0, (2 << L) - 2),
                           impl::PartsFactorKernel<T, MemSpace>{f_});
  }

  int n() const { return f_.n; }
  bool periodic() const { return f_.periodic; }
  /// 0, or the 1-based row whose pivot failed. Copies to the host (fences).
  int info() const { return impl::read_scalar(f_.info); }
  const impl::FactorData<T, MemSpace>& data() const { return f_; }

 private:
  impl::FactorData<T, MemSpace> f_;
};

/// Workspace (elements) a shared-factor thomas call may use for a batch
/// like x: the Recompute variant's in parts, when x is d (in place), for the
/// most parts the factor offers; pass a View this long to avoid an
/// allocation per such call.
template <class T, class Mem, class BX>
size_t thomas_workspace_size(const TridiagonalFactor<T, Mem>& factor, const BX& x) {
  return impl::parts_workspace_size(factor.data(), impl::batch_traits<BX>::nsys(x), 1 << factor.data().part_levels);
}

/// Solves A x(s,:) = d(s,:) for every system with the shared, factored A.
template <class Exec, class T, class Mem, class BD, class BX, class Info>
void thomas(const Exec& exec, const TridiagonalFactor<T, Mem>& factor, const BD& d, const BX& x,
            const Info& info, const SolveOptions& opt = {},
            const Kokkos::View<impl::batch_value_t<BX>*, typename impl::batch_traits<BX>::memory_space>& workspace = {}) {
  const char* fn = factor.periodic() ? "kband::thomas(shared, periodic)" : "kband::thomas(shared)";
  impl::ProfilingRegion region(fn);
  using tx = impl::batch_traits<BX>;
  static_assert(tx::is_batch, "kband: x must be a kband batch");
  static_assert(std::is_same<impl::batch_value_t<BX>, T>::value,
                "kband::thomas: the factor and x must have one value type");
  impl::require_accessible<Kokkos::View<T*, Mem>, Exec>("factor");
  impl::check_same_layout<BX, BD>(fn, "d");
  const int nsys = tx::nsys(x), n = tx::n(x);
  impl::require(factor.n() >= 1, impl::concat(fn, ": the factor is empty (default-constructed)"));
  impl::require(n == factor.n(),
                impl::concat(fn, ": x has n=", n, " rows but the factor was built for n=", factor.n()));
  impl::check_batch(fn, "d", d, nsys, n);
  impl::check_info(fn, info, nsys);
  if (opt.variant == Variant::Registers || opt.variant == Variant::Auto) {
    // (H200, n = 384 and 512: chunks of 32 rows, 177-184 registers, took
    // 1.8-2.4x the copy time against 1.26-1.55x with 16)
    constexpr int M = impl::kRegisterRowsShared;
    const typename impl::RegisterBase<Exec, T, M> rb{nsys, n, 1, 1, false, std::numeric_limits<T>::quiet_NaN()};
    if (factor.periodic()) {
      impl::ThomasSharedRegisters<Exec, T, Mem, BD, BX, Info, M, true> f(rb, factor.data(), d, x, info);
      if (impl::use_registers<Exec, tx::layout>(fn, opt, exec, nsys, n, M, f.scratch_per_thread(), f)) return;
    } else {
      impl::ThomasSharedRegisters<Exec, T, Mem, BD, BX, Info, M, false> f(rb, factor.data(), d, x, info);
      if (impl::use_registers<Exec, tx::layout>(fn, opt, exec, nsys, n, M, f.scratch_per_thread(), f)) return;
    }
  }
  const auto& fd = factor.data();
  constexpr int W = impl::thomas_lanes<Exec, BX, 1>::value;
  constexpr int U = impl::thomas_unroll<Exec, BX, 1>::value;
  using Base = impl::ThomasBase<Exec, BX, T, W>;
  // Recompute: asked for, or Auto on GPUs for interleaved and grouped
  // batches (Registers above serves n <= 512 there; beyond, Recompute moves
  // 3 arrays where Global moves 4) with at least an eighth of the device's
  // threads in systems. A thread's two passes take longer than Global's one
  // pass and a half, so with fewer systems Global is faster (H200, 2^27
  // points: n = 4096, 32768 systems, 2.05-2.5x the copy time against 1.73-1.87x).
  // Systems fewer than a fifth of the device's threads are cut into Q parts
  // (the factor's levels, Q <= 16), a thread each, until nsys Q reaches 4/9
  // of them (H100, 2^27 points, grouped batches, time over the copy time by
  // Q = 1 / 2 / 4 / 8 / 16: n = 4096, 32768 systems, 2.46 / 2.03 / 1.98 /
  // 1.95 / 2.04; n = 8192: 3.56 / 2.65 / 1.97 / 1.98 / 2.13; n = 2048,
  // 65536 systems: 1.85 / 2.01 / 1.91 / 2.02 / 2.25; n = 1024: 1.71 / 1.86);
  // SolveOptions::segment_rows asks for parts of at most that many rows (as
  // far as the levels go).
  const int Qmax = 1 << fd.part_levels;
  const long conc = static_cast<long>(exec.concurrency());
  if (opt.variant == Variant::Recompute ||
      (opt.variant == Variant::Auto && impl::is_device_exec<Exec>::value && tx::layout != Layout::Contiguous &&
       static_cast<long>(nsys) * Qmax * 8 >= conc)) {
    int Q = 1;
    if (opt.segment_rows > 0)
      while (Q < Qmax && (n + Q - 1) / Q > opt.segment_rows) Q *= 2;
    else if (impl::is_device_exec<Exec>::value && static_cast<long>(nsys) * 5 < conc)
      while (Q < Qmax && static_cast<long>(nsys) * Q * 9 < 4 * conc) Q *= 2;
    constexpr int RB = KBAND_RECOMPUTE_ROWS;
    if (Q > 1) {
      impl::thomas_parts<RB>(fn, exec, fd, Q, d, x, info, workspace);
      return;
    }
    const impl::ThomasGeometry g = impl::recompute_geometry<Exec, T>(fn, nsys, n, W, opt);
    const Base base{nsys, n, false, 0, {}, std::numeric_limits<T>::quiet_NaN()};
    // at most 96 registers (5 teams of 128 per multiprocessor on GPUs; H200,
    // n = 512..2048: 1.47-1.68x the copy time, against 1.42-1.95x uncapped
    // at 128-136 registers and 1.36-1.73x without the loads ahead)
    using Bounds = Kokkos::LaunchBounds<128, 5>;
    if (factor.periodic())
      impl::launch_thomas(fn, exec, g, impl::ThomasSharedRecompute<Exec, T, Mem, BD, BX, Info, W, RB, true>(base, fd, d, x, info), Bounds());
    else
      impl::launch_thomas(fn, exec, g, impl::ThomasSharedRecompute<Exec, T, Mem, BD, BX, Info, W, RB, false>(base, fd, d, x, info), Bounds());
    return;
  }
  const impl::ThomasGeometry g = impl::thomas_geometry<Exec, T>(fn, nsys, n, W, 1, opt, tx::layout == Layout::Contiguous);
  Base base{nsys, n, g.scratch, g.scratch_level, {}, std::numeric_limits<T>::quiet_NaN()};
  constexpr int WP = impl::shared_pack_lanes<Exec, BX, W>::value;
  if constexpr (WP != W) {
    if (!g.scratch) {
      const impl::ThomasGeometry gp = impl::thomas_geometry<Exec, T>(fn, nsys, n, WP, 1, opt, false);
      const impl::ThomasBase<Exec, BX, T, WP> bp{nsys, n, false, 0, {}, std::numeric_limits<T>::quiet_NaN()};
      if (factor.periodic())
        impl::launch_thomas(fn, exec, gp, impl::ThomasShared<Exec, T, Mem, BD, BX, Info, WP, U, true, false>(bp, fd, d, x, info));
      else
        impl::launch_thomas(fn, exec, gp, impl::ThomasShared<Exec, T, Mem, BD, BX, Info, WP, U, false, false>(bp, fd, d, x, info));
      return;
    }
  }
  // the intermediate's home (scratch or x) is a template parameter: the
  // kernel then computes one address per row, not two
  using impl::ThomasShared;
  if (factor.periodic() && g.scratch)
    impl::launch_thomas(fn, exec, g, ThomasShared<Exec, T, Mem, BD, BX, Info, W, U, true, true>(base, fd, d, x, info));
  else if (factor.periodic())
    impl::launch_thomas(fn, exec, g, ThomasShared<Exec, T, Mem, BD, BX, Info, W, U, true, false>(base, fd, d, x, info));
  else if (g.scratch)
    impl::launch_thomas(fn, exec, g, ThomasShared<Exec, T, Mem, BD, BX, Info, W, U, false, true>(base, fd, d, x, info));
  else
    impl::launch_thomas(fn, exec, g, ThomasShared<Exec, T, Mem, BD, BX, Info, W, U, false, false>(base, fd, d, x, info));
}

}  // namespace kband
