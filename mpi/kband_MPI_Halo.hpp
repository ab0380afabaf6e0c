// kband::mpi neighbour exchanges along one direction of a CartGrid:
//
//  * HaloExchange: the `depth` (1..4) rows next to each end of every line of
//    an SZ-grouped batch go to the previous / next rank along the direction;
//    this rank receives its neighbours' rows into two halo batches
//      lo(s, r) = global row (offset - depth + r),  hi(s, r) = row (offset + n + r)
//    (periodic wrap between the first and last ranks when the direction is
//    periodic; past a non-periodic end the halo batch is left untouched).
//  * BoundaryExchange: two flat buffers of one size, one to each neighbour
//    (the boundary rows of DistD2's 2x2 systems).
//
// Both are non-blocking: start() packs on the device (a kernel on `exec`),
// waits for it (exec.fence(): MPI must see the packed data) and posts
// MPI_Irecv / MPI_Isend; finish() waits and unpacks on the device without a
// fence. Work enqueued between the two overlaps the communication. Buffers go
// to MPI directly or through host mirrors (CommConfig, direct_path).
// BufferPath::CudaIPC: HaloExchange's pack kernel stores straight into the
// neighbours' receive buffers (NVLink / PCIe peer stores); start() records
// an interprocess event and tells the neighbours by MPI that it is recorded;
// finish() takes their words and makes exec's stream wait for their events.
// Neither blocks on a kernel: the host runs ahead, and the devices wait for
// each other.
#pragma once

#include "kband_MPI_Grid.hpp"

#include <cstring>
#include <utility>

namespace kband {
namespace mpi {
namespace impl {

/// Message channels (tags tag_base + 6 * channel + 2 * direction + side):
/// exchanges that may be in flight at once along one direction differ in channel.
enum ExchangeChannel { kHaloChannel = 0, kBoundaryChannel = 1, kDistD2Channel = 2 };

/// Checks on grid.comm() that `value` is the same on every rank of this
/// rank's line along `dir`; every rank of the grid throws the same Error if not.
inline void require_line_uniform(const CartGrid& grid, Direction dir, const char* fn, const char* what,
                                 long long value) {
  long long v[2] = {value, -value}, r[2] = {0, 0};
  check(MPI_Allreduce(v, r, 2, MPI_LONG_LONG, MPI_MIN, grid.line_comm(dir)), "MPI_Allreduce");
  require_all(grid.comm(), r[0] == -r[1],
              kband::impl::concat(fn, ": ", what, " differs between the ranks of one line along direction ",
                     static_cast<int>(dir), " (from ", r[0], " to ", -r[1], ")"));
}

/// Host memory for staged messages: page-locked on CUDA (faster, asynchronous
/// device <-> host copies), ordinary host memory elsewhere.
#if defined(KOKKOS_ENABLE_CUDA)
using StagingSpace = Kokkos::CudaHostPinnedSpace;
#else
using StagingSpace = Kokkos::HostSpace;
#endif

#if defined(KOKKOS_ENABLE_CUDA)
inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(kband::impl::concat("kband::mpi: ", what, " failed: ", cudaGetErrorString(e)));
}
/// BufferPath::CudaIPC: this rank's receive buffers (two parities of 2m
/// elements, cudaMalloc'd so that the IPC handle maps their base) and the
/// neighbours' receive buffers mapped into this process.
struct CudaIpcBuffers {
  void* base = nullptr;
  void* peer[2] = {nullptr, nullptr};  // prev, next (== base for this rank itself)
  bool opened[2] = {false, false};
  cudaEvent_t sent = nullptr;  // interprocess: recorded after this rank's stores / copies into the neighbours
  cudaEvent_t peer_sent[2] = {nullptr, nullptr};  // the neighbours' `sent` (prev, next)
  bool peer_opened[2] = {false, false};
  CudaIpcBuffers() = default;
  CudaIpcBuffers(const CudaIpcBuffers&) = delete;
  CudaIpcBuffers& operator=(const CudaIpcBuffers&) = delete;
  ~CudaIpcBuffers() {
    for (int s = 0; s < 2; ++s)
      if (peer_opened[s]) cudaEventDestroy(peer_sent[s]);
    if (sent) cudaEventDestroy(sent);
    for (int s = 0; s < 2; ++s)
      if (opened[s]) cudaIpcCloseMemHandle(peer[s]);
    if (base) cudaFree(base);
  }
};
#endif

/// Two messages of `m` elements each way: send[0, m) -> prev, send[m, 2m) ->
/// next; recv[0, m) <- prev, recv[m, 2m) <- next. BufferPath::CudaIPC
/// synchronises on the devices: post() records an interprocess event after
/// this rank's stores into the neighbours and sends each neighbour a word at
/// once; wait() takes the neighbours' words (so their events are recorded)
/// and makes exec's stream wait for their events -- no host waits for a
/// kernel. It alternates between two receive buffers (recv() is the current
/// one, after target()), so that a neighbour never writes into data this
/// rank may still read: its stores of exchange i+2 follow on its stream its
/// wait for this rank's event of exchange i+1 (or later: a stream waits for
/// the event's last record), which follows on this rank's stream everything
/// enqueued after the wait of exchange i.
/// A sender either writes send() and calls post(exec) (copied on the device
/// for CudaIPC), or writes the views target(side) returns (the neighbours'
/// receive buffers for CudaIPC, send() otherwise) and calls post(exec, true).
template <class T, class Mem>
class NeighbourExchange {
 public:
  using buffer_type = Kokkos::View<T*, Mem>;
  using host_buffer_type = Kokkos::View<T*, StagingSpace>;

