// enqueue: two-sided messages on the stream, MPICH's spelling. The rank's stream wrapped in an
// MPIX_Stream, a communicator bound to it (MPIX_Stream_comm_create); per exchange
// MPIX_Irecv_enqueue and MPIX_Isend_enqueue per neighbour (each send is a list on the stream at
// once), then MPIX_Waitall_enqueue (the stream waits for the receives there, and the requests are
// freed), between the pack and the unpack. A whole block is enqueued and synchronised once;
// --graph captures a block and replays it.
// Built only where mpix-st defines MPICH's stream calls (modes.cpp says why otherwise); same
// limits as queue (two_sided.h).
#include <mpix/mpix_st.h>

#ifdef MPIX_ST_DEFINES_MPIX_STREAM
#include <vector>

#include "exchange.h"
#include "two_sided.h"
#include "xdev.h"

namespace faces {
namespace {

class EnqueueExchange final : public Exchange {
 public:
  explicit EnqueueExchange(const Context &c) : c_(c), buffers_(c.plan) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "type", xdev::stream_info_type());
    MPIX_Info_set_hex(info, "value", &c.stream, sizeof c.stream);
    MPIX_Stream_create(info, &stream_);
    MPI_Info_free(&info);
    // Its first two-sided call (the first exchange's, on every rank) makes the mailboxes.
    MPIX_Stream_comm_create(c.comm, stream_, &comm_);
    requests_.resize(2 * c.plan.links.size());
  }

  ~EnqueueExchange() override {
    MPI_Comm_free(&comm_);  // the library keeps the mailboxes until the stream work that used them ran
    MPIX_Stream_free(&stream_);
  }

  std::string detail() const override {
    return "MPIX_Irecv_enqueue / MPIX_Isend_enqueue per neighbour, MPIX_Waitall_enqueue, on a stream "
           "communicator" + block_text(c_.graph) +
           packs_detail(c_);
  }

  void run(int count) override {
    block_.run(c_.stream, count, c_.graph, [this](int n) {
      for (int it = 0; it < n; ++it) enqueue();
    });
  }

 private:
  void enqueue() {
    enqueue_before_transfer(c_, buffers_.send);
    int r = 0;
    for_each_receive(c_.plan, [&](const Link &l) {
      MPIX_Irecv_enqueue(buffers_.recv + l.offset, static_cast<int>(l.count), MPI_DOUBLE, l.peer, opposite(l.direction),
                         comm_, &requests_[r++]);
    });
    for (const Link &l : c_.plan.links)
      MPIX_Isend_enqueue(buffers_.send + l.offset, static_cast<int>(l.count), MPI_DOUBLE, l.peer, l.direction, comm_,
                         &requests_[r++]);
    MPIX_Waitall_enqueue(r, requests_.data(), MPI_STATUSES_IGNORE);
    enqueue_after_transfer(c_, buffers_.recv);
  }

  Context c_;
  Buffers buffers_;
  MPIX_Stream stream_ = MPIX_STREAM_NULL;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<MPI_Request> requests_;
  CapturedBlock block_;
};

}  // namespace

std::unique_ptr<Exchange> make_enqueue_exchange(const Context &c) { return std::make_unique<EnqueueExchange>(c); }

}  // namespace faces
#endif  // MPIX_ST_DEFINES_MPIX_STREAM
