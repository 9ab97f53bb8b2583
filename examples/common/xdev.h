// Minimal device layer for the examples and tests: memory, copies and streams on the host backend
// (host memory, MPIX_Host_stream) or on CUDA. The library itself never uses this; applications own
// their device code, and this is the examples' own.
#pragma once
#include <cstddef>

namespace xdev {

const char *kind();  // "host" or "cuda"
// Selects the device for this rank (CUDA: local rank modulo device count). Call after MPI_Init.
void init(int local_rank);

void *stream_create();
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

}  // namespace xdev
