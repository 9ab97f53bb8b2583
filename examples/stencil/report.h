// What rank 0 prints and writes as JSON.
#pragma once
#include <string>

#include "check.h"
#include "decomposition.h"
#include "options.h"
#include "solver.h"

namespace stencil {

struct Report {
  std::string binary;   // stencil or stencil_cuda
  std::string backend;  // MPIX_St_backend_name()
  int ranks = 0;
  const Options *options = nullptr;
  const Decomposition *decomposition = nullptr;
  RunStats stats;       // slowest rank's time
  CheckResult check;
};

void print_report(const Report &r);
// Returns false (with a message on stderr) when the file cannot be written.
bool write_json(const std::string &path, const Report &r);

}  // namespace stencil
