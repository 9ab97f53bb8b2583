#include "exchange.h"

#include <mpix/mpix_st.h>

#include "kernels.h"
#include "xdev.h"

namespace faces {

Buffers::Buffers(const Plan &plan, bool with_send) {
  const size_t bytes = static_cast<size_t>(plan.buffer_doubles) * sizeof(double);
  if (with_send) {
    send = static_cast<double *>(xdev::alloc(bytes));
    xdev::fill(send, 0, bytes);
  }
  recv = static_cast<double *>(xdev::alloc(bytes));
  xdev::fill(recv, 0, bytes);
}

Buffers::~Buffers() {
  if (send) xdev::free(send);
  xdev::free(recv);
}

namespace {
PrimingOps g_priming;
}  // namespace

CapturedBlock::~CapturedBlock() {
  if (graph_) xdev::graph_destroy(graph_);
}

void CapturedBlock::run(void *stream, int count, bool capture, const std::function<void(int)> &enqueue) {
  if (!capture) {
    enqueue(count);
    xdev::stream_sync(stream);
    return;
  }
  if (count != count_) {
    // A new graph: this block runs eagerly, then is captured (recorded, not run) for the next
    // blocks. What the library sets up at first use (derived-datatype lists and their device
    // copies, a communicator's collective state) is then made outside the capture, which forbids
    // allocations and copies. The eager run's stream operations are kept apart (priming_ops).
    if (graph_) xdev::graph_destroy(graph_);
    const unsigned long long library = MPIX_St_stream_ops_enqueued(), faces = kernels::launches();
    enqueue(count);
    xdev::stream_sync(stream);
    g_priming.library += MPIX_St_stream_ops_enqueued() - library;
    g_priming.faces += kernels::launches() - faces;
    xdev::stream_begin_capture(stream);
    enqueue(count);
    graph_ = xdev::stream_end_capture(stream);
    count_ = count;
    return;
  }
  xdev::graph_launch(graph_, stream);
  xdev::stream_sync(stream);
}

PrimingOps priming_ops() { return g_priming; }

std::string datatypes_detail(const Context &c) {
  return c.datatypes ? "; --datatypes: puts from the field through derived types (no pack), received copies "
                       "contiguous, summed by the unpack-add kernel"
                     : "";
}

std::string packs_detail(const Context &c) {
  return c.datatypes ? "; packs (--datatypes changes rma and st only)" : "";
}

void enqueue_before_transfer(const Context &c, double *send) {
  if (c.interior) kernels::interior_sum(c.plan.shape, c.field, c.stream);
  if (send) kernels::pack(c.plan.shape, c.plan.regions, c.field, send, c.stream);
}

void enqueue_after_transfer(const Context &c, const double *recv) {
  kernels::unpack_add(c.plan.shape, c.plan.regions, c.field, recv, c.stream);
}

}  // namespace faces
