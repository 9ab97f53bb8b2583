// st: stream-triggered active-target RMA. Every exchange is only enqueued; the stream runs post,
// pack (none with --datatypes), puts, complete, wait and unpack in order (captured: pack first,
// then post, complete and wait as one kernel), and the host synchronises once per block.
#include <mpix/mpix_st.h>

#include <string>

#include "exchange.h"
#include "neighbour_window.h"
#include "xdev.h"

namespace faces {
namespace {

class StExchange final : public Exchange {
 public:
  explicit StExchange(const Context &c) : c_(c), buffers_(c.plan, !c.datatypes), window_(c, buffers_.recv) {}

  std::string detail() const override {
    if (c_.graph) return "MPIX_Win_*_stream captured into one graph per block, replayed" + datatypes_detail(c_);
    if (c_.sync_every > 0)
      return "MPIX_Win_*_stream, a synchronisation every " + std::to_string(c_.sync_every) + " exchanges" +
             datatypes_detail(c_);
    return "MPIX_Win_*_stream, one synchronisation per block" + datatypes_detail(c_);
  }

  void run(int count) override { block_.run(c_.stream, count, c_.graph, [this](int n) { enqueue(n); }); }

 private:
  void enqueue(int count) {
    for (int it = 0; it < count; ++it) {
      // The previous unpack precedes this post on the stream, so neighbours may already write
      // the receive buffer while this rank sums its interior and packs. With --datatypes the
      // puts read the field in the complete, after the interior sum and before this unpack.
      // Captured (--graph), the post comes after them instead: with nothing captured between
      // them, the library runs post, complete and wait as one kernel (src/gpu/list_merge.h),
      // which saves more than the early post gains (README, "Graph capture").
      if (!c_.graph) MPIX_Win_post_stream(window_.group(), window_.win(), c_.stream);
      enqueue_before_transfer(c_, buffers_.send);
      if (c_.graph) MPIX_Win_post_stream(window_.group(), window_.win(), c_.stream);
      MPI_Win_start(window_.group(), MPIX_MODE_STREAM, window_.win());
      window_.put_all(buffers_.send);
      MPIX_Win_complete_stream(window_.win(), c_.stream);
      MPIX_Win_wait_stream(window_.win(), c_.stream);
      enqueue_after_transfer(c_, buffers_.recv);
      // Application-level throttling: bounds the triggered operations in flight.
      if (c_.sync_every > 0 && (it + 1) % c_.sync_every == 0) xdev::stream_sync(c_.stream);
    }
  }

  Context c_;
  Buffers buffers_;
  NeighbourWindow window_;
  CapturedBlock block_;  // last: its graph goes before the window
};

}  // namespace

std::unique_ptr<Exchange> make_st_exchange(const Context &c) { return std::make_unique<StExchange>(c); }

}  // namespace faces
