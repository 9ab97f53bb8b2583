#include <mpix/mpix_st.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "xdev.h"

namespace xdev {

const char *kind() { return "host"; }
void init(int) {}

void *stream_create() {
  MPIX_Host_stream s = nullptr;
  if (MPIX_Host_stream_create(&s) != MPI_SUCCESS) {
    std::fprintf(stderr, "xdev: MPIX_Host_stream_create failed\n");
    std::abort();
  }
  return s;
}

void stream_sync(void *stream) {
  int rc = MPIX_Host_stream_synchronize(static_cast<MPIX_Host_stream>(stream));
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    std::fprintf(stderr, "xdev: stream synchronize failed: %s\n", msg);
    std::abort();
  }
}

void stream_destroy(void *stream) { MPIX_Host_stream_destroy(static_cast<MPIX_Host_stream>(stream)); }

void *alloc(size_t bytes) {
  void *p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
  if (!p) std::abort();
  return p;
}
void free(void *ptr) { std::free(ptr); }
void copy_to_device(void *dst, const void *src, size_t bytes) { std::memcpy(dst, src, bytes); }
void copy_to_host(void *dst, const void *src, size_t bytes) { std::memcpy(dst, src, bytes); }
void fill(void *dst, int byte, size_t bytes) { std::memset(dst, byte, bytes); }

void *alloc_pinned(size_t bytes) { return alloc(bytes); }
void free_pinned(void *ptr) { free(ptr); }
int device_count() { return 1; }
const char *device_name() { return "host CPU"; }

}  // namespace xdev
