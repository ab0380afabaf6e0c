// kband::mpi Cartesian process grids and block decompositions of a 3D domain.
//
//   kband::mpi::CartGrid grid(comm, {0, 0, 0});            // 3D, MPI_Dims_create
//   kband::mpi::CartGrid grid(comm, {0, 1, 1}, {true, false, true});  // 1D along x
//   auto dec = kband::mpi::Decomposition::balanced(grid, {nx, ny, nz});
//
// A grid is always a 3D Cartesian communicator (dims of 1 in the directions
// that are not split), so that every direction has a line communicator and
// previous / next neighbours (MPI_PROC_NULL at the ends of a non-periodic
// direction, the rank itself in a periodic direction of one rank).
#pragma once

#include "kband_MPI_Core.hpp"
#include "kband_Layouts.hpp"

#include <array>
#include <memory>

namespace kband {
namespace mpi {

class CartGrid {
 public:
  CartGrid() = default;

  /// Builds the Cartesian grid on `comm` (collective; `comm` is not kept, the
  /// grid owns a new communicator). dims[d] = ranks along direction d, 0 =
  /// chosen by MPI_Dims_create; periodic[d] per direction. Every rank must
  /// pass the same dims and periodic; the product of the fixed dims must
  /// divide the number of ranks. Otherwise every rank throws the same
  /// kband::Error. reorder = false: rank order of `comm` is kept.
  CartGrid(MPI_Comm comm, std::array<int, 3> dims, std::array<bool, 3> periodic = {true, true, true})
      : s_(std::make_shared<State>()) {
    kband::impl::ProfilingRegion region("kband::mpi::CartGrid");
    const char* fn = "kband::mpi::CartGrid";
    int size = 1;
    check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    for (int d = 0; d < 3; ++d) {
      require_same(comm, fn, kband::impl::concat("dims[", d, "]").c_str(), dims[d]);
      require_same(comm, fn, kband::impl::concat("periodic[", d, "]").c_str(), periodic[d] ? 1 : 0);
    }
    long long fixed = 1;
    for (int d = 0; d < 3; ++d) fixed *= dims[d] > 0 ? dims[d] : 1;
    const bool ok = dims[0] >= 0 && dims[1] >= 0 && dims[2] >= 0 && size % fixed == 0 &&
                    (dims[0] && dims[1] && dims[2] ? fixed == size : true);
    require_all(comm, ok,
                kband::impl::concat(fn, ": dims (", dims[0], ", ", dims[1], ", ", dims[2], ") do not divide ", size,
                             " ranks (0 = free; the fixed dims must divide the rank count, all fixed must "
                             "multiply to it)"));
    check(MPI_Dims_create(size, 3, dims.data()), "MPI_Dims_create");
    int per[3] = {periodic[0], periodic[1], periodic[2]};
    check(MPI_Cart_create(comm, 3, dims.data(), per, 0, &s_->cart), "MPI_Cart_create");
    check(MPI_Comm_rank(s_->cart, &s_->rank), "MPI_Comm_rank");
    s_->size = size;
    s_->dims = dims;
    s_->periodic = periodic;
    check(MPI_Cart_coords(s_->cart, s_->rank, 3, s_->coords.data()), "MPI_Cart_coords");
    for (int d = 0; d < 3; ++d) {
      check(MPI_Cart_shift(s_->cart, d, 1, &s_->prev[d], &s_->next[d]), "MPI_Cart_shift");
      int keep[3] = {d == 0, d == 1, d == 2};
      check(MPI_Cart_sub(s_->cart, keep, &s_->line[d]), "MPI_Cart_sub");
      int rest[3] = {d != 0, d != 1, d != 2};
      check(MPI_Cart_sub(s_->cart, rest, &s_->slab[d]), "MPI_Cart_sub");
    }
  }

  /// A 1D grid: every rank along direction `dir`.
  static CartGrid line(MPI_Comm comm, Direction dir, bool periodic = true) {
    std::array<int, 3> dims = {1, 1, 1};
    std::array<bool, 3> per = {true, true, true};
    dims[static_cast<int>(dir)] = 0;
    per[static_cast<int>(dir)] = periodic;
    return CartGrid(comm, dims, per);
  }

  bool valid() const { return s_ != nullptr; }
  /// The grid's 3D Cartesian communicator.
  MPI_Comm comm() const { return s_->cart; }
  /// The ranks sharing this rank's coordinates except along `d`, ordered by
  /// their coordinate along `d` (rank in it = coord(d)).
  MPI_Comm line_comm(Direction d) const { return s_->line[idx(d)]; }
  /// The ranks with this rank's coordinate along `d`.
  MPI_Comm slab_comm(Direction d) const { return s_->slab[idx(d)]; }
  int size() const { return s_->size; }
  int rank() const { return s_->rank; }
  int dims(Direction d) const { return s_->dims[idx(d)]; }
  int coord(Direction d) const { return s_->coords[idx(d)]; }
  bool periodic(Direction d) const { return s_->periodic[idx(d)]; }
  /// Neighbour ranks (in comm()) along `d`: MPI_PROC_NULL past a non-periodic end.
  int prev(Direction d) const { return s_->prev[idx(d)]; }
  int next(Direction d) const { return s_->next[idx(d)]; }
  /// Number of directions split over more than one rank.
  int ndims() const { return (s_->dims[0] > 1) + (s_->dims[1] > 1) + (s_->dims[2] > 1); }

