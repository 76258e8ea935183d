// The error of the dtype dispatch helpers of tensor/dtype.h.
#include "tensor/dtype.h"

#include "tensor/error.h"

namespace rematch {

void throw_dtype_unsupported(const char* op, DType t, const char* expected) {
  REMATCH_FAIL(op, ": dtype ", dtype_name(t), " is not supported (expected ", expected, ")");
}

}  // namespace rematch
