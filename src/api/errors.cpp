#include "errors.h"

#include <cstdio>
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

// A fatal handler aborts before anyone can ask for the message (and MPICH prints no text of its own
// for dynamic codes), so the message goes to stderr first.
void print_if_fatal(MPI_Errhandler handler, const core::Result &r) {
  if (handler == MPI_ERRORS_ARE_FATAL || handler == MPI_ERRORS_ABORT)
    std::fprintf(stderr, "mpix-st: %s\n", r.message.c_str());
  if (handler != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&handler);
}

int raise_win(MPI_Win win, const core::Result &r) {
  if (!r) return MPI_SUCCESS;
  if (win == MPI_WIN_NULL) return raise_no_object(r);
  int code = code_for(r);
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  PMPI_Win_get_errhandler(win, &handler);
  print_if_fatal(handler, r);
  PMPI_Win_call_errhandler(win, code);
  return code;
}

int raise_comm(MPI_Comm comm, const core::Result &r) {
  if (!r) return MPI_SUCCESS;
  if (comm == MPI_COMM_NULL) comm = MPI_COMM_SELF;
  int code = code_for(r);
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  PMPI_Comm_get_errhandler(comm, &handler);
  print_if_fatal(handler, r);
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

int raise_no_object(const core::Result &r) { return raise_comm(MPI_COMM_SELF, r); }

}  // namespace api
}  // namespace mpix

extern "C" int MPIX_St_error_class_resource(void) { return mpix::core::resource_error_class(); }