 private:
  static int idx(Direction d) { return static_cast<int>(d); }
  struct State {
    MPI_Comm cart = MPI_COMM_NULL;
    std::array<MPI_Comm, 3> line = {MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};
    std::array<MPI_Comm, 3> slab = {MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};
    int size = 1, rank = 0;
    std::array<int, 3> dims = {1, 1, 1}, coords = {0, 0, 0}, prev = {0, 0, 0}, next = {0, 0, 0};
    std::array<bool, 3> periodic = {true, true, true};
    State() = default;
    State(const State&) = delete;
    State& operator=(const State&) = delete;
    ~State() {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (finalized) return;
      for (MPI_Comm* c : {&line[0], &line[1], &line[2], &slab[0], &slab[1], &slab[2], &cart})
        if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
    }
  };
  std::shared_ptr<State> s_;
};

/// Block decomposition of a global nx x ny x nz domain over a CartGrid: along
/// direction d the ranks of coordinate c own counts[d][c] consecutive planes
/// starting at offset(d, c). Unequal counts are allowed; every count >= 1.
struct Decomposition {
  std::array<int, 3> global = {0, 0, 0};
  std::array<std::vector<int>, 3> counts;

  int offset(Direction d, int c) const {
    int o = 0;
    for (int i = 0; i < c; ++i) o += counts[static_cast<int>(d)][i];
    return o;
  }
  int count(Direction d, int c) const { return counts[static_cast<int>(d)][c]; }

  /// Checks the decomposition against `grid` (collective on grid.comm(): every
  /// rank throws the same kband::Error when the counts do not match the grid's
  /// dims, are < 1, do not sum to the global extents or differ across ranks).
  void validate(const CartGrid& grid, const char* fn = "kband::mpi::Decomposition") const {
    kband::impl::ProfilingRegion region("kband::mpi::Decomposition::validate");
    std::string msg;
    for (int d = 0; d < 3 && msg.empty(); ++d) {
      const auto& c = counts[d];
      long long sum = 0;
      int lo = INT_MAX;
      for (int v : c) sum += v, lo = v < lo ? v : lo;
      const int p = grid.dims(static_cast<Direction>(d));
      if (static_cast<int>(c.size()) != p)
        msg = kband::impl::concat(fn, ": direction ", d, " has ", c.size(), " block sizes for ", p, " ranks");
      else if (lo < 1 || sum != global[d])
        msg = kband::impl::concat(fn, ": direction ", d, ": the ", p, " block sizes (smallest ", lo, ") sum to ", sum,
                           ", not to the global extent ", global[d], " (each block needs >= 1 plane)");
    }
    require_all(grid.comm(), msg.empty(), msg);
    std::vector<double> all(global.begin(), global.end());
    for (int d = 0; d < 3; ++d) all.insert(all.end(), counts[d].begin(), counts[d].end());
    require_same_bits(grid.comm(), fn, "the global extents and block sizes", all);
  }

  /// Near-equal blocks: the first global % dims ranks of a direction get one
  /// plane more. Collective; throws when a direction has fewer planes than ranks.
  static Decomposition balanced(const CartGrid& grid, std::array<int, 3> global) {
    kband::impl::ProfilingRegion region("kband::mpi::Decomposition::balanced");
    Decomposition dec;
    dec.global = global;
    for (int d = 0; d < 3; ++d) {
      const int p = grid.dims(static_cast<Direction>(d));
      for (int c = 0; c < p; ++c) dec.counts[d].push_back(global[d] / p + (c < global[d] % p ? 1 : 0));
    }
    dec.validate(grid, "kband::mpi::Decomposition::balanced");
    return dec;
  }

  /// Every rank states the extents of its own block (`local`) and the global
  /// extents; the counts are gathered along each direction. Collective; every
  /// rank throws the same kband::Error when ranks of one grid plane disagree
  /// or the blocks do not sum to `global` (the grid does not divide as declared).
  static Decomposition from_local(const CartGrid& grid, std::array<int, 3> global, std::array<int, 3> local) {
    kband::impl::ProfilingRegion region("kband::mpi::Decomposition::from_local");
    const char* fn = "kband::mpi::Decomposition::from_local";
    Decomposition dec;
    dec.global = global;
    bool consistent = true;
    for (int d = 0; d < 3; ++d) {
      const Direction dir = static_cast<Direction>(d);
      dec.counts[d].resize(grid.dims(dir));
      check(MPI_Allgather(&local[d], 1, MPI_INT, dec.counts[d].data(), 1, MPI_INT, grid.line_comm(dir)),
            "MPI_Allgather");
      int v[2] = {local[d], -local[d]}, r[2];
      check(MPI_Allreduce(v, r, 2, MPI_INT, MPI_MIN, grid.slab_comm(dir)), "MPI_Allreduce");
      consistent = consistent && r[0] == -r[1];
    }
    require_all(grid.comm(), consistent,
                kband::impl::concat(fn, ": ranks of one grid plane state different local extents (this rank: ", local[0],
                             " x ", local[1], " x ", local[2], ")"));
    dec.validate(grid, fn);
    return dec;
  }
};

}  // namespace mpi
}  // namespace kband
