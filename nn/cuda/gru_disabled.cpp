// CPU-only build: the CUDA kernels of nn/cuda/gru_kernels.h do not exist. No CUDA tensor can be made in such a
// build (allocation fails first, tensor/cuda/runtime_disabled.cpp), so these only satisfy the linker and say
// why if ever reached.
#include "nn/cuda/gru_kernels.h"

namespace rematch::nn::gru_cuda {
namespace {
[[noreturn]] void no_cuda() { REMATCH_FAIL("nn::GRU on CUDA: rematch was built without CUDA (REMATCH_CUDA=OFF)"); }
}  // namespace

Layer prepare(const gru_cpu::Packing&, const Tensor&, const std::vector<gru_cpu::DirectionWeights>&) { no_cuda(); }
LayerOutputs forward(Layer&, bool) { no_cuda(); }
LayerGrads backward(const Layer&, const Tensor&, const Tensor&, bool, bool) { no_cuda(); }

}  // namespace rematch::nn::gru_cuda