  NeighbourExchange() = default;
  NeighbourExchange(const CartGrid& grid, Direction dir, long long m, int channel, const CommConfig& cfg)
      : comm_(grid.comm()),
        prev_(grid.prev(dir)),
        next_(grid.next(dir)),
        m_(m),
        tag_(cfg.tag_base + 6 * channel + 2 * static_cast<int>(dir)),
        direct_(direct_path<Mem>(cfg)),
        ipc_(cfg.path == BufferPath::CudaIPC) {
    kband::impl::require(m <= INT_MAX, kband::impl::concat("kband::mpi: a message of ", m, " elements exceeds INT_MAX"));
    send_ = buffer_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kband::mpi::send"), 2 * m);
    if (ipc_) {  // collective: every rank of the grid takes this path (same cfg)
      const std::string msg = setup_ipc();
      require_all(grid.comm(), msg.empty(), msg);
      return;
    }
    recv_ = buffer_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kband::mpi::recv"), 2 * m);
    if (!direct_) {  // separate host buffers even when Mem is host memory
      send_h_ = host_buffer_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kband::mpi::send_h"), 2 * m);
      recv_h_ = host_buffer_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kband::mpi::recv_h"), 2 * m);
    }
  }

  const buffer_type& send() const { return send_; }
  const buffer_type& recv() const { return recv_; }
  long long m() const { return m_; }
  bool has_prev() const { return prev_ != MPI_PROC_NULL; }
  bool has_next() const { return next_ != MPI_PROC_NULL; }
  bool direct() const { return direct_; }
  bool ipc() const { return ipc_; }

  /// Where the message to prev (side 0) / next (side 1) of the coming
  /// exchange goes: m elements; call before writing them, once per exchange
  /// (CudaIPC: switches to the next receive buffer). A side without a
  /// neighbour gets this rank's send buffer (written, never sent).
  buffer_type target(int side) {
    turn();
    const bool peer = ipc_ && (side == 0 ? has_prev() : has_next());
    T* p = send_.data() + side * m_;
#if defined(KOKKOS_ENABLE_CUDA)
    // prev's "from next" half, next's "from prev" half
    if (peer) p = static_cast<T*>(ipcbuf_->peer[side]) + static_cast<size_t>(parity_) * 2 * m_ + (side == 0 ? m_ : 0);
#else
    (void)peer;
#endif
    return buffer_type(p, m_);
  }

