#include "report.h"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace stencil {
namespace {

std::string triple(const int v[3], const char *sep) {
  return std::to_string(v[0]) + sep + std::to_string(v[1]) + sep + std::to_string(v[2]);
}

double us_per_iteration(const Report &r) { return r.stats.seconds * 1e6 / r.options->iterations; }

double ops_per_iteration(const Report &r) {
  return r.stats.enqueued_iterations ? double(r.stats.stream_ops) / r.stats.enqueued_iterations : 0;
}

}  // namespace

void print_report(const Report &r) {
  const Options &o = *r.options;
  const Decomposition &d = *r.decomposition;
  std::printf("stencil: %s, backend %s, %d ranks as %s, grid %s (%s per rank), %d iterations, %s\n", r.binary.c_str(),
              r.backend.c_str(), r.ranks, triple(d.dims, "x").c_str(), triple(d.global, "x").c_str(),
              triple(d.box.n, "x").c_str(), o.iterations,
              o.graph ? ("graph of " + std::to_string(o.block) + " iterations, replayed").c_str() : "eager");
  std::printf("stencil: time per iteration %.3f us; stream operations enqueued per iteration %.2f (%llu over %d "
              "enqueued iterations)\n",
              us_per_iteration(r), ops_per_iteration(r), r.stats.stream_ops, r.stats.enqueued_iterations);
  const CheckResult &c = r.check;
  std::printf("stencil: residual max|u_new-u_old| %.17g, L2 %.17g\n", c.residual.max_abs, c.residual.l2);
  if (c.checked) {
    std::printf("stencil: reference residual max|u_new-u_old| %.17g, L2 %.17g\n", c.reference.max_abs,
                c.reference.l2);
    std::printf("stencil: field vs serial reference: %lld of %lld points differ\n", c.mismatches, c.points);
  } else {
    std::printf("stencil: no reference check (--no-check)\n");
  }
  std::printf("stencil: %s\n", c.passed ? "passed" : "FAILED");
  std::fflush(stdout);
}

bool write_json(const std::string &path, const Report &r) {
  const Options &o = *r.options;
  const Decomposition &d = *r.decomposition;
  const CheckResult &c = r.check;
  std::ostringstream j;
  j.precision(17);
  j << "{\n  \"binary\": \"" << r.binary << "\",\n  \"backend\": \"" << r.backend << "\",\n  \"ranks\": " << r.ranks
    << ",\n  \"dims\": [" << triple(d.dims, ", ") << "],\n  \"grid\": [" << triple(d.global, ", ")
    << "],\n  \"local\": [" << triple(d.box.n, ", ") << "],\n  \"iterations\": " << o.iterations
    << ",\n  \"graph\": " << (o.graph ? "true" : "false") << ",\n  \"block\": " << (o.graph ? o.block : 0)
    << ",\n  \"us_per_iteration\": " << us_per_iteration(r)
    << ",\n  \"stream_ops_per_iteration\": " << ops_per_iteration(r)
    << ",\n  \"residual\": {\"max_abs\": " << c.residual.max_abs << ", \"l2\": " << c.residual.l2 << "}";
  if (c.checked)
    j << ",\n  \"reference\": {\"max_abs\": " << c.reference.max_abs << ", \"l2\": " << c.reference.l2
      << ", \"points\": " << c.points << ", \"mismatches\": " << c.mismatches << "}";
  j << ",\n  \"passed\": " << (c.passed ? "true" : "false") << "\n}\n";
  std::ofstream f(path);
  f << j.str();
  if (!f) {
    std::fprintf(stderr, "stencil: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

}  // namespace stencil
