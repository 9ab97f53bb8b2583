// The result after the run: the residual of the last iteration over the distributed field, and
// (rank 0, from the gathered blocks) a comparison with the same Jacobi run serially on the host.
#pragma once
#include "decomposition.h"
#include "solver.h"

namespace stencil {

struct Residual {
  double max_abs = 0;  // max |u_new - u_old| over the interior
  double l2 = 0;       // sqrt(sum (u_new - u_old)^2)
};

struct CheckResult {
  Residual residual;            // of the distributed run (every rank)
  bool checked = false;         // the serial reference ran (rank 0)
  Residual reference;           // of the serial run (rank 0)
  long long mismatches = 0;     // interior points that differ in any bit (rank 0)
  long long points = 0;         // interior points compared (rank 0)
  bool passed = true;           // every rank gets rank 0's verdict
};

// Collective over d.cart. `iterations` >= 1 have run; solver.field(t) holds iteration t's field.
CheckResult check(const Decomposition &d, const Solver &solver, int iterations, bool reference);

}  // namespace stencil
