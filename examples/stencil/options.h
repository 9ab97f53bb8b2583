// Command line: [--graph] [--block K] [--dims px py pz] [--json FILE] [--no-check]
//               nx ny nz iterations
#pragma once
#include <string>

namespace stencil {

struct Options {
  int n[3] = {0, 0, 0};         // interior points per rank along x, y, z
  int iterations = 0;
  bool graph = false;           // capture `block` iterations once and replay the graph
  int block = 10;               // iterations per graph (even: each replay ends on the array it began with)
  int dims[3] = {0, 0, 0};      // ranks per dimension; 0: MPI_Dims_create chooses
  std::string json;             // empty: no JSON file
  bool check = true;            // compare with the serial reference on rank 0
};

// Parses argv; on a malformed line returns false with the reason in *error.
bool parse_options(int argc, char **argv, Options *out, std::string *error);
const char *usage();

}  // namespace stencil
