// A stream wait's watchdog report, device side, shared by the epoch kernel and the collective
// kernels: a timeout of its own first marks the fault word of its window or communicator (before
// the mailbox, which the host reads first), so that the waits queued behind it end at once
// (work::fault_skips); then the process's first report goes into the mailbox.
#pragma once
#include <cstdint>

#include "kernels/device_atomics.h"
#include "kernels/work_items.h"

// True where this report is the process's first (the caller then prints its message). `after_fault`:
// the wait ended at once behind an earlier timeout, whose mark is already there.
__device__ inline bool mpix_report_timeout(uint64_t mailbox_addr, uint64_t fault_addr, bool after_fault, uint32_t id,
                                           int peer, uint32_t reason, uint64_t want, uint64_t seen) {
  if (fault_addr && !after_fault) {  // host memory: a plain store (concurrent markers store the same)
    volatile uint64_t *fault = reinterpret_cast<volatile uint64_t *>(fault_addr);
    *fault = mpix::work::kFaultPending | (*fault & 0xffffffffull);
    mpix_fence_sys();
  }
  auto *box = reinterpret_cast<mpix::work::WatchdogMailbox *>(mailbox_addr);
  if (atomicCAS(&box->fired, 0u, 1u) != 0u) return false;
  box->window_id = id;
  box->peer = peer;
  box->reason = reason;
  box->expected = want;
  box->observed = seen;
  mpix_fence_sys();
  return true;
}
