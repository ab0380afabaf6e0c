// Batched parallel cyclic reduction (PCR) for tridiagonal systems.
//
//   kband::pcr(exec, a, b, c, d, x, info[, opts[, ws]])   per-system coefficients
//   kband::PCRFactor f(exec, a, b, c);                      shared coefficients,
//   kband::pcr(exec, f, d, x, info[, opts[, ws]])           factored once
//   ws: optional workspace for segments (kband::pcr_workspace_size elements)
//
// Same conventions as kband::thomas (a(s,0), c(s,n-1) ignored; x may alias d;
// info(s) = k > 0 names a row whose reduced diagonal was zero or not finite,
// x(s,:) is then NaN).
//
// Two variants (SolveOptions::variant):
//  * Variant::Scratch: the classic PCR, a system's rows in team scratch,
//    ceil(log2 n) steps; n is bounded by the backend's scratch size
//    (kband::Error names the limit).
//  * Variant::Registers: PCR on the partitioned system (kband_PCRRegisters_impl.hpp):
//    each thread reduces a chunk of 8 rows in registers to its first and last
//    row; one step of cyclic reduction and PCR solve those 2n/8 rows in team
//    scratch; the threads substitute. A solve reads a, b, c, d once and
//    writes x once; n is bounded only by the level-1 scratch of the reduced
//    rows (3/8 of the system's values, double-buffered). With a PCRFactor the
//    same kernel reads the factor's copy of the matrix (from cache, shared by
//    all systems) and only d and x from memory; its pivots are checked in the
//    solve, and a failed factor (info() != 0) gives NaN and that info.
//    Systems too few and long to fill a GPU with a team each are split over
//    several teams (SolveOptions::segment_rows), at the price of reading the
//    inputs twice.
//  Auto: Registers, but Scratch for shared-matrix solves on host backends.
//  There a team's one thread owns all chunks and reads the inputs twice; with
//  per-system coefficients that is still faster than Scratch, with a shared
//  matrix it is not (one core of this project's VM, n = 64 / 1024, time over
//  the copy time: per-system 20.8 / 24.1 against 37.0 / 56.3; shared 19.5 /
//  22.1 against 9.7 / 13.3).
//
// PCR does not pivot. It is stable for diagonally dominant systems (the
// off-diagonals shrink every step) and in practice for SPD systems; use
// Thomas or a pivoting solver for general matrices.
#pragma once

#include "impl/kband_PCRRegisters_impl.hpp"
#include "impl/kband_PCR_impl.hpp"
#include "kband_Thomas.hpp"

