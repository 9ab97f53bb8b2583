// rma: host-driven active-target RMA on the library's window: MPI_Win_post / MPI_Win_start /
// MPI_Put / MPI_Win_complete / MPI_Win_wait. The host synchronises the stream once per exchange,
// where it must: before the puts read the packed copies, or with --datatypes the field itself
// (which also ends the previous unpack, so the post may let neighbours overwrite the receive
// buffer).
#include "exchange.h"
#include "neighbour_window.h"
#include "xdev.h"

namespace faces {
namespace {

class RmaExchange final : public Exchange {
 public:
  explicit RmaExchange(const Context &c)
      : c_(c), buffers_(c.plan, !c.datatypes), window_(c, buffers_.recv) {}

  std::string detail() const override {
    return std::string("host-driven MPI_Win_post/start/complete/wait") + datatypes_detail(c_) +
           (c_.graph ? "; eager (host-driven: no graph)" : "");
  }

  void run(int count) override {
    for (int it = 0; it < count; ++it) {
      enqueue_before_transfer(c_, buffers_.send);
      xdev::stream_sync(c_.stream);
      MPI_Win_post(window_.group(), 0, window_.win());
      MPI_Win_start(window_.group(), 0, window_.win());
      window_.put_all(buffers_.send);
      MPI_Win_complete(window_.win());
      MPI_Win_wait(window_.win());
      enqueue_after_transfer(c_, buffers_.recv);
    }
    xdev::stream_sync(c_.stream);
  }

 private:
  Context c_;
  Buffers buffers_;
  NeighbourWindow window_;
};

}  // namespace

std::unique_ptr<Exchange> make_rma_exchange(const Context &c) { return std::make_unique<RmaExchange>(c); }

}  // namespace faces
