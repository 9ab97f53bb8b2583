// Minimal device layer for the examples and tests: memory, copies and streams on the host backend
// (host memory, MPIX_Host_stream) or on CUDA. The library itself never uses this; applications own
// their device code, and this is the examples' own.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define XDEV_HOST_DEVICE __host__ __device__
#else
#define XDEV_HOST_DEVICE
#endif

namespace xdev {

const char *kind();  // "host" or "cuda"
// Whether the MPI under the library reads this layer's device memory: always on the host backend
// (its "device" memory is host memory); elsewhere the library's own switch says so
// (MPIX_ST_MPI_GPU_AWARE: 1, true, yes or on, as the library's settings table reads it).
inline bool mpi_reads_device_memory() {
  if (std::strcmp(kind(), "host") == 0) return true;
  const char *v = std::getenv("MPIX_ST_MPI_GPU_AWARE");
  return v && (std::strcmp(v, "1") == 0 || std::strcmp(v, "true") == 0 || std::strcmp(v, "yes") == 0 ||
               std::strcmp(v, "on") == 0);
}
// Selects the device for this rank (CUDA: local rank modulo device count). Call after MPI_Init.
void init(int local_rank);

void *stream_create();
// The MPI_Info "type" that names this layer's stream to MPIX_Stream_create (MPICH's stream API).
const char *stream_info_type();
void stream_sync(void *stream);  // aborts with a message on failure
void stream_destroy(void *stream);

void *alloc(size_t bytes);  // device memory (host backend: plain host memory)
void free(void *ptr);
void copy_to_device(void *dst, const void *src, size_t bytes);  // synchronous
void copy_to_host(void *dst, const void *src, size_t bytes);    // synchronous
void fill(void *dst, int byte, size_t bytes);                  // synchronous

// Page-locked host memory for staging copies (host backend: plain host memory).
void *alloc_pinned(size_t bytes);
void free_pinned(void *ptr);
// Devices this process can choose from (host backend: 1).
int device_count();
// Name of the device this rank uses (CUDA: the product name; host: "host CPU").
const char *device_name();

// Stream capture (CUDA graphs; MPIX_Host_graph on the host backend): between begin and end, work
// enqueued on `stream` is recorded; the graph replays it, in order, at each launch.
void stream_begin_capture(void *stream);
void *stream_end_capture(void *stream);  // the graph, ready to launch
void graph_launch(void *graph, void *stream);
void graph_destroy(void *graph);

// Stream-ordered work whose effect depends on a counter in device memory, so that each replay of a
// graph does something new and checkable. `counter` is a device word (alloc(8), zeroed).
// stamp: ++*counter, then dst[i] = stamp_byte(key, *counter, i) for i < bytes.
void stamp(void *stream, void *dst, size_t bytes, uint64_t *counter, uint64_t key);
// append: copies `bytes` from src to dst + *counter * bytes, then ++*counter (a growing history).
void append(void *stream, void *dst, const void *src, size_t bytes, uint64_t *counter);

// A pack kernel: `count` blocks of `block` bytes, `stride` bytes apart in src, packed into dst
// (the baseline derived-datatype puts are measured against).
void gather_blocks(void *stream, void *dst, const void *src, size_t block, size_t stride, size_t count);

// The bytes stamp writes; the same function on host and device.
XDEV_HOST_DEVICE inline uint8_t stamp_byte(uint64_t key, uint64_t gen, size_t i) {
  uint64_t x = key * 0x9e3779b97f4a7c15ull + gen * 0xbf58476d1ce4e5b9ull + (i >> 3);
  x ^= x >> 31;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 29;
  return static_cast<uint8_t>(x >> ((i & 7) * 8));
}

}  // namespace xdev
