// MPI_Init under the environment the test gives (tests/settings/settings_init.cmake runs it): a
// setting the table refuses makes MPI_Init raise MPI_ERR_ARG through MPI_COMM_WORLD's error
// handler, the default fatal one, so the library prints the message and the job aborts. A process
// that gets past MPI_Init says so and exits 0, which the driver counts as a failure wherever a
// refusal was expected.
#include <mpi.h>

#include <cstdio>

int main(int argc, char **argv) {
  const int rc = MPI_Init(&argc, &argv);
  int rank = 0;
  if (rc == MPI_SUCCESS) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::printf("settings_init: rank %d: MPI_Init returned %d\n", rank, rc);
  std::fflush(stdout);
  if (rc == MPI_SUCCESS) MPI_Finalize();
  return rc == MPI_SUCCESS ? 0 : 1;
}
