// The host backend's executor of collective schedules (kernels/coll_schedules.h): one thread, the
// stream's worker, runs every step of every channel, channel after channel; flags are atomics on
// shared memory.
#include <atomic>
#include <cstring>

#include "../../../kernels/coll_schedules.h"
#include "host_exec.h"

namespace mpix::gpu::host_exec {
namespace {

// Elements are combined as ReduceIn<T>::Acc (float for the half types) and stored once.
template <typename T>
void reduce_typed(void *const *dsts, int ndst, const void *const *srcs, int nsrc, uint64_t n, uint8_t op) {
  using In = coll::ReduceIn<T>;
  using Acc = typename In::Acc;
  for (uint64_t i = 0; i < n; ++i) {
    Acc acc = In::load(static_cast<const T *>(srcs[0])[i]);
    for (int s = 1; s < nsrc; ++s) acc = coll::reduce_op<Acc>(op, acc, In::load(static_cast<const T *>(srcs[s])[i]));
    const T out = In::store(acc);
    for (int d = 0; d < ndst; ++d) static_cast<T *>(dsts[d])[i] = out;
  }
}

class HostCollExecutor {
 public:
  HostCollExecutor(const coll::Args &a, WatchdogReport *report) : a_(a), report_(report) {}

  bool ok() const { return ok_; }
  uint64_t load(const uint64_t *p) const { return word(p).load(std::memory_order_acquire); }
  uint64_t cursor() const { return load(cursor_word()); }
  void set(uint64_t *p, uint64_t value) { word(p).store(value, std::memory_order_release); }
  void wait(const uint64_t *flag, uint64_t want, int peer) {
    if (!ok_) return;
    uint64_t seen = 0;
    if (wait_at_least(flag, want, a_.watchdog_ns, &seen)) return;
    *report_ = WatchdogReport{a_.comm_id, peer, work::kWaitCollective, want, seen};
    ok_ = false;
  }
  void copy(void *dst, const void *src, uint64_t bytes) {
    if (ok_ && bytes) std::memmove(dst, src, bytes);
  }
  void reduce(void *const *dsts, int ndst, const void *const *srcs, int nsrc, uint64_t n) {
    if (!ok_ || n == 0) return;
    switch (a_.dtype) {
#define MPIX_REDUCE_CASE(code, T) \
  case coll::code: reduce_typed<T>(dsts, ndst, srcs, nsrc, n, a_.op); break;
      MPIX_REDUCE_CASE(kInt8, int8_t)
      MPIX_REDUCE_CASE(kUint8, uint8_t)
      MPIX_REDUCE_CASE(kInt32, int32_t)
      MPIX_REDUCE_CASE(kUint32, uint32_t)
      MPIX_REDUCE_CASE(kInt64, int64_t)
      MPIX_REDUCE_CASE(kUint64, uint64_t)
      MPIX_REDUCE_CASE(kFloat, float)
      MPIX_REDUCE_CASE(kDouble, double)
      MPIX_REDUCE_CASE(kHalf, coll::Float16)
      MPIX_REDUCE_CASE(kBfloat16, coll::Bfloat16)
#undef MPIX_REDUCE_CASE
      default: break;
    }
  }
  void barrier() { std::atomic_thread_fence(std::memory_order_seq_cst); }
  void signal(uint64_t *flag, uint64_t value) {
    if (ok_) word(flag).store(value, std::memory_order_release);
  }
  // The cursor advances even after a timeout: the call is over, and the report says it failed.
  void finish(uint64_t value) { word(cursor_word()).store(value, std::memory_order_release); }

 private:
  static std::atomic_ref<uint64_t> word(const uint64_t *p) { return std::atomic_ref<uint64_t>(*const_cast<uint64_t *>(p)); }
  const uint64_t *cursor_word() const {
    const auto *table = reinterpret_cast<const coll::PeerTable *>(a_.table);
    return reinterpret_cast<const uint64_t *>(table[a_.rank].flags) + coll::FlagLayout::cursor(a_.size);
  }
  const coll::Args &a_;
  WatchdogReport *report_;
  bool ok_ = true;
};

}  // namespace

int run_collective(const coll::Args &args, WatchdogReport *report) {
  HostCollExecutor x(args, report);
  coll::run_schedule(x, args, 0, 1);
  return x.ok() ? kOk : kErrTimeout;
}

}  // namespace mpix::gpu::host_exec
