#include "train/methods/rcsl/memory_bank.h"

#include <algorithm>

#include "autograd/autograd.h"

namespace rematch::train::rcsl {
namespace {

// For every row of `queries` [Q, E]: the index and value of its largest similarity with `keys` [K, E], computed
// in blocks of `block` query rows. Only rows with want[row] are searched; the others keep index −1.
void nearest_neighbours(const Tensor& queries, const Tensor& keys, const std::vector<uint8_t>& want, int64_t block,
                        std::vector<int64_t>& index, std::vector<double>& score) {
  NoGradGuard no_grad;
  const int64_t n = queries.size(0);
  const Tensor keys_t = transpose(keys, 0, 1);
  for (int64_t begin = 0; begin < n; begin += block) {
    const int64_t end = std::min(n, begin + block);
    if (std::none_of(want.begin() + begin, want.begin() + end, [](uint8_t w) { return w != 0; })) continue;
    const auto [values, indices] = max(matmul(narrow(queries, 0, begin, end - begin), keys_t), 1);
    const std::vector<double> v = to(values, DType::Float64).to_vector<double>();
    const std::vector<int64_t> i = indices.to_vector<int64_t>();
    for (int64_t r = begin; r < end; ++r) {
      if (!want[static_cast<size_t>(r)]) continue;
      index[static_cast<size_t>(r)] = i[static_cast<size_t>(r - begin)];
      score[static_cast<size_t>(r)] = v[static_cast<size_t>(r - begin)];
    }
  }
}

}  // namespace

BankPairing bank_pairing(const std::vector<int64_t>& caption_to_row, const std::vector<uint8_t>& paired,
                         int64_t num_images) {
  REMATCH_CHECK(caption_to_row.size() == paired.size(), "bank_pairing: ", caption_to_row.size(), " caption rows for ",
                paired.size(), " caption labels");
  REMATCH_CHECK(num_images >= 1, "bank_pairing: need at least one image, got ", num_images);
  BankPairing p;
  p.image_own_caption.assign(static_cast<size_t>(num_images), -1);
  p.caption_own_image.assign(caption_to_row.size(), -1);
  for (size_t c = 0; c < caption_to_row.size(); ++c) {
    const int64_t row = caption_to_row[c];
    REMATCH_CHECK(row >= 0 && row < num_images, "bank_pairing: caption ", c, " is trained with image row ", row,
                  ", outside [0, ", num_images, ")");
    if (!paired[c]) continue;
    p.caption_own_image[c] = row;
    if (p.image_own_caption[static_cast<size_t>(row)] < 0)
      p.image_own_caption[static_cast<size_t>(row)] = static_cast<int64_t>(c);
  }
  return p;
}

MemoryBank build_memory_bank(const Tensor& image_embs, const Tensor& caption_embs, const BankPairing& pairing,
                             int64_t block) {
  REMATCH_CHECK(image_embs.defined() && caption_embs.defined() && image_embs.dim() == 2 && caption_embs.dim() == 2 &&
                    image_embs.size(1) == caption_embs.size(1),
                "build_memory_bank: expected image embeddings [N_img, E] and caption embeddings [N_cap, E], got ",
                image_embs.defined() ? image_embs.describe() : "undefined", " and ",
                caption_embs.defined() ? caption_embs.describe() : "undefined");
  const int64_t n_img = image_embs.size(0), n_cap = caption_embs.size(0);
  REMATCH_CHECK(static_cast<int64_t>(pairing.image_own_caption.size()) == n_img &&
                    static_cast<int64_t>(pairing.caption_own_image.size()) == n_cap,
                "build_memory_bank: the pairing covers ", pairing.image_own_caption.size(), " images and ",
                pairing.caption_own_image.size(), " captions, the embeddings ", n_img, " and ", n_cap);
  REMATCH_CHECK(block >= 1, "build_memory_bank: block must be >= 1, got ", block);
  MemoryBank bank;
  bank.image_to_caption.assign(static_cast<size_t>(n_img), -1);
  bank.image_score.assign(static_cast<size_t>(n_img), 1.0);
  bank.caption_to_image.assign(static_cast<size_t>(n_cap), -1);
  bank.caption_score.assign(static_cast<size_t>(n_cap), 1.0);
  std::vector<uint8_t> unpaired_images(static_cast<size_t>(n_img)), unpaired_captions(static_cast<size_t>(n_cap));
  for (int64_t k = 0; k < n_img; ++k) {
    const int64_t own = pairing.image_own_caption[static_cast<size_t>(k)];
    unpaired_images[static_cast<size_t>(k)] = own < 0;
    bank.image_to_caption[static_cast<size_t>(k)] = own;
  }
  for (int64_t c = 0; c < n_cap; ++c) {
    const int64_t own = pairing.caption_own_image[static_cast<size_t>(c)];
    unpaired_captions[static_cast<size_t>(c)] = own < 0;
    bank.caption_to_image[static_cast<size_t>(c)] = own;
  }
  nearest_neighbours(image_embs, caption_embs, unpaired_images, block, bank.image_to_caption, bank.image_score);
  nearest_neighbours(caption_embs, image_embs, unpaired_captions, block, bank.caption_to_image, bank.caption_score);
  return bank;
}

BankAccuracy bank_accuracy(const MemoryBank& bank, const BankPairing& pairing, int64_t im_div) {
  REMATCH_CHECK(im_div >= 1, "bank_accuracy: im_div must be >= 1, got ", im_div);
  REMATCH_CHECK(bank.num_images() == static_cast<int64_t>(pairing.image_own_caption.size()) &&
                    bank.num_captions() == static_cast<int64_t>(pairing.caption_own_image.size()),
                "bank_accuracy: the bank (", bank.num_images(), " images, ", bank.num_captions(),
                " captions) and the pairing (", pairing.image_own_caption.size(), ", ",
                pairing.caption_own_image.size(), ") differ in size");
  BankAccuracy a;
  for (int64_t k = 0; k < bank.num_images(); ++k) {
    if (pairing.image_own_caption[static_cast<size_t>(k)] >= 0) continue;
    ++a.image_total;
    a.image_correct += bank.image_to_caption[static_cast<size_t>(k)] / im_div == k;
  }
  for (int64_t c = 0; c < bank.num_captions(); ++c) {
    if (pairing.caption_own_image[static_cast<size_t>(c)] >= 0) continue;
    ++a.caption_total;
    a.caption_correct += bank.caption_to_image[static_cast<size_t>(c)] == c / im_div;
  }
  return a;
}

void save_memory_bank(TrainingState& state, const std::string& prefix, const MemoryBank& bank) {
  if (bank.empty()) return;
  state.put_int_vector(prefix + "image_to_caption", bank.image_to_caption);
  state.put_double_vector(prefix + "image_score", bank.image_score);
  state.put_int_vector(prefix + "caption_to_image", bank.caption_to_image);
  state.put_double_vector(prefix + "caption_score", bank.caption_score);
}

MemoryBank load_memory_bank(const TrainingState& state, const std::string& prefix, int64_t num_images,
                            int64_t num_captions) {
  MemoryBank bank;
  if (!state.has_tensor(prefix + "image_to_caption")) return bank;
  bank.image_to_caption = state.get_int_vector(prefix + "image_to_caption");
  bank.image_score = state.get_double_vector(prefix + "image_score");
  bank.caption_to_image = state.get_int_vector(prefix + "caption_to_image");
  bank.caption_score = state.get_double_vector(prefix + "caption_score");
  REMATCH_CHECK(bank.num_images() == num_images && static_cast<int64_t>(bank.image_score.size()) == num_images &&
                    bank.num_captions() == num_captions &&
                    static_cast<int64_t>(bank.caption_score.size()) == num_captions,
                state.source(), ": memory bank '", prefix, "' holds ", bank.num_images(), " images and ",
                bank.num_captions(), " captions, the training set ", num_images, " and ", num_captions);
  for (int64_t c : bank.image_to_caption)
    REMATCH_CHECK(c >= 0 && c < num_captions, state.source(), ": memory bank '", prefix, "' names caption ", c,
                  ", outside [0, ", num_captions, ")");
  for (int64_t k : bank.caption_to_image)
    REMATCH_CHECK(k >= 0 && k < num_images, state.source(), ": memory bank '", prefix, "' names image row ", k,
                  ", outside [0, ", num_images, ")");
  return bank;
}

}  // namespace rematch::train::rcsl
