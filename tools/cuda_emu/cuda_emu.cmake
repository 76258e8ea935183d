# The CUDA emulator (docs/cuda_emulator.md), included by CMakeLists.txt when REMATCH_CUDA=EMULATE: each CUDA
# source and header of tensor/, ot/ and nn/ is translated to C++ by translate.py into <build>/cuda_emu_src/ (same
# relative paths, found first for quoted includes through -iquote) and compiled with the emulator's headers in
# place of the toolkit's; the runtime is the static library rematch_cuda_emu and cuBLAS is libcublas.so.emu,
# opened with dlopen as the real one is.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
set(REMATCH_EMU_DIR ${CMAKE_CURRENT_SOURCE_DIR}/tools/cuda_emu)
set(REMATCH_EMU_SRC ${CMAKE_CURRENT_BINARY_DIR}/cuda_emu_src)
file(GLOB REMATCH_CUDA_HEADERS CONFIGURE_DEPENDS tensor/cuda/*.cuh ot/cuda/*.cuh nn/cuda/*.cuh)

set(translated_headers "")
foreach(header ${REMATCH_CUDA_HEADERS})
  file(RELATIVE_PATH rel ${CMAKE_CURRENT_SOURCE_DIR} ${header})
  set(out ${REMATCH_EMU_SRC}/${rel})
  get_filename_component(out_dir ${out} DIRECTORY)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
    COMMAND ${Python3_EXECUTABLE} ${REMATCH_EMU_DIR}/translate.py ${rel} ${out}
    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
    DEPENDS ${header} ${REMATCH_EMU_DIR}/translate.py
    COMMENT "cuda emulator: translating ${rel}")
  list(APPEND translated_headers ${out})
endforeach()
add_custom_target(rematch_cuda_emu_headers DEPENDS ${translated_headers})

set(translated_sources "")
foreach(source ${REMATCH_CUDA_SOURCES})
  file(RELATIVE_PATH rel ${CMAKE_CURRENT_SOURCE_DIR} ${source})
  set(out ${REMATCH_EMU_SRC}/${rel}.cpp)
  get_filename_component(out_dir ${out} DIRECTORY)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
    COMMAND ${Python3_EXECUTABLE} ${REMATCH_EMU_DIR}/translate.py ${rel} ${out}
    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
    DEPENDS ${source} ${REMATCH_EMU_DIR}/translate.py
    COMMENT "cuda emulator: translating ${rel}")
  set_source_files_properties(${out} PROPERTIES
    COMPILE_OPTIONS "-iquote;${REMATCH_EMU_SRC};-include;cuda_runtime.h;-Wno-unused-variable")
  list(APPEND translated_sources ${out})
endforeach()
set(REMATCH_CUDA_SOURCES ${translated_sources})
# cuBLAS is opened from here (tensor/cuda/cublas_api.cu's REMATCH_CUBLAS_DIR).
set_property(SOURCE ${REMATCH_EMU_SRC}/tensor/cuda/cublas_api.cu.cpp APPEND PROPERTY
  COMPILE_DEFINITIONS "REMATCH_CUBLAS_DIR=\"${CMAKE_CURRENT_BINARY_DIR}/cuda_emu_lib\"")

add_library(rematch_cuda_emu STATIC ${REMATCH_EMU_DIR}/launch.cpp ${REMATCH_EMU_DIR}/runtime_api.cpp)
target_include_directories(rematch_cuda_emu PUBLIC $<BUILD_INTERFACE:${REMATCH_EMU_DIR}/include>
                                            PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_options(rematch_cuda_emu PRIVATE -Wall -Wextra -Wno-unused-parameter)
set_target_properties(rematch_cuda_emu PROPERTIES POSITION_INDEPENDENT_CODE ON)

add_library(rematch_cublas_emu SHARED ${REMATCH_EMU_DIR}/cublas.cpp)
target_include_directories(rematch_cublas_emu PRIVATE ${REMATCH_EMU_DIR}/include)
set_target_properties(rematch_cublas_emu PROPERTIES OUTPUT_NAME cublas SUFFIX ".so.emu"
                      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/cuda_emu_lib)

function(rematch_cuda_emu_link target)
  target_link_libraries(${target} PUBLIC rematch_cuda_emu)
  target_compile_definitions(${target} PUBLIC REMATCH_WITH_CUDA=1)
  add_dependencies(${target} rematch_cuda_emu_headers rematch_cublas_emu)
endfunction()
if(REMATCH_SANITIZE)  # the fibers tell AddressSanitizer about their stacks (launch.cpp)
  target_compile_options(rematch_cuda_emu PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
endif()
