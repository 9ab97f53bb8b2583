// Faces: nearest-neighbour exchange of spectral-element faces, edges and corners (after
// J. B. White's Faces, the CORAL-2 Nekbone pattern), in point-to-point, host-driven RMA,
// stream-triggered RMA, stream two-sided (HPE's and MPICH's spellings) and NCCL forms. See
// options.h for the command line.
#include <mpi.h>
#include <mpix/mpix_st.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "grid.h"
#include "kernels.h"
#include "modes.h"
#include "options.h"
#include "plan.h"
#include "report.h"
#include "runner.h"
#include "xdev.h"

namespace {

struct NodePlace {
  int local_rank = 0;
  int local_ranks = 1;
};

NodePlace node_place(MPI_Comm comm) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  NodePlace p;
  MPI_Comm_rank(node, &p.local_rank);
  MPI_Comm_size(node, &p.local_ranks);
  MPI_Comm_free(&node);
  return p;
}

// Whether any device on any node serves more than one rank (ranks map to local_rank / K modulo
// the device count).
bool devices_shared(const NodePlace &p, int ranks_per_device, MPI_Comm comm) {
  const int mine = ranks_per_device > 1 || p.local_ranks > xdev::device_count() ? 1 : 0;
  int any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_LOR, comm);
  return any != 0;
}

// --launch-overlap: on only where every rank can have it; "off: why" otherwise (rank 0's reason,
// or that another rank lacks it). Where ranks share a device it stays off, as the library's own
// launch overlap does: a grid waiting for its predecessor holds blocks that a peer's kernel on
// that device may need.
std::string decide_launch_overlap(bool asked, bool shared, MPI_Comm comm) {
  if (!asked) return "off";
  std::string why = faces::kernels::launch_overlap_unavailable();
  if (why.empty() && shared) why = "ranks share a device";
  const int mine = why.empty() ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  if (!all && why.empty()) why = "another rank cannot have it";
  faces::kernels::set_launch_overlap(all != 0);
  return all ? "on" : "off: " + why;
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, len);
  return s.substr(0, s.find('\n'));
}

std::vector<std::string> device_names(MPI_Comm comm) {
  constexpr int kName = 128;
  char mine[kName] = {};
  std::snprintf(mine, kName, "%s", xdev::device_name());
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<char> all(static_cast<size_t>(size) * kName);
  MPI_Allgather(mine, kName, MPI_CHAR, all.data(), kName, MPI_CHAR, comm);
  std::vector<std::string> names;
  for (int r = 0; r < size; ++r) names.emplace_back(all.data() + static_cast<size_t>(r) * kName);
  return names;
}

// Ends the run with a message from rank 0 (every rank reaches the same verdict).
int fail(int rank, const std::string &why) {
  if (rank == 0) std::fprintf(stderr, "faces: %s\n", why.c_str());
  MPI_Finalize();
  return 2;
}

}  // namespace

int main(int argc, char **argv) {
  // The library must drive the memory this binary allocates: host memory on the host build,
  // device memory on the CUDA build. An explicit MPIX_ST_BACKEND is respected, and checked below.
  setenv("MPIX_ST_BACKEND", xdev::kind(), 0);
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  faces::Options o;
  std::string error;
  if (!faces::parse_options(argc, argv, &o, &error)) {
    if (rank == 0) std::fputs(faces::usage(), stderr);
    return fail(rank, error);
  }
  if (o.ranks[0] * o.ranks[1] * o.ranks[2] != size)
    return fail(rank, "grid " + std::to_string(o.ranks[0]) + "x" + std::to_string(o.ranks[1]) + "x" +
                          std::to_string(o.ranks[2]) + " needs " + std::to_string(o.ranks[0] * o.ranks[1] * o.ranks[2]) +
                          " ranks, the run has " + std::to_string(size));
  const NodePlace place = node_place(MPI_COMM_WORLD);
  xdev::init(place.local_rank / o.ranks_per_gpu);
  const std::string backend = MPIX_St_backend_name();
  if (backend != xdev::kind())
    return fail(rank, "the library's backend is '" + backend + "' but this binary's memory is '" + xdev::kind() +
                          "' (MPIX_ST_BACKEND=" + xdev::kind() + " runs it)");

  faces::RunInfo run;
  run.options = o;
  const char *slash = std::strrchr(argv[0], '/');
  run.binary = slash ? slash + 1 : argv[0];
  run.ranks = size;
  run.backend = backend;
  run.mpi_library = mpi_library_version();
  run.vendor_library = faces::vendor_library_version();
  run.devices = device_names(MPI_COMM_WORLD);
  const bool shared = devices_shared(place, o.ranks_per_gpu, MPI_COMM_WORLD);
  run.launch_overlap = decide_launch_overlap(o.launch_overlap, shared, MPI_COMM_WORLD);
  if (rank == 0) faces::print_header(run);
  if (rank == 0 && 3 * o.exchanges() > 2000)
    std::fprintf(stderr, "faces: note: beyond ~650 exchanges per block the reference check loses precision\n");

  const faces::Grid grid(o.ranks, o.periodic, rank);
  const faces::Plan plan({{o.elements[0], o.elements[1], o.elements[2]}, o.n}, grid);
  void *stream = xdev::stream_create();
  std::vector<std::string> modes = o.mode == "all" ? faces::all_modes() : std::vector<std::string>{o.mode};
  std::vector<faces::ModeResult> results;
  bool all_passed = true;
  // The node's cores, shared among its ranks, check the large inputs' gigabytes in seconds.
  const int check_threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / place.local_ranks);
  for (const std::string &mode : modes) {
    std::string why;
    faces::ModeResult r = faces::mode_available(mode, o, plan, shared, MPI_COMM_WORLD, &why)
                              ? faces::run_mode(mode, o, grid, plan, stream, MPI_COMM_WORLD, check_threads)
                              : faces::skipped_mode(mode, why, MPI_COMM_WORLD);
    // A mode asked for by name must run; "all" runs what this binary and run allow.
    if (!r.skipped.empty() && o.mode != "all") all_passed = false;
    if (r.skipped.empty() && r.passed != r.ranks) all_passed = false;
    if (rank == 0) faces::print_result(r);
    results.push_back(r);
  }
  if (rank == 0) faces::print_ratios(results);
  if (rank == 0 && !o.json.empty() && !faces::write_json(o.json, run, results)) all_passed = false;
  xdev::stream_destroy(stream);
  int verdict = all_passed ? 1 : 0;
  MPI_Bcast(&verdict, 1, MPI_INT, 0, MPI_COMM_WORLD);  // rank 0 alone knows whether the JSON was written
  MPI_Finalize();
  return verdict ? 0 : 1;
}
