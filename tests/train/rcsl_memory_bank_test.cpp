// RCSL's memory bank (train/methods/rcsl/memory_bank.h) on a hand-made set of 2-D unit embeddings whose nearest
// neighbours are known by construction; the pairing rule against the official fixed-point test on a real
// semi-paired split; block-size independence, ties, the mined-pair accuracy, and the state round trip.
#include <cmath>

#include "test_util.h"
#include "train/data/semi_paired.h"
#include "train/methods/rcsl/memory_bank.h"

namespace rematch {
namespace {

using train::rcsl::bank_accuracy;
using train::rcsl::bank_pairing;
using train::rcsl::BankPairing;
using train::rcsl::build_memory_bank;
using train::rcsl::MemoryBank;

constexpr double kDegree = 3.14159265358979323846 / 180.0;

Tensor at_angles(const std::vector<double>& degrees) {
  std::vector<double> v;
  for (double d : degrees) {
    v.push_back(std::cos(d * kDegree));
    v.push_back(std::sin(d * kDegree));
  }
  return from_vector(v, {static_cast<int64_t>(degrees.size()), 2});
}

// Three image rows, two captions each (im_div 2). Image 0 keeps its captions 0, 1; images 1 and 2 are swapped,
// so captions 2, 3 are trained with row 2 and captions 4, 5 with row 1, all unpaired.
struct TinyWorld {
  std::vector<int64_t> caption_to_row = {0, 0, 2, 2, 1, 1};
  std::vector<uint8_t> paired = {1, 1, 0, 0, 0, 0};
  Tensor images = at_angles({0, 90, 180});
  // c1 (paired with image 0) sits next to image 2, c5 next to image 0: the search must cover paired items.
  Tensor captions = at_angles({5, 178, 85, 100, 175, 10});
};

TEST(RcslMemoryBank, NearestNeighboursOverAllItems) {
  const TinyWorld w;
  const BankPairing pairing = bank_pairing(w.caption_to_row, w.paired, 3);
  EXPECT_EQ(pairing.image_own_caption, (std::vector<int64_t>{0, -1, -1}));
  EXPECT_EQ(pairing.caption_own_image, (std::vector<int64_t>{0, 0, -1, -1, -1, -1}));
  for (int64_t block : {1, 2, 1000}) {
    SCOPED_TRACE(block);
    const MemoryBank bank = build_memory_bank(w.images, w.captions, pairing, block);
    // Image 0 is paired: its own first caption, score 1. Image 1 (90°): caption 2 at 85°. Image 2 (180°):
    // caption 1 at 178° — a paired caption, found because the search covers all captions.
    EXPECT_EQ(bank.image_to_caption, (std::vector<int64_t>{0, 2, 1}));
    EXPECT_DOUBLE_EQ(bank.image_score[0], 1.0);
    EXPECT_NEAR(bank.image_score[1], std::cos(5 * kDegree), 1e-12);
    EXPECT_NEAR(bank.image_score[2], std::cos(2 * kDegree), 1e-12);
    // Captions 0, 1 are paired: their own row 0. Caption 2 (85°) and 3 (100°): image 1; caption 4 (175°):
    // image 2; caption 5 (10°): image 0, a paired image.
    EXPECT_EQ(bank.caption_to_image, (std::vector<int64_t>{0, 0, 1, 1, 2, 0}));
    EXPECT_DOUBLE_EQ(bank.caption_score[1], 1.0);
    EXPECT_NEAR(bank.caption_score[3], std::cos(10 * kDegree), 1e-12);
    EXPECT_NEAR(bank.caption_score[5], std::cos(10 * kDegree), 1e-12);
    // Truth: caption c describes image c / 2. Unpaired images: 1 → caption 2 right, 2 → caption 1 wrong.
    // Unpaired captions: 2 → 1, 3 → 1, 4 → 2 right; 5 → 0 wrong.
    const auto acc = bank_accuracy(bank, pairing, 2);
    EXPECT_EQ(acc.image_correct, 1);
    EXPECT_EQ(acc.image_total, 2);
    EXPECT_EQ(acc.caption_correct, 3);
    EXPECT_EQ(acc.caption_total, 4);
  }
}

TEST(RcslMemoryBank, TiesGoToTheLowestIndex) {
  const Tensor images = at_angles({0, 45});
  const Tensor captions = at_angles({45, 30, 30, 45});
  const BankPairing pairing = bank_pairing({0, 0, 0, 0}, {0, 0, 0, 0}, 2);
  const MemoryBank bank = build_memory_bank(images, captions, pairing);
  EXPECT_EQ(bank.image_to_caption, (std::vector<int64_t>{1, 0}));
}

TEST(RcslMemoryBank, PairingMatchesTheOfficialFixedPointRule) {
  // train.py: image k is paired iff shuffle_inx[k] == k, its own caption 5k; a paired caption's image c // 5.
  const int64_t n_img = 40, im_div = 5;
  const data::SemiPairedSplit split = data::semi_paired_split(n_img, im_div, 6, 123);
  const data::Correspondence& c = split.correspondence;
  const BankPairing p = bank_pairing(c.caption_to_row, c.clean, n_img);
  for (int64_t k = 0; k < n_img; ++k) {
    const bool fixed_point = c.caption_to_row[static_cast<size_t>(k * im_div)] == k;
    EXPECT_EQ(p.image_own_caption[static_cast<size_t>(k)], fixed_point ? k * im_div : -1) << "image " << k;
  }
  for (int64_t j = 0; j < c.num_captions(); ++j)
    EXPECT_EQ(p.caption_own_image[static_cast<size_t>(j)], c.clean[static_cast<size_t>(j)] ? j / im_div : -1);
}

class RcslMemoryBankState : public test::TempDirTest {};

TEST_F(RcslMemoryBankState, SavesAndLoadsThroughATrainingStateFile) {
  const TinyWorld w;
  const MemoryBank bank = build_memory_bank(w.images, w.captions, bank_pairing(w.caption_to_row, w.paired, 3));
  train::TrainingState state;
  train::rcsl::save_memory_bank(state, "rcsl.bank.", bank);
  state.save(path("state.safetensors"));
  const train::TrainingState loaded = train::TrainingState::load(path("state.safetensors"));
  const MemoryBank back = train::rcsl::load_memory_bank(loaded, "rcsl.bank.", 3, 6);
  EXPECT_EQ(back.image_to_caption, bank.image_to_caption);
  EXPECT_EQ(back.image_score, bank.image_score);
  EXPECT_EQ(back.caption_to_image, bank.caption_to_image);
  EXPECT_EQ(back.caption_score, bank.caption_score);
  // A state without a bank gives an empty one; a bank of another data set is refused.
  EXPECT_TRUE(train::rcsl::load_memory_bank(train::TrainingState(), "rcsl.bank.", 3, 6).empty());
  EXPECT_THROWS_WITH(train::rcsl::load_memory_bank(loaded, "rcsl.bank.", 4, 6), "memory bank", "3 images", "4 and 6");
}

TEST(RcslMemoryBank, ErrorsNameTheProblem) {
  const TinyWorld w;
  EXPECT_THROWS_WITH(bank_pairing({0, 3}, {0, 0}, 3), "caption 1", "image row 3");
  EXPECT_THROWS_WITH(bank_pairing({0, 1}, {0}, 3), "2 caption rows", "1 caption labels");
  const BankPairing p = bank_pairing(w.caption_to_row, w.paired, 3);
  EXPECT_THROWS_WITH(build_memory_bank(w.images, at_angles({1, 2}), p), "covers 3 images and 6 captions");
}

}  // namespace
}  // namespace rematch
