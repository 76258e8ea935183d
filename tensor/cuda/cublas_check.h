// Check for cuBLAS calls: a failure names the call, file:line and cuBLAS's status name and message. The calls
// go through cuda::cublas() (tensor/cuda/cublas_api.h: the library is loaded on first use).
#pragma once

#include "tensor/cuda/cublas_api.h"
#include "tensor/error.h"

#define REMATCH_CUBLAS_CHECK(call)                                                                         \
  do {                                                                                                     \
    cublasStatus_t status_ = (call);                                                                       \
    if (status_ != CUBLAS_STATUS_SUCCESS)                                                                  \
      REMATCH_FAIL("cuBLAS error at ", __FILE__, ":", __LINE__, ": ", #call, " failed: ",                  \
                   ::rematch::cuda::cublas().status_name(status_), " (",                                   \
                   ::rematch::cuda::cublas().status_string(status_), ")");                                 \
  } while (0)
