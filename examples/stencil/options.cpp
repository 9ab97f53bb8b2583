#include "options.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace stencil {
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
  for (int d = 0; d < 3; ++d) {
    if (o.n[d] < 1) *error = "nx ny nz must be at least 1";
    else if (o.dims[d] < 0) *error = "--dims takes counts of at least 1, or 0 (MPI_Dims_create chooses)";
    else continue;
    return false;
  }
  if (o.iterations < 1) *error = "iterations must be at least 1";
  else if (o.block < 2 || o.block % 2) *error = "--block must be even and at least 2 (the arrays swap each iteration)";
  else if (o.graph && o.iterations < o.block) *error = "--graph needs at least --block iterations";
  else return true;
  return false;
}

}  // namespace

const char *usage() {
  return "usage: stencil [--graph] [--block K] [--dims px py pz] [--json FILE] [--no-check] nx ny nz iterations\n"
         "  nx ny nz    interior points per rank (the global grid is dims times this)\n"
         "  iterations  Jacobi iterations, all enqueued before one stream synchronisation\n"
         "  --graph     capture K iterations into a graph once and replay it iterations/K times\n"
         "              (the remainder runs eagerly)\n"
         "  --block K   iterations per graph, even (default 10)\n"
         "  --dims      ranks per dimension, 0 for MPI_Dims_create to choose (default 0 0 0)\n"
         "  --json FILE write the run's numbers to FILE\n"
         "  --no-check  skip the serial reference on rank 0 (large grids)\n";
}

bool parse_options(int argc, char **argv, Options *o, std::string *error) {
  std::vector<int> numbers;
  for (int a = 1; a < argc; ++a) {
    const char *arg = argv[a];
    const bool has_value = a + 1 < argc;
    if (std::strcmp(arg, "--graph") == 0) {
      o->graph = true;
    } else if (std::strcmp(arg, "--no-check") == 0) {
      o->check = false;
    } else if (std::strcmp(arg, "--block") == 0 && has_value) {
      if (!to_int(argv[++a], &o->block)) {
        *error = "--block needs an integer";
        return false;
      }
    } else if (std::strcmp(arg, "--dims") == 0 && a + 3 < argc) {
      for (int d = 0; d < 3; ++d)
        if (!to_int(argv[++a], &o->dims[d])) {
          *error = "--dims needs three integers";
          return false;
        }
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
  if (numbers.size() != 4) {
    *error = "expected 4 numbers (nx ny nz iterations), got " + std::to_string(numbers.size());
    return false;
  }
  for (int d = 0; d < 3; ++d) o->n[d] = numbers[d];
  o->iterations = numbers[3];
  return check_numbers(*o, error);
}

}  // namespace stencil
