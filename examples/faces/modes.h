// The benchmark's modes by name: which ones this binary and this run can use.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "exchange.h"
#include "options.h"

namespace faces {

// Modes --mode all runs, in order (those a run cannot use are reported as skipped).
std::vector<std::string> all_modes();
// Whether `mode` can run this input here (`devices_shared`: some device serves several ranks);
// otherwise *why says why not. Collective over `comm` (the two-sided modes compare the ranks').
bool mode_available(const std::string &mode, const Options &o, const Plan &plan, bool devices_shared, MPI_Comm comm,
                    std::string *why);
std::unique_ptr<Exchange> make_exchange(const std::string &mode, const Context &c);
// Version of the vendor library behind the nccl mode, e.g. "NCCL 2.28.9"; empty when not built.
std::string vendor_library_version();

}  // namespace faces
