// MPI's start and end, shared by the mpi and nccl backends (NCCL uses MPI to start its processes and carry its
// id): MPI_Init_thread unless someone already did, the rank, the world size and the rank on this machine.
#pragma once

#ifdef REMATCH_WITH_MPI
namespace rematch::parallel {

struct MpiWorld {
  int rank = 0, size = 1, local_rank = 0;
  bool owns_init = false;  // this process called MPI_Init_thread, so it calls MPI_Finalize
};

MpiWorld mpi_start();
void mpi_stop(const MpiWorld& w);

}  // namespace rematch::parallel
#endif
