#ifdef REMATCH_WITH_MPI
#include "parallel/mpi_world.h"

#include <mpi.h>

#include <string>

#include "tensor/error.h"

namespace rematch::parallel {

MpiWorld mpi_start() {
  MpiWorld w;
  int ready = 0;
  MPI_Initialized(&ready);
  if (!ready) {
    int provided = 0;
    const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    REMATCH_CHECK(rc == MPI_SUCCESS, "MPI_Init_thread failed (code ", rc, "): start the program with mpirun");
    w.owns_init = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &w.local_rank);
  MPI_Comm_free(&local);
  return w;
}

void mpi_stop(const MpiWorld& w) {
  int done = 0;
  MPI_Finalized(&done);
  if (w.owns_init && !done) MPI_Finalize();
}

}  // namespace rematch::parallel
#endif
