// In-place forms of the elementwise family, for backward passes that would otherwise hold one more temporary
// of the same size (models/local_similarity.cpp): dst = op(dst), dst = dst op s, dst = dst op b (b broadcast to
// dst's shape). They run the same functors as kernels::unary, scalar_op and binary (tensor/kernels.h), so they
// give the same bits. dst must be contiguous (no element written twice) and of the op's result dtype; b must be
// of dst's dtype and device and must not share dst's storage. Defined in tensor/elementwise.cpp.
#pragma once

#include "tensor/kernels.h"

namespace rematch::kernels {

void unary_(UnaryOp op, const Tensor& dst);
void scalar_op_(ScalarOp op, const Tensor& dst, double s);
void binary_(BinaryOp op, const Tensor& dst, const Tensor& b);

}  // namespace rematch::kernels
