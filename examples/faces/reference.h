// The host reference: what every copy must hold after a block of exchanges, and the check of a
// device field against it.
#pragma once
#include <cstdint>

#include "grid.h"
#include "plan.h"

namespace faces {

// Each copy starts at point_value * scale; one exchange multiplies it by the number of copies it
// is summed with (1, 2, 4 or 8), so values grow geometrically. The scale keeps `exchanges`
// exchanges finite and exact (powers of two times small integers); past about 650 exchanges
// values of lightly shared copies underflow, and the check gets weaker there.
double initial_scale(int exchanges);

// Compares the field (device memory) with the reference after `exchanges` exchanges, with or
// without the interior sum, on `threads` host threads. Returns the number of copies that differ;
// prints the first one.
int64_t check_field(const Plan &plan, const Grid &grid, bool interior, int exchanges, double scale,
                    const double *device_field, int threads);

}  // namespace faces
