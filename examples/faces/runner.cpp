#include "runner.h"

#include <mpix/mpix_st.h>

#include "exchange.h"
#include "kernels.h"
#include "modes.h"
#include "reference.h"
#include "xdev.h"

namespace faces {
namespace {

Stats over_ranks(double mine, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  Stats s;
  MPI_Allreduce(&mine, &s.avg, 1, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Allreduce(&mine, &s.min, 1, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(&mine, &s.max, 1, MPI_DOUBLE, MPI_MAX, comm);
  s.avg /= size;
  return s;
}

// Stream operations enqueued so far: by the library, and by Faces' kernels.
struct OpCount {
  unsigned long long library = 0, faces = 0;
  // Operations of eager runs before captures are left out: a captured block counts once.
  static OpCount now() {
    const PrimingOps p = priming_ops();
    return {MPIX_St_stream_ops_enqueued() - p.library, kernels::launches() - p.faces};
  }
};

class BlockRunner {
 public:
  BlockRunner(const Options &o, const Grid &grid, const Context &c, int check_threads)
      : o_(o), grid_(grid), c_(c), scale_(initial_scale(o.exchanges())), check_threads_(check_threads) {}

  // Re-initialises the field, runs one block of exchanges and checks it; returns its seconds.
  double run(Exchange &ex) {
    kernels::init_field(c_.plan.shape, c_.plan.placement, scale_, c_.field, c_.stream);
    xdev::stream_sync(c_.stream);
    MPI_Barrier(c_.comm);
    const OpCount before = OpCount::now();
    const double start = MPI_Wtime();
    ex.run(o_.exchanges());
    const double seconds = MPI_Wtime() - start;
    const OpCount after = OpCount::now();
    library_ops_ = double(after.library - before.library) / o_.exchanges();
    faces_ops_ = double(after.faces - before.faces) / o_.exchanges();
    if (check_field(c_.plan, grid_, o_.interior(), o_.exchanges(), scale_, c_.field, check_threads_) != 0)
      ok_ = false;
    return seconds;
  }
  bool ok() const { return ok_; }
  // Stream operations per exchange of the last block.
  double library_ops() const { return library_ops_; }
  double faces_ops() const { return faces_ops_; }

 private:
  const Options &o_;
  const Grid &grid_;
  const Context &c_;
  double scale_;
  int check_threads_;
  bool ok_ = true;
  double library_ops_ = 0, faces_ops_ = 0;
};

}  // namespace

ModeResult run_mode(const std::string &mode, const Options &o, const Grid &grid, const Plan &plan, void *stream,
                    MPI_Comm comm, int check_threads) {
  ModeResult r;
  r.mode = mode;
  MPI_Comm_size(comm, &r.ranks);
  const size_t field_bytes = static_cast<size_t>(plan.shape.points()) * sizeof(double);
  double *field = static_cast<double *>(xdev::alloc(field_bytes));
  const Context c{plan, field, stream, comm, o.interior(), o.throttle_sync, o.graph, o.datatypes, o.st_windows};
  BlockRunner blocks(o, grid, c, check_threads);
  double seconds = 0;
  double mine_ops[2] = {0, 0};
  for (int iface = 0; iface < o.niface; ++iface) {
    std::unique_ptr<Exchange> ex = make_exchange(mode, c);
    r.detail = ex->detail();
    for (int iel = 0; iel < o.niel; ++iel) {
      if (iel == 0) blocks.run(*ex);  // warm-up: first use of fresh buffers and windows
      // The first block enqueues (or captures) every exchange: count its stream operations.
      if (iface == 0 && iel == 0) {
        mine_ops[0] = blocks.library_ops();
        mine_ops[1] = blocks.faces_ops();
      }
      seconds += blocks.run(*ex);
      ++r.timed_blocks;
    }
  }
  xdev::free(field);

  r.exchanges_per_block = o.exchanges();
  const int mine_ok = blocks.ok() ? 1 : 0;
  MPI_Allreduce(&mine_ok, &r.passed, 1, MPI_INT, MPI_SUM, comm);
  double ops[2];
  MPI_Allreduce(mine_ops, ops, 2, MPI_DOUBLE, MPI_MAX, comm);
  r.library_ops = ops[0];
  r.faces_ops = ops[1];
  r.total_s = over_ranks(seconds, comm);
  r.per_exchange_us = over_ranks(1e6 * seconds / (double(r.timed_blocks) * r.exchanges_per_block), comm);
  return r;
}

ModeResult skipped_mode(const std::string &mode, const std::string &why, MPI_Comm comm) {
  ModeResult r;
  r.mode = mode;
  r.skipped = why;
  MPI_Comm_size(comm, &r.ranks);
  return r;
}

}  // namespace faces
