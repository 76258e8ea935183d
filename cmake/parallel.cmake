# parallel/: the communicator of multi-process runs (parallel/communicator.h, docs/distributed.md). Backends: none (always),
# mpi (REMATCH_MPI: Open MPI, Debian's libopenmpi-dev) and nccl (REMATCH_NCCL: NCCL from the CUDA toolkit, with the
# CUDA backend and MPI, which starts the processes and carries NCCL's id). AUTO builds a backend when found.
set(REMATCH_MPI AUTO CACHE STRING "Build the MPI backend of parallel/: AUTO (when MPI is found), ON or OFF")
set_property(CACHE REMATCH_MPI PROPERTY STRINGS AUTO ON OFF)
set(REMATCH_NCCL AUTO CACHE STRING "Build the NCCL backend of parallel/: AUTO (with CUDA and MPI, when NCCL is found), ON or OFF")
set_property(CACHE REMATCH_NCCL PROPERTY STRINGS AUTO ON OFF)

file(GLOB REMATCH_PARALLEL_SOURCES CONFIGURE_DEPENDS parallel/*.cpp)
add_library(rematch_parallel STATIC ${REMATCH_PARALLEL_SOURCES})
target_link_libraries(rematch_parallel PUBLIC rematch)
target_compile_options(rematch_parallel PRIVATE -Wall -Wextra -Wno-unused-parameter)

set(REMATCH_WITH_MPI OFF)
if(NOT REMATCH_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS CXX QUIET)
  if(MPI_CXX_FOUND)
    set(REMATCH_WITH_MPI ON)
    target_link_libraries(rematch_parallel PUBLIC MPI::MPI_CXX)
    target_compile_definitions(rematch_parallel PUBLIC REMATCH_WITH_MPI=1)
    # The C API only: Open MPI's deprecated C++ bindings warn under -Wextra and are not used.
    target_compile_definitions(rematch_parallel PRIVATE OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
  elseif(REMATCH_MPI STREQUAL "ON")
    message(FATAL_ERROR "REMATCH_MPI=ON but no MPI was found (Debian: apt-get install libopenmpi-dev openmpi-bin)")
  endif()
endif()

set(REMATCH_WITH_NCCL OFF)
if(NOT REMATCH_NCCL STREQUAL "OFF" AND REMATCH_WITH_CUDA AND NOT REMATCH_CUDA_EMULATED AND REMATCH_WITH_MPI)
  find_path(REMATCH_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  find_library(REMATCH_NCCL_LIB NAMES nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
  if(REMATCH_NCCL_INCLUDE AND REMATCH_NCCL_LIB)
    set(REMATCH_WITH_NCCL ON)
    target_include_directories(rematch_parallel PRIVATE ${REMATCH_NCCL_INCLUDE})
    # Not linked: parallel/nccl_api.cpp loads libnccl with dlopen when the nccl backend first starts (a CUDA build's
    # commands do not pay its load at start-up); the folder found here is one place it looks.
    get_filename_component(REMATCH_NCCL_DIR "${REMATCH_NCCL_LIB}" DIRECTORY)
    target_compile_definitions(rematch_parallel PRIVATE REMATCH_NCCL_DIR="${REMATCH_NCCL_DIR}")
    target_link_libraries(rematch_parallel PRIVATE CUDA::cudart)
    target_compile_definitions(rematch_parallel PUBLIC REMATCH_WITH_NCCL=1)
  endif()
endif()
# Under the CUDA emulator (docs/cuda_emulator.md) the backend is built on the emulator's NCCL, libnccl.so.emu
# (tools/cuda_emu/nccl.cpp): the same source, opened from the build's cuda_emu_lib/.
if(NOT REMATCH_NCCL STREQUAL "OFF" AND REMATCH_CUDA_EMULATED AND REMATCH_WITH_MPI AND TARGET rematch_nccl_emu)
  set(REMATCH_WITH_NCCL ON)
  add_dependencies(rematch_parallel rematch_nccl_emu)
  target_compile_definitions(rematch_parallel PRIVATE REMATCH_NCCL_DIR="${CMAKE_BINARY_DIR}/cuda_emu_lib")
  target_compile_definitions(rematch_parallel PUBLIC REMATCH_WITH_NCCL=1)
endif()
if(REMATCH_NCCL STREQUAL "ON" AND NOT REMATCH_WITH_NCCL)
  message(FATAL_ERROR "REMATCH_NCCL=ON needs the CUDA backend, MPI and NCCL (nccl.h, libnccl under the CUDA root)")
endif()
message(STATUS "rematch: parallel backends: none, mpi ${REMATCH_WITH_MPI}, nccl ${REMATCH_WITH_NCCL}")
