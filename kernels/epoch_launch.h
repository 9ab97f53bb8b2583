// Host-side entry to the merged epoch kernel, built once per device runtime (CUDA or HIP).
#pragma once
#include "kernels/coll/args.h"
#include "work_items.h"

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
#include <hip/hip_runtime.h>
using mpix_gpu_graph_node_t = hipGraphNode_t;
using mpix_gpu_kernel_node_params_t = hipKernelNodeParams;
#define mpix_gpu_graph_kernel_node_set_params hipGraphKernelNodeSetParams
#else
#include <cuda_runtime.h>
using mpix_gpu_graph_node_t = cudaGraphNode_t;
using mpix_gpu_kernel_node_params_t = cudaKernelNodeParams;
#define mpix_gpu_graph_kernel_node_set_params cudaGraphKernelNodeSetParams
#endif

// Grid shapes the backend sizes launches by. Blocks of an epoch launch spin on peers' flags, and
// ranks sharing a device each get 1/n of its resident blocks (gpu::Backend::set_device_sharers):
// a grid larger than what is resident can wait forever for a peer whose kernel finds no room. So
// the kernels are compiled to stay resident at these counts (launch bounds cap their registers:
// 64 a thread for two 512-thread epoch blocks per SM), and the backend never launches more.
constexpr int kLaunchThreads = 512;
constexpr int kEpochBlocksPerSm = 2;
constexpr int kCollBlocksPerSm = 1;
// CUDA's second bound is resident blocks per SM; HIP's means waves per execution unit, and AMD's
// register files hold two such blocks per compute unit at the first bound alone (untested here).
#if defined(__HIPCC__)
#define MPIX_RESIDENT_BOUNDS(threads, blocks_per_sm) __launch_bounds__(threads)
#else
#define MPIX_RESIDENT_BOUNDS(threads, blocks_per_sm) __launch_bounds__(threads, blocks_per_sm)
#endif

// Returns the runtime's error code (0 on success). `overlap`: the kernel may be scheduled before
// the previous kernel on the stream ends (launch_overlap.h).
int mpix_launch_epoch_kernel(const mpix::work::LaunchParams &params, int blocks, int threads, void *stream,
                             bool overlap);
// Under stream capture: makes the kernel node `node` (one a launch above recorded) run `params`
// instead, so calls that follow it on the stream join it (src/backend/list_merge.h).
int mpix_set_epoch_kernel_node(void *node, const mpix::work::LaunchParams &params, int blocks, int threads);
// One collective call (kernels/coll/run_schedule.h); blocks must all run at once (a block waits for its
// peers' blocks of the same channel).
int mpix_launch_coll_kernel(const mpix::coll::Args &args, int blocks, int threads, void *stream, bool overlap);
// Whether the kernels built for this device can be launched with overlap (launch_overlap.h): a
// kernel compiled without the dependency wait must never be.
bool mpix_kernels_support_overlap();
