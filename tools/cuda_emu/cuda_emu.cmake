# The CUDA emulator (docs/cuda_emulator.md), included by CMakeLists.txt in every configuration:
# - always (when Python 3 is found): the emulator's runtime, the static library rematch_cuda_emu; its cuBLAS,
#   libcublas.so.emu; its NCCL, libnccl.so.emu; and rematch_cuda_emu_translate(), which translates CUDA sources to C++ with translate.py
#   (tests/cuda_emu/ checks the emulator itself with them);
# - with REMATCH_CUDA=EMULATE: each CUDA source and header of tensor/, ot/ and nn/ translated into
#   <build>/cuda_emu_src/ (same relative paths, found first for quoted includes through -iquote), and
#   REMATCH_CUDA_SOURCES set to the translations, which rematch then compiles as C++.
if(REMATCH_CUDA_EMULATED)
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
else()
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(NOT Python3_Interpreter_FOUND)
    return()
  endif()
endif()
set(REMATCH_EMU_DIR ${CMAKE_CURRENT_SOURCE_DIR}/tools/cuda_emu)
set(REMATCH_EMU_SRC ${CMAKE_CURRENT_BINARY_DIR}/cuda_emu_src)

add_library(rematch_cuda_emu STATIC ${REMATCH_EMU_DIR}/launch.cpp ${REMATCH_EMU_DIR}/fiber_stack.cpp
                                   ${REMATCH_EMU_DIR}/kernel_attributes.cpp
                                   ${REMATCH_EMU_DIR}/runtime_api.cpp ${REMATCH_EMU_DIR}/digest.cpp)
target_include_directories(rematch_cuda_emu PUBLIC $<BUILD_INTERFACE:${REMATCH_EMU_DIR}/include>
                                            PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_options(rematch_cuda_emu PRIVATE -Wall -Wextra -Wno-unused-parameter)
set_target_properties(rematch_cuda_emu PROPERTIES POSITION_INDEPENDENT_CODE ON)
if(REMATCH_SANITIZE OR REMATCH_FUZZ)  # the fibers tell AddressSanitizer about their stacks (launch.cpp)
  target_compile_options(rematch_cuda_emu PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
endif()

add_library(rematch_cublas_emu SHARED ${REMATCH_EMU_DIR}/cublas.cpp)
target_include_directories(rematch_cublas_emu PRIVATE ${REMATCH_EMU_DIR}/include)
set_target_properties(rematch_cublas_emu PROPERTIES OUTPUT_NAME cublas SUFFIX ".so.emu"
                      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/cuda_emu_lib)
# Its NCCL, libnccl.so.emu (ranks are processes of this machine; cmake/parallel.cmake builds the nccl backend on
# it when MPI is on).
add_library(rematch_nccl_emu SHARED ${REMATCH_EMU_DIR}/nccl.cpp)
target_include_directories(rematch_nccl_emu PRIVATE ${REMATCH_EMU_DIR}/include)
target_compile_options(rematch_nccl_emu PRIVATE -Wall -Wextra)
target_link_libraries(rematch_nccl_emu PRIVATE rt)
if(REMATCH_SANITIZE OR REMATCH_FUZZ)  # tests/cuda_emu/nccl_emulator_test.cpp runs under them
  target_compile_options(rematch_nccl_emu PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
  target_link_options(rematch_nccl_emu PRIVATE -fsanitize=address,undefined)
endif()
set_target_properties(rematch_nccl_emu PROPERTIES OUTPUT_NAME nccl SUFFIX ".so.emu"
                      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/cuda_emu_lib)

# rematch_cuda_emu_translate(OUT_VAR SOURCE...): OUT_VAR = the C++ translations of the CUDA sources SOURCE...
# (paths relative to the top source folder), to compile with the emulator's headers.
function(rematch_cuda_emu_translate out_var)
  set(outputs "")
  foreach(rel ${ARGN})
    if(rel MATCHES "\\.cu$")
      set(out ${REMATCH_EMU_SRC}/${rel}.cpp)
    else()
      set(out ${REMATCH_EMU_SRC}/${rel})
    endif()
    get_filename_component(out_dir ${out} DIRECTORY)
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
      COMMAND ${Python3_EXECUTABLE} ${REMATCH_EMU_DIR}/translate.py ${rel} ${out}
      WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
      DEPENDS ${CMAKE_SOURCE_DIR}/${rel} ${REMATCH_EMU_DIR}/translate.py
      COMMENT "cuda emulator: translating ${rel}")
    if(rel MATCHES "\\.cu$")
      set_source_files_properties(${out} PROPERTIES
        COMPILE_OPTIONS "-iquote;${REMATCH_EMU_SRC};-include;cuda_runtime.h;-Wno-unused-variable")
    endif()
    list(APPEND outputs ${out})
  endforeach()
  set(${out_var} ${outputs} PARENT_SCOPE)
endfunction()

if(NOT REMATCH_CUDA_EMULATED)
  return()
endif()

file(GLOB REMATCH_CUDA_HEADERS CONFIGURE_DEPENDS RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}
  tensor/cuda/*.cuh ot/cuda/*.cuh nn/cuda/*.cuh)
rematch_cuda_emu_translate(translated_headers ${REMATCH_CUDA_HEADERS})
add_custom_target(rematch_cuda_emu_headers DEPENDS ${translated_headers})

set(relative_sources "")
foreach(source ${REMATCH_CUDA_SOURCES})
  file(RELATIVE_PATH rel ${CMAKE_CURRENT_SOURCE_DIR} ${source})
  list(APPEND relative_sources ${rel})
endforeach()
rematch_cuda_emu_translate(REMATCH_CUDA_SOURCES ${relative_sources})
# cuBLAS is opened from here (tensor/cuda/cublas_api.cu's REMATCH_CUBLAS_DIR).
set_property(SOURCE ${REMATCH_EMU_SRC}/tensor/cuda/cublas_api.cu.cpp APPEND PROPERTY
  COMPILE_DEFINITIONS "REMATCH_CUBLAS_DIR=\"${CMAKE_CURRENT_BINARY_DIR}/cuda_emu_lib\"")

function(rematch_cuda_emu_link target)
  target_link_libraries(${target} PUBLIC rematch_cuda_emu)
  target_compile_definitions(${target} PUBLIC REMATCH_WITH_CUDA=1)
  add_dependencies(${target} rematch_cuda_emu_headers rematch_cublas_emu)
endfunction()
