// Features and scores checked for NaN and Inf where they are loaded, before any model sees them: a model can
// turn a NaN row into scores that look finite (SAF scores such an image 0.502 against every caption), after
// which validation, evaluation and retrieval would rank garbage without a word.
#pragma once

#include <string>

#include "tensor/tensor.h"

namespace rematch::data {

// Fails unless every value of the float tensor `t` ([rows, ...], float32 or float64, on the host) is finite:
// "<what> '<path>': <row_word> 17 holds nan (element [17, 3, 5]); <advice>", naming the first such row. Other
// dtypes hold no NaN and pass.
void check_finite_rows(const Tensor& t, const std::string& what, const std::string& path, const std::string& row_word,
                       const std::string& advice);

// Fails unless every value of the float64 tensor `t` (on the host) fits float32, the type the data is cast to
// when loaded: "<what> '<path>': <row_word> 1 holds 1e+300 (element [1, 2]), beyond float32's range ...",
// naming the first such row. A value that does not fit would become inf in the cast, after the finite check of
// the file's own values (train/data/labeled_dataset.cpp). Other dtypes pass.
void check_float32_range(const Tensor& t, const std::string& what, const std::string& path,
                         const std::string& row_word, const std::string& advice);

}  // namespace rematch::data
