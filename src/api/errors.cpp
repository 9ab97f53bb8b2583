#include "errors.h"

#include <map>
#include <mutex>
#include <string>

#include "mpix/mpix_st.h"

namespace mpix {
namespace {
std::mutex g_mu;

// One dynamic error code per error class; its string is the latest message of that class, which
// is what MPI_Error_string reports for the code returned to the caller.
int code_for(const core::Result &r) {
  std::lock_guard<std::mutex> lock(g_mu);
  static std::map<int, int> codes;
  auto it = codes.find(r.mpi_class);
  if (it == codes.end()) {
    int code = r.mpi_class;
    if (PMPI_Add_error_code(r.mpi_class, &code) != MPI_SUCCESS) return r.mpi_class;
    it = codes.emplace(r.mpi_class, code).first;
  }
  std::string msg = "mpix-st: " + r.message;
  if (msg.size() >= MPI_MAX_ERROR_STRING) msg.resize(MPI_MAX_ERROR_STRING - 1);
  PMPI_Add_error_string(it->second, msg.c_str());
  return it->second;
}
}  // namespace

int core::resource_error_class() {
  static const int cls = [] {
    int c = MPI_ERR_OTHER;
    if (PMPI_Add_error_class(&c) == MPI_SUCCESS)
      PMPI_Add_error_string(c, "mpix-st: a library resource is exhausted");
    return c;
  }();
  return cls;
}

namespace api {

int raise_win(MPI_Win win, const core::Result &r) {
  if (!r) return MPI_SUCCESS;
  if (win == MPI_WIN_NULL) return raise_no_object(r);
  int code = code_for(r);
  PMPI_Win_call_errhandler(win, code);
  return code;
}

int raise_comm(MPI_Comm comm, const core::Result &r) {
  if (!r) return MPI_SUCCESS;
  int code = code_for(r);
  PMPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_SELF : comm, code);
  return code;
}

int raise_no_object(const core::Result &r) { return raise_comm(MPI_COMM_SELF, r); }

}  // namespace api
}  // namespace mpix

extern "C" int MPIX_St_error_class_resource(void) { return mpix::core::resource_error_class(); }
