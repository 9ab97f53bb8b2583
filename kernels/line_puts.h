// The format of line puts (work_items.h), shared by the host executor and the epoch kernel: line 0
// of an origin's area is the header (the window offset in the low kLineOffsetBits bits, the length
// above them), line u + 1 carries data unit u (coll/lines.h: 8 payload bytes per line).
#pragma once
#include <cstdint>

#include "kernels/coll/lines.h"
#include "work_items.h"

namespace mpix::work {

MPIX_HOST_DEVICE inline uint64_t line_put_header(uint64_t offset, uint64_t bytes) {
  return offset | (bytes << kLineOffsetBits);
}
MPIX_HOST_DEVICE inline uint64_t line_put_offset(uint64_t header) { return header & ((1ull << kLineOffsetBits) - 1); }
MPIX_HOST_DEVICE inline uint64_t line_put_bytes(uint64_t header) { return header >> kLineOffsetBits; }
// Whether a header names bytes inside a window of `window_bytes`: a header that does not is
// taken with nothing copied (never trust a peer).
MPIX_HOST_DEVICE inline bool line_put_fits(uint64_t header, uint64_t window_bytes) {
  const uint64_t offset = line_put_offset(header), bytes = line_put_bytes(header);
  return bytes <= kLinePutMaxBytes && offset <= window_bytes && bytes <= window_bytes - offset;
}
// The payload of line u (0: the header) of a put of `bytes` from `src` to window offset `offset`.
MPIX_HOST_DEVICE inline uint64_t line_put_payload(const char *src, uint64_t offset, uint64_t bytes, uint64_t u) {
  if (u == 0) return line_put_header(offset, bytes);
  return coll::load_unit(src + (u - 1) * coll::kLinePayload, coll::unit_bytes(bytes, u - 1));
}

}  // namespace mpix::work