namespace kband {
namespace impl {

template <class Exec>
PCRGeometry pcr_geometry(const char* fn, int nsys, int n, size_t bytes_per_system,
                         const SolveOptions& opt) {
  PCRGeometry g;
  g.nsys = nsys;
  g.n = n;
  g.steps = ceil_log2(n);
  const bool device = is_device_exec<Exec>::value;
  int ts = 1;
  if (device) ts = opt.team_size > 0 ? opt.team_size : (n >= 256 ? 256 : (n >= 64 ? 128 : 64));
  g.ns = n < ts ? n : ts;
  g.per_team = ts / g.ns;
  g.team_size = ts;
  const size_t max_scratch = Kokkos::TeamPolicy<Exec>::scratch_size_max(0);
  // shrink the number of systems per team until the scratch fits
  while (g.per_team > 1 && g.per_team * bytes_per_system > max_scratch) --g.per_team;
  g.scratch_bytes = g.per_team * bytes_per_system;
  // rows stay on chip (level 0) when they fit, else in the backend's level-1 scratch
  const size_t max_scratch1 = Kokkos::TeamPolicy<Exec>::scratch_size_max(1);
  g.scratch_level = g.scratch_bytes <= max_scratch ? 0 : 1;
  require(g.scratch_bytes <= (g.scratch_level == 0 ? max_scratch : max_scratch1),
          concat(fn, ": n=", n, " needs ", g.scratch_bytes, " bytes of team scratch but the backend offers ",
                 max_scratch1, "; use kband::thomas (or solve_tridiagonal) for systems this long"));
  g.league = static_cast<int>((static_cast<long>(nsys) + g.per_team - 1) / g.per_team);
  return g;
}

/// Geometry of the Registers variant: K chunks of M rows per system, Kt =
/// min(K, team limit) threads per system, P systems per team (about
/// opt.team_size threads, default KBAND_PCR_TEAM on GPUs), the reduced rows
/// in level-0 scratch when they fit. Segments (G > 1, one team each, P = 1):
/// of opt.segment_rows rows when set; else, on GPUs, of 256 rows when the
/// systems are too few and long to fill the device with a team each, or too
/// long for a team to give each chunk a thread.
template <class Exec, class Functor, class Summary>
PCRRegisterGeometry pcr_register_geometry(const char* fn, const Exec& exec, int nsys, int n, bool contiguous,
                                          const SolveOptions& opt, Functor& f, Summary& fs) {
  constexpr int M = Functor::kRows;
  PCRRegisterGeometry g;
  g.nsys = nsys;
  g.n = n;
  g.M = M;
  g.K = (n + M - 1) / M;
  g.S = g.K * M;
  g.chunk_fastest = contiguous;
  g.P = 1;
  g.Kt = 1;
  f.g = g;
  fs.g = g;
  impl::Team<Exec> probe(exec, 1, 1);
  int cap = probe.team_size_max(f, Kokkos::ParallelForTag());
  const int cap_s = probe.team_size_max(fs, Kokkos::ParallelForTag());
  if (opt.team_size > 0 && opt.team_size < cap) cap = opt.team_size;
  if (cap < 1) cap = 1;
  const bool device = is_device_exec<Exec>::value;
  const size_t max0 = Kokkos::TeamPolicy<Exec>::scratch_size_max(0);
  const size_t max1 = Kokkos::TeamPolicy<Exec>::scratch_size_max(1);
  // segments
  int seg_rows = opt.segment_rows > 0 ? opt.segment_rows : 0;
  if (seg_rows == 0 && device) {
    // Segments of kPCRSegmentChunks chunks (256 rows) when the systems are
    // too few to fill the device with a team each (H200: 16 x 2^20 rows, one
    // team per system, 78x the copy time; 512-row segments 7.5x), or too
    // long for one chunk per thread of a team, which would then load and
    // reduce its chunks twice anyway (16384 x 8192: whole 8.7x, 512-row
    // segments 7.1x; 1024-row 8.3x and 2048-row 11.5x on both).
    const long threads = static_cast<long>(exec.concurrency());
    const long used = static_cast<long>(nsys) * (g.K < cap ? g.K : cap);
    if (g.K > kPCRSegmentChunks && (g.K > cap || used * 4 < threads)) seg_rows = kPCRSegmentChunks * M;
  }
  if (seg_rows > 0) {
    const int seg_chunks = (seg_rows + M - 1) / M;
    if (seg_chunks < g.K) {
      g.K = seg_chunks;
      g.S = seg_chunks * M;
      g.G = (n + g.S - 1) / g.S;
      const int cap2 = cap < cap_s ? cap : cap_s;
      g.Kt = g.K < cap2 ? g.K : (cap2 < 1 ? 1 : cap2);
      g.V = (g.K + g.Kt - 1) / g.Kt;
      g.P = 1;
      g.team_size = g.Kt;
      const long league = static_cast<long>(nsys) * g.G;
      require(league <= static_cast<long>(std::numeric_limits<int>::max()),
              concat(fn, ": ", nsys, " systems of ", g.G, " segments are too many teams"));
      g.league = static_cast<int>(league);
      // each pass its own scratch (the summary pass carries two more arrays)
      g.scratch_bytes = Functor::scratch_bytes(1, g.K);
      g.scratch_level = g.scratch_bytes <= max0 ? 0 : 1;
      fs.g = g;
      fs.g.scratch_bytes = Summary::scratch_bytes(1, g.K);
      fs.g.scratch_level = fs.g.scratch_bytes <= max0 ? 0 : 1;
      require(fs.g.scratch_bytes <= max1, concat(fn, ": segments of ", g.S, " rows need ", fs.g.scratch_bytes,
                                                 " bytes of team scratch but the backend offers ", max1));
      f.g = g;
      return g;
    }
  }
  g.Kt = g.K < cap ? g.K : cap;
  g.V = (g.K + g.Kt - 1) / g.Kt;
  // non-contiguous batches: a warp's loads coalesce across systems, so up to
  // 32 systems per team
  int target = opt.team_size > 0 ? opt.team_size : (device ? KBAND_PCR_TEAM : 1);
  if (opt.team_size <= 0 && device && !contiguous && 32 * g.Kt > target) target = 32 * g.Kt < cap ? 32 * g.Kt : cap;
  int P = 1;
  while (P < 32 && 2 * P * g.Kt <= target && 2 * P * g.Kt <= cap && P < nsys &&
         Functor::scratch_bytes(2 * P, g.K) <= max0)
    P *= 2;
  g.P = P;
  g.team_size = P * g.Kt;
  g.scratch_bytes = Functor::scratch_bytes(P, g.K);
  g.scratch_level = g.scratch_bytes <= max0 ? 0 : 1;
  require(g.scratch_bytes <= (g.scratch_level == 0 ? max0 : max1),
          concat(fn, ": n=", n, " needs ", g.scratch_bytes, " bytes of team scratch but the backend offers ", max1,
                 "; use kband::thomas (or solve_tridiagonal) for systems this long"));
  g.league = static_cast<int>((static_cast<long>(nsys) + P - 1) / P);
  f.g = g;
  fs.g = g;
  return g;
}

/// Runs the Registers variant: f solves; with segments, fs first summarises
/// every segment and PCRInterface (a team per system, or per block of a
/// system's segments in four launches) solves for the segments' end rows
/// (12 values per segment and 10 per block: the caller's workspace when it
/// is long enough, else allocated for the call).
template <class Exec, class Functor, class Summary, class Workspace>
void launch_pcr_registers(const char* fn, const Exec& exec, int nsys, int n, bool contiguous,
                          const SolveOptions& opt, Functor& f, Summary& fs, const Workspace& workspace) {
  const PCRRegisterGeometry g = pcr_register_geometry(fn, exec, nsys, n, contiguous, opt, f, fs);
  if (nsys == 0) return;
  if (g.G > 1) {
    using T = typename Functor::T;
    using WS = typename Functor::WS;
    using Interface = PCRInterface<Exec, T, WS, decltype(f.info)>;
    Interface fi = Interface::make(exec, f.info, nsys, g.G, g.S, f.nan, opt.team_size);
    const size_t need = fi.workspace_size();
    const WS ws = workspace.extent(0) >= need
                      ? WS(workspace.data(), need)
                      : WS(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string("kband::pcr::segments")),
                           need);
    f.ws = ws;
    fs.ws = ws;
    fi.ws = ws;
    impl::Team<Exec> policy(exec, g.league, g.team_size);
    policy.set_scratch_size(fs.g.scratch_level, Kokkos::PerTeam(fs.g.scratch_bytes));
    Kokkos::parallel_for(fn, policy, fs);
    fi.launch(fn, exec);
  }
  impl::Team<Exec> policy(exec, g.league, g.team_size);
  policy.set_scratch_size(g.scratch_level, Kokkos::PerTeam(g.scratch_bytes));
  Kokkos::parallel_for(fn, policy, f);
}

/// opt.variant, checked: pcr offers Auto, Scratch and Registers.
inline Variant pcr_variant(const char* fn, const SolveOptions& opt) {
  const Variant v = opt.variant;
  require(v == Variant::Auto || v == Variant::Scratch || v == Variant::Registers,
          concat(fn, ": offers Variant::Auto, Scratch and Registers, not ", variant_name(v)));
  return v;
}

template <class Exec, class Functor>
void launch_pcr(const char* label, const Exec& exec, const PCRGeometry& g, const Functor& f) {
  if (g.nsys == 0) return;
  impl::Team<Exec> policy(exec, g.league, g.team_size);
  policy.set_scratch_size(g.scratch_level, Kokkos::PerTeam(g.scratch_bytes));
  Kokkos::parallel_for(label, policy, f);
}

}  // namespace impl

