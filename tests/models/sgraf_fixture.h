// The toy SGR/SAF networks of tests/fixtures/sgraf (tests/reference/sgraf_reference.py's DIMS), shared by the
// tests that load them: sgraf_golden_test.cpp and hvp_golden_test.cpp.
#pragma once

#include "models/sgraf_config.h"

namespace rematch::models {

inline SgrafConfig sgraf_fixture_config(SimilarityModule module) {
  SgrafConfig c;
  c.module = module;
  c.vocab_size = 30;
  c.img_dim = 12;
  c.word_dim = 10;
  c.embed_size = 16;
  c.sim_dim = 8;
  c.num_regions = 6;
  c.sgr_step = 3;
  c.dropout = 0.0;
  return c;
}

}  // namespace rematch::models
