// st: stream-triggered active-target RMA. Every exchange is only enqueued; the stream runs post,
// pack (none with --datatypes), puts, complete, wait and unpack in order, and the host
// synchronises once per block.
//
// Two windows (default, --st-windows 2): exchange i uses window i % 2 and posts window (i+1) % 2
// for the next exchange just before its own complete. That post follows the unpack of exchange
// i-1, the last reader of that window's buffer, so it is safe; and peers find it a whole exchange
// before they put, so no post hop is left on the critical path (the one-window epoch waits for
// the peers' posts every exchange). Captured (--graph), the next window's post, this window's
// complete and its wait run as one kernel (src/backend/list_merge.h). The price is a second receive
// buffer. One window (--st-windows 1): each exchange posts its own window; captured, after the
// pack, so that post, complete and wait merge.
#include <mpix/mpix_st.h>

#include <memory>
#include <string>

#include "exchange.h"
#include "neighbour_window.h"
#include "xdev.h"

namespace faces {
namespace {

class StExchange final : public Exchange {
 public:
  explicit StExchange(const Context &c) : c_(c), buffers_(c.plan, !c.datatypes) {
    windows_[0] = std::make_unique<NeighbourWindow>(c, buffers_.recv);
    if (c.st_windows == 2) {
      spare_ = std::make_unique<Buffers>(c.plan, false);
      windows_[1] = std::make_unique<NeighbourWindow>(c, spare_->recv);
    }
  }

  std::string detail() const override {
    const std::string windows = windows_[1] ? "; two windows in turn, each exchange posting the next one's"
                                            : "; one window";
    if (c_.graph)
      return "MPIX_Win_*_stream captured into one graph per block, replayed" + windows + datatypes_detail(c_);
    if (c_.sync_every > 0)
      return "MPIX_Win_*_stream, a synchronisation every " + std::to_string(c_.sync_every) + " exchanges" + windows +
             datatypes_detail(c_);
    return "MPIX_Win_*_stream, one synchronisation per block" + windows + datatypes_detail(c_);
  }

  void run(int count) override { block_.run(c_.stream, count, c_.graph, [this](int n) { enqueue(n); }); }

 private:
  void enqueue(int count) {
    const bool two = windows_[1] != nullptr;
    for (int it = 0; it < count; ++it) {
      const int w = two ? it % 2 : 0;
      const NeighbourWindow &now = *windows_[w];
      if (two) {
        // The block's first exposure; every later one was posted by the exchange before.
        if (it == 0) post(now);
        enqueue_before_transfer(c_, buffers_.send);
        if (it + 1 < count) post(*windows_[1 - w]);
      } else {
        // The previous unpack precedes this post on the stream, so neighbours may already write
        // the receive buffer while this rank sums its interior and packs. With --datatypes the
        // puts read the field in the complete, after the interior sum and before this unpack.
        // Captured (--graph), the post comes after them instead: with nothing captured between
        // them, the library runs post, complete and wait as one kernel, which saves more than the
        // early post gains (README, "Graph capture").
        if (!c_.graph) post(now);
        enqueue_before_transfer(c_, buffers_.send);
        if (c_.graph) post(now);
      }
      MPI_Win_start(now.group(), MPIX_MODE_STREAM, now.win());
      now.put_all(buffers_.send);
      MPIX_Win_complete_stream(now.win(), c_.stream);
      MPIX_Win_wait_stream(now.win(), c_.stream);
      enqueue_after_transfer(c_, w ? spare_->recv : buffers_.recv);
      // Application-level throttling: bounds the triggered operations in flight.
      if (c_.sync_every > 0 && (it + 1) % c_.sync_every == 0) xdev::stream_sync(c_.stream);
    }
  }

  void post(const NeighbourWindow &w) const { MPIX_Win_post_stream(w.group(), w.win(), c_.stream); }

  Context c_;
  Buffers buffers_;
  std::unique_ptr<Buffers> spare_;  // the second window's receive buffer
  std::unique_ptr<NeighbourWindow> windows_[2];
  CapturedBlock block_;  // last: its graph goes before the windows
};

}  // namespace

std::unique_ptr<Exchange> make_st_exchange(const Context &c) { return std::make_unique<StExchange>(c); }

}  // namespace faces
