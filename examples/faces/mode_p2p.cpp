// p2p: MPI_Irecv / MPI_Isend per neighbour. An MPI that cannot read device memory gets the
// buffers staged through page-locked host memory; a GPU-aware one (or the host backend) reads
// the device buffers directly.
#include <vector>

#include "exchange.h"
#include "xdev.h"

namespace faces {
namespace {

class P2pExchange final : public Exchange {
 public:
  explicit P2pExchange(const Context &c) : c_(c), dev_(c.plan), staged_(!xdev::mpi_reads_device_memory()) {
    MPI_Comm_dup(c.comm, &comm_);
    bytes_ = static_cast<size_t>(c.plan.buffer_doubles) * sizeof(double);
    if (staged_) {
      host_send_ = static_cast<double *>(xdev::alloc_pinned(bytes_));
      host_recv_ = static_cast<double *>(xdev::alloc_pinned(bytes_));
    }
    requests_.resize(2 * c.plan.links.size());
  }

  ~P2pExchange() override {
    if (staged_) {
      xdev::free_pinned(host_send_);
      xdev::free_pinned(host_recv_);
    }
    MPI_Comm_free(&comm_);
  }

  std::string detail() const override {
    const std::string how = staged_ ? "staged through host memory (MPI not GPU-aware)" : "direct from device buffers";
    return (c_.graph ? how + "; eager (host-driven: no graph)" : how) + packs_detail(c_);
  }

  void run(int count) override {
    double *send = staged_ ? host_send_ : dev_.send;
    double *recv = staged_ ? host_recv_ : dev_.recv;
    for (int it = 0; it < count; ++it) {
      enqueue_before_transfer(c_, dev_.send);
      xdev::stream_sync(c_.stream);  // the packed copies are ready and the last unpack is done
      if (staged_) xdev::copy_to_host(host_send_, dev_.send, bytes_);
      // Tags name the sender's direction, so a rank that is the neighbour in several directions
      // (small periodic grids, this rank included) still matches every message to its slot.
      size_t r = 0;
      for (const Link &l : c_.plan.links)
        MPI_Irecv(recv + l.offset, static_cast<int>(l.count), MPI_DOUBLE, l.peer, opposite(l.direction), comm_,
                  &requests_[r++]);
      for (const Link &l : c_.plan.links)
        MPI_Isend(send + l.offset, static_cast<int>(l.count), MPI_DOUBLE, l.peer, l.direction, comm_,
                  &requests_[r++]);
      MPI_Waitall(static_cast<int>(r), requests_.data(), MPI_STATUSES_IGNORE);
      if (staged_) xdev::copy_to_device(dev_.recv, host_recv_, bytes_);
      enqueue_after_transfer(c_, dev_.recv);
    }
    xdev::stream_sync(c_.stream);
  }

 private:
  Context c_;
  Buffers dev_;
  bool staged_;
  size_t bytes_ = 0;
  double *host_send_ = nullptr, *host_recv_ = nullptr;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<MPI_Request> requests_;
};

}  // namespace

std::unique_ptr<Exchange> make_p2p_exchange(const Context &c) { return std::make_unique<P2pExchange>(c); }

}  // namespace faces
