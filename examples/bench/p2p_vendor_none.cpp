#include "p2p_vendor.h"

p2p_bench::VendorChoice p2p_bench::make_vendor(MPI_Comm) { return {}; }