  /// Posts the receives, stages the send buffer (filled by work already
  /// enqueued on exec), fences exec and posts the sends. stored: the data
  /// went to target(0) / target(1) (no copy; CudaIPC: no fence either).
  template <class Exec>
  void post(const Exec& exec, bool stored = false) {
    kband::impl::require(!active_, "kband::mpi: exchange started twice without finish()");
    if (!stored) turn();
    turned_ = false;
    if (ipc_) {
      post_ipc(exec, stored);
      return;
    }
    T* rb = direct_ ? recv_.data() : recv_h_.data();
    T* sb = direct_ ? send_.data() : send_h_.data();
    const int m = static_cast<int>(m_);
    const MPI_Datatype t = datatype<T>();
    check(MPI_Irecv(rb, m, t, prev_, tag_ + 0, comm_, &req_[0]), "MPI_Irecv");
    check(MPI_Irecv(rb + m_, m, t, next_, tag_ + 1, comm_, &req_[1]), "MPI_Irecv");
    if (!direct_) Kokkos::deep_copy(exec, send_h_, send_);
    exec.fence();
    check(MPI_Isend(sb, m, t, prev_, tag_ + 1, comm_, &req_[2]), "MPI_Isend");
    check(MPI_Isend(sb + m_, m, t, next_, tag_ + 0, comm_, &req_[3]), "MPI_Isend");
    active_ = true;
  }

