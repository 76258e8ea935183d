// models/: the retrieval models built from nn/ — for image–caption matching the SGR and SAF similarity
// networks (docs/backbones.md §2–§4: image encoder, Bi-GRU text encoder, VisualSA/TextSA, text-to-image
// attention, similarity vectors, graph reasoning or attention filtration, sigmoid head) with the whole
// B_img × B_cap score matrix computed in one batched, masked pass; SGRAF as the average of an SGR and a SAF
// score matrix; reading their checkpoints (rematch's own and converted official ones). Also RCSL's global
// VSE model and its augmentations, UOT-RCL's MLP + prototype model and L2RM's cost net.
// It does not train anything: losses, optimisers, data, noise and evaluation loops belong to train/ (and nn/
// for the losses); models/ only maps tensors to scores and holds parameters under PyTorch's names.
#pragma once

#include "models/attention.h"
#include "models/augment.h"
#include "models/cost_net.h"
#include "models/dscmr_model.h"
#include "models/image_encoder.h"
#include "models/local_similarity.h"
#include "models/mlp_prototype.h"
#include "models/padding.h"
#include "models/saf.h"
#include "models/sdml_model.h"
#include "models/sgr.h"
#include "models/sgraf_checkpoint.h"
#include "models/sgraf_config.h"
#include "models/sgraf_model.h"
#include "models/similarity_encoder.h"
#include "models/text_encoder.h"
#include "models/text_sa.h"
#include "models/visual_sa.h"
#include "models/vse_model.h"
#include "models/xavier_linear.h"
