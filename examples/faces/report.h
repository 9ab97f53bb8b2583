// What rank 0 prints and writes: the run's description, one summary per mode, ratios against st,
// and the same as JSON.
#pragma once
#include <string>
#include <vector>

#include "options.h"
#include "runner.h"

namespace faces {

struct RunInfo {
  Options options;
  std::string binary;         // faces or faces_cuda
  int ranks = 0;
  std::string backend;        // MPIX_St_backend_name()
  std::string mpi_library;    // MPI_Get_library_version, first line
  std::string vendor_library;  // NCCL's version where the nccl mode is built
  std::vector<std::string> devices;  // by rank
  std::string launch_overlap = "off";  // --launch-overlap: "on", "off", or "off: why"
};

void print_header(const RunInfo &run);
void print_result(const ModeResult &r);
// Per-exchange time of each mode that ran divided by st's; nothing when st did not run.
void print_ratios(const std::vector<ModeResult> &results);
// Returns false (with a message on stderr) when the file cannot be written.
bool write_json(const std::string &path, const RunInfo &run, const std::vector<ModeResult> &results);

}  // namespace faces
