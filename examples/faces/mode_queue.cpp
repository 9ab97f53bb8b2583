// queue: two-sided messages on the stream, HPE Cray MPICH's spelling. One MPIX_Queue on the rank's
// stream; per exchange MPIX_Enqueue_recv and MPIX_Enqueue_send per neighbour, then
// MPIX_Enqueue_start (the stream sends there) and MPIX_Enqueue_wait (the stream waits for the
// receives there), between the pack and the unpack. A whole block is enqueued and synchronised
// once; --graph captures a block and replays it. Node-local peers, messages up to a mailbox
// (two_sided.h).
#include <mpix/mpix_st.h>

#include <vector>

#include "exchange.h"
#include "two_sided.h"
#include "xdev.h"

namespace faces {
namespace {

class QueueExchange final : public Exchange {
 public:
  explicit QueueExchange(const Context &c) : c_(c), buffers_(c.plan) {
    // A communicator of its own: its mailboxes and message numbers belong to this mode. Its first
    // two-sided call (the first exchange's, on every rank) makes the mailboxes, collectively.
    MPI_Comm_dup(c.comm, &comm_);
    MPIX_Create_queue(c.stream, &queue_);
    requests_.resize(2 * c.plan.links.size());
  }

  ~QueueExchange() override {
    MPIX_Free_queue(queue_);  // every operation was started and every receive waited for
    MPI_Comm_free(&comm_);
  }

  std::string detail() const override {
    return "MPIX_Enqueue_recv / MPIX_Enqueue_send per neighbour, MPIX_Enqueue_start, MPIX_Enqueue_wait on one "
           "MPIX_Queue" + block_text(c_.graph) +
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
    size_t r = 0;
    for_each_receive(c_.plan, [&](const Link &l) {
      MPIX_Enqueue_recv(buffers_.recv + l.offset, static_cast<int>(l.count), MPI_DOUBLE, l.peer, opposite(l.direction),
                        comm_, queue_, &requests_[r++]);
    });
    for (const Link &l : c_.plan.links)
      MPIX_Enqueue_send(buffers_.send + l.offset, static_cast<int>(l.count), MPI_DOUBLE, l.peer, l.direction, comm_,
                        queue_, &requests_[r++]);
    MPIX_Enqueue_start(queue_);
    MPIX_Enqueue_wait(queue_);
    // The stream completes them; the host never waits for them (MPIX_Enqueue_send(3): a request
    // stays valid until completed or freed, and a freed one goes on until its list ran).
    for (size_t i = 0; i < r; ++i) MPI_Request_free(&requests_[i]);
    enqueue_after_transfer(c_, buffers_.recv);
  }

  Context c_;
  Buffers buffers_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPIX_Queue queue_ = MPIX_QUEUE_NULL;
  std::vector<MPI_Request> requests_;
  CapturedBlock block_;
};

}  // namespace

std::unique_ptr<Exchange> make_queue_exchange(const Context &c) { return std::make_unique<QueueExchange>(c); }

}  // namespace faces