/// Workspace (elements) that covers any segmented Registers solve of a batch
/// like x with these options (12 values per segment, segments of
/// opt.segment_rows rows or kband's 256, and 10 per block of the solve for
/// the segments' end rows, at most 64 blocks a system); pass a View this
/// long to pcr to avoid an allocation per call when segments are used.
template <class BX>
size_t pcr_workspace_size(const BX& x, const SolveOptions& opt = {}) {
  using tx = impl::batch_traits<BX>;
  constexpr int M = impl::kPCRRegisterRows;
  const long rows = opt.segment_rows > 0 ? (opt.segment_rows + M - 1) / M * M : impl::kPCRSegmentChunks * M;
  const long n = tx::n(x), G = (n + rows - 1) / rows;
  using IB = impl::PCRInterfaceBlocks;
  return static_cast<size_t>(tx::nsys(x)) *
         static_cast<size_t>(G * impl::PCRSegmentSlots::kCount + (G > 1 ? IB::most(G) * IB::kCount : 0));
}

template <class Exec, class BA, class BB, class BC, class BD, class BX, class Info>
void pcr(const Exec& exec, const BA& a, const BB& b, const BC& c, const BD& d, const BX& x,
         const Info& info, const SolveOptions& opt = {},
         const Kokkos::View<impl::batch_value_t<BX>*, typename impl::batch_traits<BX>::memory_space>& workspace = {}) {
  const char* fn = "kband::pcr";
  impl::ProfilingRegion region(fn);
  using T = impl::batch_value_t<BX>;
  using tx = impl::batch_traits<BX>;
  impl::check_tridiagonal_args<Exec>(fn, a, b, c, d, x, info, 1);
  const int nsys = tx::nsys(x), n = tx::n(x);
  const Variant v = impl::pcr_variant(fn, opt);
  if (v == Variant::Registers || v == Variant::Auto) {
    constexpr int M = impl::kPCRRegisterRows;
    using KR = impl::PCRRegisters<Exec, BA, BB, BC, BD, BX, Info, M>;
    using KS = impl::PCRRegisters<Exec, BA, BB, BC, BD, BX, Info, M, true>;
    KR f{a, b, c, d, x, info, {}, std::numeric_limits<T>::quiet_NaN()};
    KS fs{a, b, c, d, x, info, {}, std::numeric_limits<T>::quiet_NaN()};
    impl::launch_pcr_registers(fn, exec, nsys, n, tx::layout == Layout::Contiguous, opt, f, fs, workspace);
    return;
  }
  using K = impl::PCRPerSystem<Exec, BA, BB, BC, BD, BX, Info>;
  const impl::PCRGeometry g = impl::pcr_geometry<Exec>(fn, nsys, n, K::bytes_per_system(n), opt);
  impl::launch_pcr(fn, exec, g, K{a, b, c, d, x, info, g, std::numeric_limits<T>::quiet_NaN()});
}

