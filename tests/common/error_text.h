// The text of the library's error messages, as MPI_Error_string shows it and as the library
// registered it.
//
// The library gives every error a dynamic error code of the right predefined class and sets its
// text with MPI_Add_error_string. Some MPIs cannot show such texts (MPICH 4.0.2 returns codes
// for predefined classes that MPI_Error_string decodes as internal codes, e.g. "Invalid argument,
// error stack: ... inet_pton"). So that message *content* can still be tested there, this header
// records every text the library registers (it interposes PMPI_Add_error_string, which the
// library calls) and error_text() falls back to it unless strict mode asks for MPI_Error_string
// alone. Include it in exactly one translation unit of a program.
#pragma once
#include <dlfcn.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace mpix_test {

inline std::mutex g_text_mu;
inline std::map<int, std::string> g_registered;  // error code -> latest text the library registered
inline bool g_strict_messages = [] {
  const char *e = std::getenv("MPIX_TEST_STRICT_MESSAGES");
  return e && std::strcmp(e, "1") == 0;
}();

inline std::string mpi_error_string(int rc) {
  char msg[MPI_MAX_ERROR_STRING + 1] = {};
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) return "(MPI_Error_string failed)";
  return std::string(msg, static_cast<size_t>(len));
}

// Whether MPI_Error_string shows texts added to codes of predefined classes (probed once).
inline bool mpi_shows_added_strings() {
  static const bool ok = [] {
    int code = MPI_ERR_OTHER;
    if (MPI_Add_error_code(MPI_ERR_OTHER, &code) != MPI_SUCCESS) return false;
    if (MPI_Add_error_string(code, "mpix-test probe") != MPI_SUCCESS) return false;
    return mpi_error_string(code) == "mpix-test probe";
  }();
  return ok;
}

// The message of a library error: MPI_Error_string's text, or (where this MPI cannot show added
// texts, and not in strict mode) the text the library registered for the code.
inline std::string error_text(int rc) {
  std::string s = mpi_error_string(rc);
  if (g_strict_messages || mpi_shows_added_strings()) return s;
  std::lock_guard<std::mutex> lock(g_text_mu);
  auto it = g_registered.find(rc);
  return it == g_registered.end() ? s : it->second;
}

}  // namespace mpix_test

extern "C" int PMPI_Add_error_string(int errorcode, const char *string) {
  using Fn = int (*)(int, const char *);
  static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "PMPI_Add_error_string"));
  if (!real) {
    std::fprintf(stderr, "error_text.h: PMPI_Add_error_string not found\n");
    std::abort();
  }
  {
    std::lock_guard<std::mutex> lock(mpix_test::g_text_mu);
    mpix_test::g_registered[errorcode] = string ? string : "";
  }
  return real(errorcode, string);
}