  /// Waits for the four messages; recv() holds the data once `exec` reaches
  /// the point of this call (the staged copy is enqueued on exec).
  template <class Exec>
  void wait(const Exec& exec) {
    if (!active_) return;
    check(MPI_Waitall(4, req_, MPI_STATUSES_IGNORE), "MPI_Waitall");
    active_ = false;
    if (ipc_) wait_ipc(exec);
    if (direct_) return;
    for (int side = 0; side < 2; ++side)  // a side without a neighbour stays untouched
      if (side == 0 ? has_prev() : has_next()) {
        const auto range = Kokkos::make_pair(side * m_, (side + 1) * m_);
        Kokkos::deep_copy(exec, Kokkos::subview(recv_, range), Kokkos::subview(recv_h_, range));
      }
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int prev_ = MPI_PROC_NULL, next_ = MPI_PROC_NULL;
  long long m_ = 0;
  int tag_ = 0;
  bool direct_ = true, ipc_ = false, active_ = false, turned_ = false;
  buffer_type send_, recv_;
  host_buffer_type send_h_, recv_h_;
  MPI_Request req_[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int parity_ = 1, done_in_[2] = {0, 0}, done_out_ = 1;
#if defined(KOKKOS_ENABLE_CUDA)
  std::shared_ptr<CudaIpcBuffers> ipcbuf_;

  /// Maps the neighbours' receive buffers; returns an error message ("" =
  /// ok). Always takes part in the handle exchange, so that a failure on one
  /// rank cannot leave a neighbour waiting.
  std::string setup_ipc() {
    std::string msg;
    cudaIpcMemHandle_t mine, from[2];
    cudaIpcEventHandle_t mine_ev, from_ev[2];
    std::memset(&mine, 0, sizeof(mine));
    std::memset(&mine_ev, 0, sizeof(mine_ev));
    try {
      kband::impl::require(std::is_same<Mem, Kokkos::CudaSpace>::value,
                           "kband::mpi: BufferPath::CudaIPC needs buffers in Kokkos::CudaSpace");
      ipcbuf_ = std::make_shared<CudaIpcBuffers>();
      cuda_check(cudaMalloc(&ipcbuf_->base, sizeof(T) * static_cast<size_t>(4 * m_ + 1)), "cudaMalloc");
      recv_ = buffer_type(static_cast<T*>(ipcbuf_->base) + 2 * m_, 2 * m_);  // parity 1 until the first exchange
      cuda_check(cudaEventCreateWithFlags(&ipcbuf_->sent, cudaEventDisableTiming | cudaEventInterprocess),
                 "cudaEventCreateWithFlags");
      cuda_check(cudaIpcGetMemHandle(&mine, ipcbuf_->base), "cudaIpcGetMemHandle");
      cuda_check(cudaIpcGetEventHandle(&mine_ev, ipcbuf_->sent), "cudaIpcGetEventHandle");
    } catch (const Error& e) {
      msg = e.what();
    }
    // a handle from each neighbour: from[0] <- prev, from[1] <- next
    auto swap = [&](const auto& mine_h, auto (&from_h)[2]) {
      const int nb = static_cast<int>(sizeof(mine_h));
      check(MPI_Sendrecv(&mine_h, nb, MPI_BYTE, next_, tag_ + 0, &from_h[0], nb, MPI_BYTE, prev_, tag_ + 0, comm_,
                         MPI_STATUS_IGNORE),
            "MPI_Sendrecv");
      check(MPI_Sendrecv(&mine_h, nb, MPI_BYTE, prev_, tag_ + 1, &from_h[1], nb, MPI_BYTE, next_, tag_ + 1, comm_,
                         MPI_STATUS_IGNORE),
            "MPI_Sendrecv");
    };
    swap(mine, from);
    swap(mine_ev, from_ev);
    int me = 0;
    check(MPI_Comm_rank(comm_, &me), "MPI_Comm_rank");
    for (int side = 0; side < 2 && msg.empty(); ++side) {
      const int r = side ? next_ : prev_;
      if (r == MPI_PROC_NULL) continue;
      if (r == me) {
        ipcbuf_->peer[side] = ipcbuf_->base;
        ipcbuf_->peer_sent[side] = ipcbuf_->sent;
      } else if (side == 1 && next_ == prev_) {
        ipcbuf_->peer[1] = ipcbuf_->peer[0];  // one neighbour on both sides: mapped once
        ipcbuf_->peer_sent[1] = ipcbuf_->peer_sent[0];
      } else {
        const cudaError_t e = cudaIpcOpenMemHandle(&ipcbuf_->peer[side], from[side], cudaIpcMemLazyEnablePeerAccess);
        if (e != cudaSuccess)
          msg = kband::impl::concat("kband::mpi: cudaIpcOpenMemHandle failed (BufferPath::CudaIPC needs the "
                                    "neighbours on one node): ", cudaGetErrorString(e));
        else
          ipcbuf_->opened[side] = true;
        const cudaError_t ev = msg.empty() ? cudaIpcOpenEventHandle(&ipcbuf_->peer_sent[side], from_ev[side])
                                           : cudaSuccess;
        if (ev != cudaSuccess)
          msg = kband::impl::concat("kband::mpi: cudaIpcOpenEventHandle failed: ", cudaGetErrorString(ev));
        else if (msg.empty())
          ipcbuf_->peer_opened[side] = true;
      }
    }
    return msg;
  }

  /// Once per exchange: the receive buffer of the other parity.
  void turn() {
    if (turned_) return;
    turned_ = true;
    if (!ipc_) return;
    parity_ ^= 1;
    recv_ = buffer_type(static_cast<T*>(ipcbuf_->base) + static_cast<size_t>(parity_) * 2 * m_, 2 * m_);
  }

  /// Posts the receives of the neighbours' word; unless `stored`, copies
  /// send[m, 2m) into next's recv[0, m) and send[0, m) into prev's recv[m, 2m)
  /// of the current parity on exec's stream; records `sent` and sends both
  /// neighbours the word that it is recorded (no fence).
  template <class Exec>
  void post_ipc(const Exec& exec, bool stored) {
    check(MPI_Irecv(&done_in_[0], 1, MPI_INT, prev_, tag_ + 0, comm_, &req_[0]), "MPI_Irecv");
    check(MPI_Irecv(&done_in_[1], 1, MPI_INT, next_, tag_ + 1, comm_, &req_[1]), "MPI_Irecv");
    cudaStream_t st = nullptr;
    if constexpr (std::is_same<Exec, Kokkos::Cuda>::value) st = exec.cuda_stream();
    else exec.fence();  // the data were written on another execution space
    const size_t off = static_cast<size_t>(parity_) * 2 * m_;
    const size_t bytes = sizeof(T) * static_cast<size_t>(m_);
    if (!stored && m_ > 0 && has_next())
      cuda_check(cudaMemcpyAsync(static_cast<T*>(ipcbuf_->peer[1]) + off, send_.data() + m_, bytes,
                                 cudaMemcpyDeviceToDevice, st),
                 "cudaMemcpyAsync");
    if (!stored && m_ > 0 && has_prev())
      cuda_check(cudaMemcpyAsync(static_cast<T*>(ipcbuf_->peer[0]) + off + m_, send_.data(), bytes,
                                 cudaMemcpyDeviceToDevice, st),
                 "cudaMemcpyAsync");
    cuda_check(cudaEventRecord(ipcbuf_->sent, st), "cudaEventRecord");
    check(MPI_Isend(&done_out_, 1, MPI_INT, prev_, tag_ + 1, comm_, &req_[2]), "MPI_Isend");
    check(MPI_Isend(&done_out_, 1, MPI_INT, next_, tag_ + 0, comm_, &req_[3]), "MPI_Isend");
    active_ = true;
  }

  /// After the words: exec's stream (a host execution space: this thread)
  /// waits for the neighbours' events.
  template <class Exec>
  void wait_ipc(const Exec& exec) {
    for (int side = 0; side < 2; ++side) {
      if (!(side == 0 ? has_prev() : has_next())) continue;
      if constexpr (std::is_same<Exec, Kokkos::Cuda>::value)
        cuda_check(cudaStreamWaitEvent(exec.cuda_stream(), ipcbuf_->peer_sent[side], 0), "cudaStreamWaitEvent");
      else
        cuda_check(cudaEventSynchronize(ipcbuf_->peer_sent[side]), "cudaEventSynchronize");
    }
  }
#else
  std::string setup_ipc() { return "kband::mpi: BufferPath::CudaIPC needs a CUDA build of Kokkos"; }
  void turn() { turned_ = true; }
  template <class Exec>
  void post_ipc(const Exec&, bool) {}
  template <class Exec>
  void wait_ipc(const Exec&) {}
#endif
};

/// Pack (Unpack = false) the first / last `depth` rows of every line into
/// to_prev / to_next, or unpack (Unpack = true) the receive buffer buf into
/// rows lo_row.. of lo and hi_row.. of hi. Flat index k = side * m + (g * depth
/// + r) * SZ + l; padding slots skipped.
template <class T, int SZ, class Mem, bool Unpack>
struct HaloCopy {
  GroupedBatch<T, SZ, Mem> u, lo, hi;
  Kokkos::View<T*, Mem> buf, to_prev, to_next;
  int depth, nsys;
  long long m;
  bool do_lo, do_hi;
  int lo_row, hi_row;
  KOKKOS_INLINE_FUNCTION void operator()(const long long k) const {
    const int side = k >= m ? 1 : 0;
    const long long kk = k - side * m;
    const int l = static_cast<int>(kk % SZ);
    const int r = static_cast<int>((kk / SZ) % depth);
    const int g = static_cast<int>(kk / (static_cast<long long>(SZ) * depth));
    if (g * SZ + l >= nsys) return;
    if (!Unpack) {
      T* dst = side == 0 ? to_prev.data() : to_next.data();
      dst[kk] = u.view()(g, side == 0 ? r : u.n() - depth + r, l);
    } else if (side == 0) {
      if (do_lo) lo.view()(g, lo_row + r, l) = buf(k);
    } else if (do_hi) {
      hi.view()(g, hi_row + r, l) = buf(k);
    }
  }
};

}  // namespace impl

/// Halo exchange of depth 1..4 along `dir` for SZ-grouped line batches of
/// `nsys` systems and `n` local rows (the `dir`-lines of a DistField block).
/// Construction is collective on grid.comm() and checks that depth is the same
/// everywhere, 1 <= depth <= 4 <= ... and depth <= n on every rank, and that
/// ranks of one line have the same nsys; every rank throws the same
/// kband::Error otherwise. One exchange may be in flight per object; objects
/// whose exchanges overlap in time along one direction need distinct
/// `channel`s (0..2; BoundaryExchange uses 1, DistDerivative 0 and 2).
template <class T, int SZ = default_sz<>::value, class Mem = Kokkos::DefaultExecutionSpace::memory_space>
class HaloExchange {
 public:
  using batch_type = GroupedBatch<T, SZ, Mem>;

