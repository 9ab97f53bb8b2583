#include "errors.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/window.h"
#include "mpix/mpix_st.h"

namespace mpix {
namespace {
std::mutex g_mu;
std::map<int, std::string> g_message_of;  // the library's code -> its message

// Distinct errors get distinct codes, so a code a program kept still reads its own message after
// later errors of the same class. Each error class has a ring of up to kCodesPerClass dynamic
// codes (MPI's code space is finite): a message already held by a code of the class gets that
// code again; a new one takes the next code of the ring, replacing its message only after
// kCodesPerClass other messages of the class. MPICH 4.0 prints no usable text for codes added to
// predefined classes, so MPI_Error_string is interposed below for these codes.
constexpr size_t kCodesPerClass = 64;
struct ClassCodes {
  std::vector<int> codes;
  size_t next = 0;  // the ring's next code to reuse once it is full
};
std::map<int, ClassCodes> g_codes_of_class;

int code_for(const core::Result &r) {
  std::string msg = "mpix-st: " + r.message;
  if (msg.size() >= MPI_MAX_ERROR_STRING) msg.resize(MPI_MAX_ERROR_STRING - 1);
  std::lock_guard<std::mutex> lock(g_mu);
  ClassCodes &cc = g_codes_of_class[r.mpi_class];
  for (int code : cc.codes)
    if (g_message_of[code] == msg) return code;
  int code = r.mpi_class;
  if (cc.codes.size() < kCodesPerClass && PMPI_Add_error_code(r.mpi_class, &code) == MPI_SUCCESS) {
    cc.codes.push_back(code);
  } else if (!cc.codes.empty()) {  // the ring is full (or MPI has no code left): reuse the oldest
    code = cc.codes[cc.next];
    cc.next = (cc.next + 1) % cc.codes.size();
  } else {
    code = r.mpi_class;  // no code at all: the class itself, whose text is then this message
  }
  if (code != r.mpi_class) PMPI_Add_error_string(code, msg.c_str());
  g_message_of[code] = std::move(msg);
  return code;
}
}  // namespace

namespace {
std::atomic<int> g_resource_class{MPI_SUCCESS};  // MPI_SUCCESS until created
}  // namespace

int core::resource_error_class() {
  // Created once MPI runs; asked before MPI_Init or after MPI_Finalize without one, the answer is
  // MPI_ERR_OTHER, and the class is still created by a later call.
  static std::mutex mu;
  static int cls = MPI_SUCCESS;
  std::lock_guard<std::mutex> lock(mu);
  if (cls != MPI_SUCCESS) return cls;
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (!initialized || finalized) return MPI_ERR_OTHER;
  int c = MPI_ERR_OTHER;
  if (PMPI_Add_error_class(&c) != MPI_SUCCESS) return MPI_ERR_OTHER;
  PMPI_Add_error_string(c, "mpix-st: a library resource is exhausted");
  cls = c;
  g_resource_class = c;
  return cls;
}

namespace api {

// MPI_ERRORS_ABORT is MPI-4; an MPI-3.1 library (Open MPI 4, Cray MPICH 8) has only ERRORS_ARE_FATAL.
static bool is_fatal(MPI_Errhandler handler) {
#if MPI_VERSION >= 4
  if (handler == MPI_ERRORS_ABORT) return true;
#endif
  return handler == MPI_ERRORS_ARE_FATAL;
}

// A fatal handler aborts before anyone can ask for the message (and MPICH prints no text of its own
// for dynamic codes), so the message goes to stderr first.
void print_if_fatal(MPI_Errhandler handler, const core::Result &r) {
  if (is_fatal(handler))
    std::fprintf(stderr, "mpix-st: %s\n", r.message.c_str());
  if (handler != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&handler);
}

// Before MPI_Init and after MPI_Finalize no error handler can be called (nor an error code
// added): the message goes to stderr and the call returns the error class itself.
bool outside_mpi(const core::Result &r) {
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (initialized && !finalized) return false;
  std::fprintf(stderr, "mpix-st: %s\n", r.message.c_str());
  return true;
}

int raise_win(MPI_Win win, const core::Result &r) {
  if (!r) return MPI_SUCCESS;
  if (outside_mpi(r)) return r.mpi_class;
  // A stale handle has no error handler left to call.
  if (win == MPI_WIN_NULL || core::window_was_freed(win)) return raise_no_object(r);
  int code = code_for(r);
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  PMPI_Win_get_errhandler(win, &handler);
  print_if_fatal(handler, r);
  PMPI_Win_call_errhandler(win, code);
  return code;
}

int raise_comm(MPI_Comm comm, const core::Result &r) {
  if (!r) return MPI_SUCCESS;
  if (outside_mpi(r)) return r.mpi_class;
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

// Every error class is also an error code of that class (MPI-3.1 §8.5), but Open MPI 4 answers
// MPI_ERR_UNKNOWN for a class made by MPI_Add_error_class: the library's class is answered here.
extern "C" int MPI_Error_class(int code, int *error_class) {
  const int resource = mpix::g_resource_class.load();
  if (error_class && resource != MPI_SUCCESS && code == resource) {
    *error_class = code;
    return MPI_SUCCESS;
  }
  return PMPI_Error_class(code, error_class);
}

extern "C" int MPI_Error_string(int code, char *text, int *len) {
  {
    std::lock_guard<std::mutex> lock(mpix::g_mu);
    auto it = mpix::g_message_of.find(code);
    if (it != mpix::g_message_of.end() && text && len) {
      std::snprintf(text, MPI_MAX_ERROR_STRING, "%s", it->second.c_str());
      *len = static_cast<int>(std::strlen(text));
      return MPI_SUCCESS;
    }
  }
  return PMPI_Error_string(code, text, len);
}
