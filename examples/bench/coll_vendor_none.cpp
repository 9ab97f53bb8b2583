#include "coll_vendor.h"

coll_bench::Vendor *coll_bench::make_vendor(MPI_Comm) { return nullptr; }
