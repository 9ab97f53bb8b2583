#include "options.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace faces {
namespace {

bool to_int(const char *text, int *out) {
  char *end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (errno || end == text || *end || v < -(1L << 30) || v > (1L << 30)) return false;
  *out = static_cast<int>(v);
  return true;
}

bool check_numbers(const Options &o, std::string *error) {
  for (int d = 0; d < 3; ++d)
    if (o.ranks[d] < 1 || o.elements[d] < 1) {
      *error = "lx ly lz and mx my mz must be at least 1";
      return false;
    }
  if (o.n < 2) *error = "n must be at least 2 (elements share their end points)";
  else if (o.niface < 1 || o.niel < 1) *error = "niface and niel must be at least 1";
  else if (o.nshare == 0) *error = "nshare must not be 0 (negative: no interior sum)";
  else if (o.ranks_per_gpu < 1) *error = "--ranks-per-gpu must be at least 1";
  else if (o.throttle_sync < 0) *error = "--throttle-sync must not be negative";
  else if (o.graph && o.throttle_sync > 0) *error = "--graph replays whole blocks: it excludes --throttle-sync";
  else if (o.st_windows != 1 && o.st_windows != 2) *error = "--st-windows must be 1 or 2";
  else return true;
  return false;
}

}  // namespace

const char *usage() {
  return "usage: faces [--mode p2p|rma|st|queue|enqueue|nccl|all] [--periodic] [--ranks-per-gpu K]\n"
         "             [--throttle-sync K] [--graph] [--datatypes] [--launch-overlap] [--st-windows 1|2]\n"
         "             [--json FILE]\n"
         "             lx ly lz mx my mz n niface niel nshare\n"
         "  --datatypes rma and st: put each face, edge and corner straight from the field through an\n"
         "              MPI derived datatype (no pack kernel); the received\n"
         "              copies stay contiguous and the unpack-add kernel sums them. The other modes pack\n"
         "  --graph     st, queue, enqueue and nccl: capture one block of exchanges into a graph (the\n"
         "              same kernels and calls) after running the warm-up block eagerly, and replay it\n"
         "              for every timed block; p2p and rma stay eager (they are host-driven)\n"
         "  --launch-overlap  every mode: Faces' own kernels (pack, unpack, sums) are launched so that\n"
         "              each may be scheduled while the kernel before it on the stream runs and waits\n"
         "              on the device for it (CUDA programmatic dependent launch, compute capability\n"
         "              9.0+, one rank per device); whether a library's kernel after them gains\n"
         "              depends on how that library launches it. Off elsewhere (the header says why)\n"
         "  --st-windows W  st: 2 (default): two windows over two receive buffers, used in turn; each\n"
         "              exchange posts the next exchange's window before its own complete, so peers\n"
         "              find it exposed; 1: one window, posted in each exchange\n"
         "  --throttle-sync K  st: synchronise the stream every K exchanges (application-level\n"
         "              throttling of triggered operations); 0: once per timed block\n"
         "  lx ly lz    rank grid (x fastest); the run needs lx*ly*lz ranks\n"
         "  mx my mz n  elements per rank and points per element edge\n"
         "  niface      passes that build buffers and windows\n"
         "  niel        re-initialisations per pass, each followed by a timed block (the first of\n"
         "              each pass is preceded by an untimed warm-up block)\n"
         "  nshare      exchanges per timed block; negative: no interior sum kernels\n";
}

bool parse_options(int argc, char **argv, Options *o, std::string *error) {
  std::vector<int> numbers;
  for (int a = 1; a < argc; ++a) {
    const char *arg = argv[a];
    const bool has_value = a + 1 < argc;
    if (std::strcmp(arg, "--periodic") == 0) {
      o->periodic = true;
    } else if (std::strcmp(arg, "--mode") == 0 && has_value) {
      o->mode = argv[++a];
      if (o->mode != "p2p" && o->mode != "rma" && o->mode != "st" && o->mode != "queue" && o->mode != "enqueue" &&
          o->mode != "nccl" && o->mode != "all") {
        *error = "unknown mode '" + o->mode + "'";
        return false;
      }
    } else if (std::strcmp(arg, "--ranks-per-gpu") == 0 && has_value) {
      if (!to_int(argv[++a], &o->ranks_per_gpu)) {
        *error = "--ranks-per-gpu needs an integer";
        return false;
      }
    } else if (std::strcmp(arg, "--throttle-sync") == 0 && has_value) {
      if (!to_int(argv[++a], &o->throttle_sync)) {
        *error = "--throttle-sync needs an integer";
        return false;
      }
    } else if (std::strcmp(arg, "--st-windows") == 0 && has_value) {
      if (!to_int(argv[++a], &o->st_windows)) {
        *error = "--st-windows needs an integer";
        return false;
      }
    } else if (std::strcmp(arg, "--graph") == 0) {
      o->graph = true;
    } else if (std::strcmp(arg, "--datatypes") == 0) {
      o->datatypes = true;
    } else if (std::strcmp(arg, "--launch-overlap") == 0) {
      o->launch_overlap = true;
    } else if (std::strcmp(arg, "--json") == 0 && has_value) {
      o->json = argv[++a];
    } else {
      int v = 0;
      if (!to_int(arg, &v)) {
        *error = std::string("unexpected argument '") + arg + "'";
        return false;
      }
      numbers.push_back(v);
    }
  }
  if (numbers.size() != 10) {
    *error = "expected 10 numbers, got " + std::to_string(numbers.size());
    return false;
  }
  o->ranks = {numbers[0], numbers[1], numbers[2]};
  o->elements = {numbers[3], numbers[4], numbers[5]};
  o->n = numbers[6];
  o->niface = numbers[7];
  o->niel = numbers[8];
  o->nshare = numbers[9];
  return check_numbers(*o, error);
}

}  // namespace faces
