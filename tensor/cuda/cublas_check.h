// Check for cuBLAS calls: a failure names the call, file:line and cuBLAS's status name and message.
#pragma once

#include <cublas_v2.h>

#include "tensor/error.h"

#define REMATCH_CUBLAS_CHECK(call)                                                                         \
  do {                                                                                                     \
    cublasStatus_t status_ = (call);                                                                       \
    if (status_ != CUBLAS_STATUS_SUCCESS)                                                                  \
      REMATCH_FAIL("cuBLAS error at ", __FILE__, ":", __LINE__, ": ", #call, " failed: ",                  \
                   cublasGetStatusName(status_), " (", cublasGetStatusString(status_), ")");               \
  } while (0)
