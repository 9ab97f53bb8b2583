// Host-side entry to the merged epoch kernel, built once per device runtime (CUDA or HIP).
#pragma once
#include "coll_args.h"
#include "work_items.h"

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
#include <hip/hip_runtime.h>
using mpix_gpu_stream_t = hipStream_t;
#define mpix_gpu_get_last_error hipGetLastError
#else
#include <cuda_runtime.h>
using mpix_gpu_stream_t = cudaStream_t;
#define mpix_gpu_get_last_error cudaGetLastError
#endif

// Returns the runtime's error code (0 on success).
int mpix_launch_epoch_kernel(const mpix::work::LaunchParams &params, int blocks, int threads, void *stream);
// One collective call (coll_schedules.h); blocks must all run at once (grid barriers).
int mpix_launch_coll_kernel(const mpix::coll::Args &args, int blocks, int threads, void *stream);