/// A tridiagonal matrix shared by all systems, with the PCR multipliers of
/// every reduction step computed once (one device thread, no fence).
template <class T, class MemSpace = Kokkos::DefaultExecutionSpace::memory_space>
class PCRFactor {
 public:
  using value_type = T;
  using memory_space = MemSpace;
  PCRFactor() = default;

  template <class Exec, class VA, class VB, class VC>
  PCRFactor(const Exec& exec, const VA& a, const VB& b, const VC& c) {
    impl::ProfilingRegion region("kband::PCRFactor");
    const int n = impl::check_factor_args<Exec>("kband::PCRFactor", a, b, c, 1);
    f_.n = n;
    f_.steps = impl::ceil_log2(n);
    using V2 = Kokkos::View<T**, Kokkos::LayoutRight, MemSpace>;
    const auto noinit = [&](const char* l) { return Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string(l)); };
    f_.k1 = V2(noinit("kband::pcr_factor::k1"), f_.steps, n);
    f_.k2 = V2(noinit("kband::pcr_factor::k2"), f_.steps, n);
    f_.rb = Kokkos::View<T*, MemSpace>(noinit("kband::pcr_factor::rb"), n);
    f_.a = Kokkos::View<T*, MemSpace>(noinit("kband::pcr_factor::a"), n);
    f_.b = Kokkos::View<T*, MemSpace>(noinit("kband::pcr_factor::b"), n);
    f_.c = Kokkos::View<T*, MemSpace>(noinit("kband::pcr_factor::c"), n);
    f_.info = Kokkos::View<int, MemSpace>(Kokkos::view_alloc(exec, std::string("kband::pcr_factor::info")));
    V2 work(noinit("kband::pcr_factor::work"), 2, 3 * n);
    Kokkos::parallel_for("kband::PCRFactor", impl::Range<Exec>(exec, 0, 1),
                         impl::PCRFactorKernel<T, MemSpace, VA, VB, VC>{f_, work, a, b, c});
  }

  int n() const { return f_.n; }
  /// 0, or the 1-based row whose reduced diagonal failed. Fences.
  int info() const { return impl::read_scalar(f_.info); }
  const impl::PCRFactorData<T, MemSpace>& data() const { return f_; }

 private:
  impl::PCRFactorData<T, MemSpace> f_;
};

