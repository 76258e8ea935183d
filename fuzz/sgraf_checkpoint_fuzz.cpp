// SGR/SAF model files (models/sgraf_checkpoint.cpp), as `rematch eval` and `rematch score` read them: rematch
// checkpoints, run training states and converted official checkpoints. read_sgraf_file, then load_sgraf_model;
// a model that loads scores one image against two captions, so weights the reader let through (NaN, huge)
// go through every layer.
#include "fuzz/fuzz_util.h"
#include "models/sgraf_checkpoint.h"

using namespace rematch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_file("input.safetensors", fuzz::bytes(data, size));
  fuzz::reads_or_names(path, [&] { models::read_sgraf_file(path); });
  std::unique_ptr<models::SgrafModel> model;
  if (!fuzz::reads_or_names(path, [&] { model = models::load_sgraf_model(path); })) return 0;
  const models::SgrafConfig& c = model->config();
  NoGradGuard no_grad;
  const Tensor regions = full({1, c.num_regions, c.img_dim}, 0.5);
  std::vector<int64_t> words(6);
  for (size_t i = 0; i < words.size(); ++i) words[i] = static_cast<int64_t>(i) % c.vocab_size;
  const Tensor ids = from_vector(words, {2, 3});
  const Tensor lengths = from_vector<int64_t>({3, 2}, {2});
  const Tensor scores = (*model)(regions, ids, lengths);
  if (scores.sizes() != Shape{1, 2}) fuzz::fail("the score matrix is " + scores.describe() + ", expected [1, 2]");
  return 0;
}
