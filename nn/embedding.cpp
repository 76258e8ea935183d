#include "nn/embedding.h"

#include "nn/init.h"

namespace rematch::nn {

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim, DType dtype, Generator* gen)
    : num_(num_embeddings), dim_(embedding_dim) {
  name_ = "Embedding(" + std::to_string(num_) + ", " + std::to_string(dim_) + ")";
  REMATCH_CHECK(num_ > 0 && dim_ > 0, name_, ": sizes must be positive");
  REMATCH_CHECK(is_floating(dtype), name_, ": dtype must be float32 or float64, got ", dtype_name(dtype));
  weight_ = register_parameter("weight", empty({num_, dim_}, dtype));
  normal_(weight_, 0.0, 1.0, gen);
}

Tensor Embedding::forward(const Tensor& ids) {
  REMATCH_CHECK(ids.defined() && is_index_dtype(ids.dtype()), name_, ": ids must be an int32 or int64 tensor, got ",
                ids.defined() ? ids.describe() : "undefined");
  try {
    return embedding(weight_, ids);
  } catch (const Error& e) {
    // The op's message says which id is out of range; prefix the module so the caller knows which table.
    REMATCH_FAIL(name_, ": ", e.what());
  }
}

}  // namespace rematch::nn
