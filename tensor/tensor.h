// tensor/: the Tensor handle, storage and devices, dtypes, views, creation, Philox random numbers, .npy I/O,
// and the backend primitives (kernels::) with their CPU and CUDA implementations.
// It does not record gradients: the differentiable op API lives in autograd/autograd.h.
#pragma once

#include "tensor/creation.h"
#include "tensor/device.h"
#include "tensor/dtype.h"
#include "tensor/error.h"
#include "tensor/kernels.h"
#include "tensor/npy.h"
#include "tensor/random.h"
#include "tensor/tensor_core.h"
