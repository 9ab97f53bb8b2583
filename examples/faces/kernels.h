// The benchmark's device work, one implementation per backend (kernels_host.cpp, kernels_cuda.cu).
// Every call only enqueues on `stream` and returns: stream order is what makes them safe to mix
// with the library's stream-triggered epochs.
#pragma once
#include <string>

#include "layout.h"

namespace faces::kernels {

// Kernels (host tasks) these functions have enqueued so far in this process, for the stream
// operations per exchange beside the library's MPIX_St_stream_ops_enqueued().
unsigned long long launches();

// --launch-overlap: each kernel these functions launch may then be scheduled while the kernel
// before it on the stream still runs, and waits on the device for it (CUDA's programmatic
// dependent launch, compute capability 9.0+). Empty when this rank can have it, else why not.
std::string launch_overlap_unavailable();
// Called once, before the first launch, with the same value on every rank.
void set_launch_overlap(bool on);

// Sets every copy of every point to its initial value times `scale`.
void init_field(const Shape &s, const Placement &p, double scale, double *u, void *stream);
// Direct-stiffness sum inside the block: copies of a point held by neighbouring local elements
// become their sum (one pass per dimension; the passes compose into the full sum).
void interior_sum(const Shape &s, double *u, void *stream);
// Gathers each region's copies into buf at the region's offset.
void pack(const Shape &s, const RegionList &regions, const double *u, double *buf, void *stream);
// Adds each region's received copies (buf at the region's offset) to the field. Regions overlap
// at edges and corners, so the additions to one point must not race.
void unpack_add(const Shape &s, const RegionList &regions, double *u, const double *buf, void *stream);

}  // namespace faces::kernels
