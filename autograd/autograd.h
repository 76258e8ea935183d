// autograd/: reverse-mode automatic differentiation over tensor/. The differentiable op API (ops.h), the
// graph (node.h, record.h), the backward engine with grad() and derivatives of any order (create_graph), grad
// mode and anomaly mode, and gradcheck / gradgradcheck.
// It knows nothing of modules, parameters or optimizers (nn/).
#pragma once

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/gradcheck.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/record.h"
#include "tensor/tensor.h"
