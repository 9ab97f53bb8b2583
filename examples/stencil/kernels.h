// The solver's device work, one implementation per backend (kernels_host.cpp, kernels_cuda.cu).
// It only enqueues on `stream` and returns: stream order puts it after the halo exchange.
#pragma once
#include "box.h"

namespace stencil::kernels {

// out = one Jacobi sweep of in, on the interior points (halos of out are left alone).
void sweep(const Box &b, const double *in, double *out, void *stream);

}  // namespace stencil::kernels
