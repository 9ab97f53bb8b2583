// Core functions report failures as values; the API layer raises them through MPI error handlers.
#pragma once
#include <mpi.h>

#include <string>
#include <utility>

namespace mpix::core {

struct Result {
  int mpi_class = MPI_SUCCESS;
  std::string message;
  explicit operator bool() const { return mpi_class != MPI_SUCCESS; }  // true: an error
};

inline Result ok() { return {}; }
inline Result fail(int mpi_class, std::string message) { return Result{mpi_class, std::move(message)}; }

// Error class for exhausted library resources, created on first use (MPI_Add_error_class).
int resource_error_class();

}  // namespace mpix::core
