#include "report.h"

#include <mpix/mpix_st.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace faces {
namespace {

const ModeResult *find_st(const std::vector<ModeResult> &results) {
  for (const ModeResult &r : results)
    if (r.mode == "st" && r.skipped.empty()) return &r;
  return nullptr;
}

std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += static_cast<char>(ch);
    } else if (ch < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      out += buf;
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out + "\"";
}

std::string triple(const Vec3 &v) {
  std::string out = "[";
  for (size_t d = 0; d < v.size(); ++d) {
    if (d) out += ", ";
    out += std::to_string(v[d]);
  }
  out += ']';
  return out;
}

std::string stats(const Stats &s) {
  std::ostringstream o;
  o.precision(9);
  o << "{\"avg\": " << s.avg << ", \"min\": " << s.min << ", \"max\": " << s.max << "}";
  return o.str();
}

}  // namespace

void print_header(const RunInfo &run) {
  const Options &o = run.options;
  std::printf("faces: %s, %d ranks, grid %dx%dx%d%s, %dx%dx%d elements of %d^3 points per rank, niface %d niel %d "
              "nshare %d (%s)\n",
              run.binary.c_str(), run.ranks, o.ranks[0], o.ranks[1], o.ranks[2], o.periodic ? " periodic" : "",
              o.elements[0], o.elements[1], o.elements[2], o.n, o.niface, o.niel, o.nshare,
              o.interior() ? "with interior sums" : "no interior sums");
  if (o.datatypes)
    std::printf("faces: --datatypes: rma and st put each face, edge and corner straight from the field through MPI "
                "derived datatypes (no pack kernel); the received copies stay contiguous in the window and the "
                "unpack-add kernel sums them into the field (a put cannot add); the other modes still pack\n");
  if (o.graph)
    std::printf("faces: --graph: st, queue, enqueue and nccl replay one captured block; p2p and rma stay eager\n");
  if (o.launch_overlap)
    std::printf("faces: --launch-overlap: %s (Faces' own kernels, in every mode; each library launches its own "
                "kernels as it does)\n",
                run.launch_overlap.c_str());
  std::printf("faces: mpix-st %d.%d backend %s, device %s, %s%s%s\n", MPIX_ST_VERSION_MAJOR, MPIX_ST_VERSION_MINOR,
              run.backend.c_str(), run.devices.empty() ? "?" : run.devices[0].c_str(), run.mpi_library.c_str(),
              run.vendor_library.empty() ? "" : ", ", run.vendor_library.c_str());
  std::fflush(stdout);
}

void print_result(const ModeResult &r) {
  if (!r.skipped.empty()) {
    std::printf("mode=%s skipped: %s\n", r.mode.c_str(), r.skipped.c_str());
  } else {
    std::printf("mode=%s passed=%d/%d\n", r.mode.c_str(), r.passed, r.ranks);
    std::printf("mode=%s total_s avg=%.6f min=%.6f max=%.6f per_exchange_us avg=%.3f min=%.3f max=%.3f "
                "(%d blocks x %d exchanges; %s)\n",
                r.mode.c_str(), r.total_s.avg, r.total_s.min, r.total_s.max, r.per_exchange_us.avg,
                r.per_exchange_us.min, r.per_exchange_us.max, r.timed_blocks, r.exchanges_per_block,
                r.detail.c_str());
    std::printf("mode=%s stream_ops_per_exchange=%g (library %g, faces kernels %g)\n", r.mode.c_str(),
                r.library_ops + r.faces_ops, r.library_ops, r.faces_ops);
  }
  std::fflush(stdout);
}

void print_ratios(const std::vector<ModeResult> &results) {
  const ModeResult *st = find_st(results);
  if (!st || results.size() < 2) return;
  std::printf("ratio per-exchange time / st:");
  for (const ModeResult &r : results)
    if (r.skipped.empty()) std::printf(" %s=%.3f", r.mode.c_str(), r.per_exchange_us.avg / st->per_exchange_us.avg);
  std::printf("\n");
  std::fflush(stdout);
}

bool write_json(const std::string &path, const RunInfo &run, const std::vector<ModeResult> &results) {
  const Options &o = run.options;
  const ModeResult *st = find_st(results);
  std::ostringstream j;
  j << "{\n  \"benchmark\": \"faces\",\n  \"binary\": " << quoted(run.binary) << ",\n";
  j << "  \"config\": {\"ranks\": " << run.ranks << ", \"grid\": " << triple(o.ranks)
    << ", \"periodic\": " << (o.periodic ? "true" : "false") << ", \"elements\": " << triple(o.elements)
    << ", \"n\": " << o.n << ", \"niface\": " << o.niface << ", \"niel\": " << o.niel << ", \"nshare\": " << o.nshare
    << ", \"interior\": " << (o.interior() ? "true" : "false") << ", \"ranks_per_gpu\": " << o.ranks_per_gpu
    << ", \"throttle_sync\": " << o.throttle_sync << ", \"graph\": " << (o.graph ? "true" : "false")
    << ", \"datatypes\": " << (o.datatypes ? "true" : "false")
    << ", \"launch_overlap\": " << quoted(run.launch_overlap) << ", \"st_windows\": " << o.st_windows
    << ", \"mode\": " << quoted(o.mode) << "},\n";
  j << "  \"versions\": {\"mpix_st\": \"" << MPIX_ST_VERSION_MAJOR << "." << MPIX_ST_VERSION_MINOR
    << "\", \"backend\": " << quoted(run.backend) << ", \"mpi_library\": " << quoted(run.mpi_library)
    << ", \"nccl\": " << quoted(run.vendor_library) << "},\n";
  j << "  \"devices\": [";
  for (size_t i = 0; i < run.devices.size(); ++i) j << (i ? ", " : "") << quoted(run.devices[i]);
  j << "],\n  \"modes\": [";
  for (size_t i = 0; i < results.size(); ++i) {
    const ModeResult &r = results[i];
    j << (i ? "," : "") << "\n    {\"mode\": " << quoted(r.mode);
    if (!r.skipped.empty()) {
      j << ", \"skipped\": " << quoted(r.skipped) << "}";
      continue;
    }
    j << ", \"detail\": " << quoted(r.detail) << ", \"ranks\": " << r.ranks << ", \"passed\": " << r.passed
      << ", \"timed_blocks\": " << r.timed_blocks << ", \"exchanges_per_block\": " << r.exchanges_per_block
      << ", \"total_s\": " << stats(r.total_s) << ", \"per_exchange_us\": " << stats(r.per_exchange_us)
      << ", \"stream_ops_per_exchange\": {\"library\": " << r.library_ops << ", \"faces\": " << r.faces_ops << "}";
    if (st) j << ", \"ratio_to_st\": " << r.per_exchange_us.avg / st->per_exchange_us.avg;
    j << "}";
  }
  j << "\n  ]\n}\n";
  std::ofstream f(path);
  f << j.str();
  if (!f) {
    std::fprintf(stderr, "faces: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

}  // namespace faces