  HaloExchange() = default;
  HaloExchange(const CartGrid& grid, Direction dir, int depth, int nsys, int n, const CommConfig& cfg = {},
               int channel = impl::kHaloChannel)
      : grid_(grid), dir_(dir), depth_(depth), nsys_(nsys), n_(n) {
    kband::impl::ProfilingRegion region("kband::mpi::HaloExchange");
    const char* fn = "kband::mpi::HaloExchange";
    require_same(grid.comm(), fn, "depth", depth);
    require_all(grid.comm(), depth >= 1 && depth <= 4 && n >= depth && nsys >= 0,
                kband::impl::concat(fn, ": depth ", depth, " must be in 1..4 and at most the local line length n = ", n,
                             " (nsys = ", nsys, ")"));
    impl::require_line_uniform(grid, dir, fn, "nsys (lines per rank)", nsys);
    const long long m = static_cast<long long>(batch_type::groups_for(nsys)) * depth * SZ;
    kband::impl::require(channel >= 0 && channel <= 2, kband::impl::concat(fn, ": channel ", channel, " not in 0..2"));
    x_ = impl::NeighbourExchange<T, Mem>(grid, dir, m, channel, cfg);
  }

  int depth() const { return depth_; }
  Direction direction() const { return dir_; }
  /// True when the buffers go to MPI directly (GPU-aware or host memory).
  bool direct() const { return x_.direct(); }
  /// Allocates a halo batch (nsys, depth) for lo or hi.
  batch_type make_halo(const std::string& label) const { return batch_type(label, nsys_, depth_); }

