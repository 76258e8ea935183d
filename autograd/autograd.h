// autograd/: reverse-mode automatic differentiation over tensor/. The differentiable op API (ops.h), the
// graph (node.h, record.h), the backward engine, grad mode and anomaly mode, and gradcheck.
// It knows nothing of modules, parameters or optimizers (nn/).
#pragma once

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/gradcheck.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/record.h"
#include "tensor/tensor.h"
