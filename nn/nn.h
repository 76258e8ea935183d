// nn/: the building blocks of models and their training. Module (named parameters and buffers, PyTorch
// state-dict names, train/eval) and the layers the backbones use — Linear, Embedding, GRU/BiGRU,
// BatchNorm1d, Dropout, activations — their initialisers, the losses and similarity functions, optimizers,
// learning-rate schedules, gradient clipping, and safetensors checkpoints.
// It does not define the retrieval models (models/) or the training methods and data (train/). Layers are
// written from the differentiable op API of autograd/; only the GRU has fused kernels of its own (nn/cpu/gru.cpp,
// nn/cuda/gru.cu).
#pragma once

#include "nn/activations.h"
#include "nn/batchnorm.h"
#include "nn/checkpoint.h"
#include "nn/clip_grad.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/functional.h"
#include "nn/gru.h"
#include "nn/init.h"
#include "nn/linear.h"
#include "nn/lr_schedule.h"
#include "nn/module.h"
#include "nn/optim.h"
#include "nn/safetensors.h"