  /// Packs the end rows of `u` (extents (nsys, n)) and posts the messages.
  /// Fences exec once (after packing). Local argument check (throws before
  /// posting anything).
  template <class Exec>
  void start(const Exec& exec, const batch_type& u) {
    kband::impl::ProfilingRegion region("kband::mpi::HaloExchange::start");
    kband::impl::check_batch("kband::mpi::HaloExchange::start", "u", u, nsys_, n_);
    launch<false>(exec, u, u, u);
    x_.post(exec, true);
  }

  /// Waits for the messages and unpacks them into lo and hi (extents
  /// (nsys, depth)) on exec; no fence. A side without a neighbour (end of a
  /// non-periodic direction) is left untouched. With lo_row / hi_row, lo and
  /// hi may be taller: the halo goes to rows lo_row .. lo_row+depth-1 (hi_row ..).
  template <class Exec>
  void finish(const Exec& exec, const batch_type& lo, const batch_type& hi, int lo_row = 0, int hi_row = 0) {
    const char* fn = "kband::mpi::HaloExchange::finish";
    kband::impl::ProfilingRegion region(fn);
    for (int side = 0; side < 2; ++side) {
      const batch_type& b = side ? hi : lo;
      const int row = side ? hi_row : lo_row;
      kband::impl::require(b.nsys() == nsys_ && row >= 0 && row + depth_ <= b.n(),
                           kband::impl::concat(fn, ": argument '", side ? "hi" : "lo", "' (", b.label(),
                                               ") has extents (nsys=", b.nsys(), ", n=", b.n(), "), expected nsys=",
                                               nsys_, " and rows ", row, " .. ", row + depth_ - 1));
    }
    x_.wait(exec);
    launch<true>(exec, lo, lo, hi, lo_row, hi_row);
  }

  /// start() then finish().
  template <class Exec>
  void exchange(const Exec& exec, const batch_type& u, const batch_type& lo, const batch_type& hi) {
    start(exec, u);
    finish(exec, lo, hi);
  }

  /// Packed by the caller, in the same layout: (to prev, to next), batches
  /// (nsys, depth) that take this rank's rows for the coming exchange, to be
  /// written by work enqueued on exec before post() (CudaIPC: the
  /// neighbours' receive buffers themselves, so that a kernel's stores are
  /// the transfer). Once per exchange.
  std::pair<batch_type, batch_type> targets() { return {wrap(x_.target(0)), wrap(x_.target(1))}; }
  /// Sends what was written into targets() (fences exec, except CudaIPC,
  /// which records an event and returns).
  template <class Exec>
  void post(const Exec& exec) {
    kband::impl::ProfilingRegion region("kband::mpi::HaloExchange::post");
    x_.post(exec, true);
  }
  /// Waits for the messages; received() holds them on exec (no fence).
  template <class Exec>
  void wait(const Exec& exec) {
    kband::impl::ProfilingRegion region("kband::mpi::HaloExchange::wait");
    x_.wait(exec);
  }
  /// (from prev, from next) of the last exchange, batches (nsys, depth):
  /// lo and hi without unpacking; a side without a neighbour is not written.
  std::pair<batch_type, batch_type> received() const {
    const long long m = x_.m();
    return {wrap(Kokkos::subview(x_.recv(), Kokkos::make_pair(0LL, m))),
            wrap(Kokkos::subview(x_.recv(), Kokkos::make_pair(m, 2 * m)))};
  }