template <class Exec, class T, class Mem, class BD, class BX, class Info>
void pcr(const Exec& exec, const PCRFactor<T, Mem>& factor, const BD& d, const BX& x, const Info& info,
         const SolveOptions& opt = {},
         const Kokkos::View<impl::batch_value_t<BX>*, typename impl::batch_traits<BX>::memory_space>& workspace = {}) {
  const char* fn = "kband::pcr(shared)";
  impl::ProfilingRegion region(fn);
  using tx = impl::batch_traits<BX>;
  static_assert(tx::is_batch, "kband: x must be a kband batch");
  static_assert(std::is_same<impl::batch_value_t<BX>, T>::value,
                "kband::pcr: the factor and x must have one value type");
  impl::check_same_layout<BX, BD>(fn, "d");
  const int nsys = tx::nsys(x), n = tx::n(x);
  impl::require(factor.n() >= 1, impl::concat(fn, ": the factor is empty (default-constructed)"));
  impl::require(n == factor.n(),
                impl::concat(fn, ": x has n=", n, " rows but the factor was built for n=", factor.n()));
  impl::check_batch(fn, "d", d, nsys, n);
  impl::check_info(fn, info, nsys);
  const Variant v = impl::pcr_variant(fn, opt);
  if (v == Variant::Registers || (v == Variant::Auto && impl::is_device_exec<Exec>::value)) {
    using Bc = impl::Broadcast<T, Mem>;
    constexpr int M = impl::kPCRRegisterRows;
    using KR = impl::PCRSharedRegisters<Exec, T, Mem, BD, BX, Info, M>;
    using KS = impl::PCRRegisters<Exec, Bc, Bc, Bc, BD, BX, Info, M, true>;
    const auto& fd = factor.data();
    const T nan = std::numeric_limits<T>::quiet_NaN();
    KR f(typename KR::Base{Bc{fd.a}, Bc{fd.b}, Bc{fd.c}, d, x, info, {}, nan}, fd.info);
    KS fs{Bc{fd.a}, Bc{fd.b}, Bc{fd.c}, d, x, info, {}, nan};
    impl::launch_pcr_registers(fn, exec, nsys, n, tx::layout == Layout::Contiguous, opt, f, fs, workspace);
    return;
  }
  using K = impl::PCRShared<Exec, T, Mem, BD, BX, Info>;
  const impl::PCRGeometry g = impl::pcr_geometry<Exec>(fn, nsys, n, K::bytes_per_system(n), opt);
  impl::launch_pcr(fn, exec, g, K{factor.data(), d, x, info, g, std::numeric_limits<T>::quiet_NaN()});
}

}  // namespace kband
