// Command line: [--mode p2p|rma|st|queue|enqueue|nccl|all] [--periodic] [--ranks-per-gpu K] [--throttle-sync K]
//               [--graph] [--datatypes] [--launch-overlap] [--st-windows 1|2] [--json FILE]
//               lx ly lz mx my mz n niface niel nshare
#pragma once
#include <string>
#include <vector>

#include "grid.h"

namespace faces {

struct Options {
  std::string mode = "st";   // as given; "all" expands to every available mode
  bool periodic = false;
  int ranks_per_gpu = 1;
  int throttle_sync = 0;     // st: synchronise the stream every K exchanges (0: once per block)
  bool graph = false;        // st, nccl: capture a block of exchanges once, replay it per block
                             // (queue and enqueue cannot be captured: skipped)
  bool datatypes = false;    // rma, st: put each region from the field through a derived type
  bool launch_overlap = false;  // Faces' own kernels launched so they may overlap the kernel before
  int st_windows = 2;        // st: 2 = two windows in turn, each exchange posting the next one's
  std::string json;          // empty: no JSON file
  Vec3 ranks{};              // lx ly lz
  Vec3 elements{};           // mx my mz
  int n = 0;                 // points per element edge
  int niface = 0, niel = 0;
  int nshare = 0;            // exchanges per timed block; negative: no interior sum
  int exchanges() const { return nshare < 0 ? -nshare : nshare; }
  bool interior() const { return nshare > 0; }
};

// Parses argv; on a malformed line returns false with the reason in *error.
bool parse_options(int argc, char **argv, Options *out, std::string *error);
const char *usage();

}  // namespace faces