 private:
  template <bool Unpack, class Exec>
  void launch(const Exec& exec, const batch_type& u, const batch_type& lo, const batch_type& hi, int lo_row = 0,
              int hi_row = 0) {
    typename impl::NeighbourExchange<T, Mem>::buffer_type to_prev, to_next;
    if (!Unpack) {  // (before the early return: every exchange takes its turn)
      to_prev = x_.target(0);
      to_next = x_.target(1);
    }
    if (x_.m() == 0) return;
    impl::HaloCopy<T, SZ, Mem, Unpack> f{u,      lo,      hi,      x_.recv(),     to_prev, to_next, depth_,
                                         nsys_,  x_.m(),  x_.has_prev(), x_.has_next(), lo_row,  hi_row};
    Kokkos::parallel_for(Unpack ? "kband::mpi::halo_unpack" : "kband::mpi::halo_pack",
                         kband::impl::Range<Exec, Kokkos::IndexType<long long>>(exec, 0, 2 * x_.m()), f);
  }

  template <class V>
  batch_type wrap(const V& v) const {
    return batch_type(typename batch_type::view_type(v.data(), batch_type::groups_for(nsys_), depth_), nsys_);
  }

  CartGrid grid_;
  Direction dir_ = Direction::X;
  int depth_ = 0, nsys_ = 0, n_ = 0;
  impl::NeighbourExchange<T, Mem> x_;
};

/// Exchange of two flat buffers of `count` elements with the previous and next
/// rank along `dir` (periodic pair between the last and first ranks when the
/// direction is periodic): DistD2's boundary rows. Construction is collective
/// (count must be the same along each line).
template <class T, class Mem = Kokkos::DefaultExecutionSpace::memory_space>
class BoundaryExchange {
 public:
  using view_type = Kokkos::View<T*, Mem>;

  BoundaryExchange() = default;
  BoundaryExchange(const CartGrid& grid, Direction dir, long long count, const CommConfig& cfg = {}) {
    kband::impl::ProfilingRegion region("kband::mpi::BoundaryExchange");
    impl::require_line_uniform(grid, dir, "kband::mpi::BoundaryExchange", "count", count);
    x_ = impl::NeighbourExchange<T, Mem>(grid, dir, count, impl::kBoundaryChannel, cfg);
  }

  bool direct() const { return x_.direct(); }
  bool has_prev() const { return x_.has_prev(); }
  bool has_next() const { return x_.has_next(); }
  long long count() const { return x_.m(); }

  /// The send buffers (count elements each): write them on exec, then start().
  view_type to_prev() const { return sub(x_.send(), 0); }
  view_type to_next() const { return sub(x_.send(), 1); }
  /// The receive buffers, valid on exec after finish(); untouched without a neighbour.
  view_type from_prev() const { return sub(x_.recv(), 0); }
  view_type from_next() const { return sub(x_.recv(), 1); }

  /// Posts the messages (fences exec once: the send buffers must be written).
  template <class Exec>
  void start(const Exec& exec) {
    kband::impl::ProfilingRegion region("kband::mpi::BoundaryExchange::start");
    x_.post(exec);
  }
  /// Waits; the receive buffers are ready on exec (no fence).
  template <class Exec>
  void finish(const Exec& exec) {
    kband::impl::ProfilingRegion region("kband::mpi::BoundaryExchange::finish");
    x_.wait(exec);
  }

 private:
  static view_type sub(const view_type& v, int side) {
    const long long m = static_cast<long long>(v.extent(0)) / 2;
    return Kokkos::subview(v, Kokkos::make_pair(side * m, (side + 1) * m));
  }
  impl::NeighbourExchange<T, Mem> x_;
};

}  // namespace mpi
}  // namespace kband
