// A synthetic image–caption benchmark with planted cross-modal structure, written in the SCAN "precomp"
// layout the real loaders read (docs/backbones.md §3.1, §6.1), so every part of the training suite runs without
// a download.
//
// The world: object concepts (nouns), attribute concepts (adjectives) and a few unnamed background concepts,
// each a fixed random Gaussian vector in R^D ("prototype"). An image holds 2–5 object instances, each an
// object with one attribute (distinct attributes within an image). Each of its R regions shows one instance
// — feature (p_object + p_attribute)/√2, an instance may fill two regions — or background (p_background),
// plus N(0, σ²) noise per dimension; region order is shuffled. Each image has 5 captions from the grammar of
// pairs_grammar.h naming a random subset of its instances.
//
// Word–region alignment matters: a fraction of the images come as "twins" — the next image has the same
// objects with the attributes permuted so every instance changes attribute ("a red dog and a small car" vs
// "a small dog and a red car"). Bags of words cannot tell twins apart; only matching the words of a binding
// to the one region that carries both can.
//
// Files written by write_pairs_world(world, DIR):
//   DIR/<data_name>/{train,dev,test}_ims.npy   float32 [N, R, D] (and meta_* with meta_images > 0)
//   DIR/<data_name>/{train,dev,test}_caps.txt  5 N lines, captions 5i..5i+4 describe image i (im_div = 5)
//   DIR/vocab/<data_name>_vocab.json           {word2idx, idx2word (string keys), idx}, <pad> <start> <end>
//                                               <unk> = 0..3 — i.e. --data_path DIR --vocab_path DIR/vocab
//   DIR/<data_name>/{train,dev,test}_ids.txt   the id of each image row, "<split>_<i>" (scene_pictures.h)
//   DIR/<data_name>/images/<id>.png            each image drawn from its objects and attributes
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"
#include "train/synth/pairs_grammar.h"

namespace rematch::synth {

constexpr int64_t kCaptionsPerImage = 5;
constexpr int64_t kBackgroundConcepts = 8;

struct PairsWorldConfig {
  std::string data_name = "synth_precomp";
  int64_t train_images = 2000;
  int64_t dev_images = 250;
  int64_t test_images = 500;
  int64_t regions = 12;         // R, region slots per image (at least 2)
  int64_t feature_dim = 64;     // D
  int64_t concepts = 24;        // object concepts, at most max_object_concepts()
  int64_t attributes = 12;      // attribute concepts, at most max_attribute_concepts()
  double feature_noise = 0.5;   // σ of the per-dimension region noise; prototypes have unit variance
  double twin_fraction = 0.3;   // share of images that belong to a twin pair
  // Images of a fourth split, "meta": MSCN's clean meta set (docs/methods/mscn.md §4), five captions each, drawn
  // like the others from a counter range of its own; 0 writes none.
  int64_t meta_images = 0;
  uint64_t seed = 0;
};

// Throws rematch::Error naming the first bad field.
void validate(const PairsWorldConfig& config);

struct Scene {
  std::vector<SceneObject> objects;
  int64_t twin_of = -1;  // index (in the same split) of the image this one permutes, or -1
};

struct PairsSplit {
  std::string name;                   // "train", "dev", "test"
  Tensor images;                      // float32 [N, R, D]
  std::vector<std::string> captions;  // 5 N, captions 5i..5i+4 of image i
  std::vector<Scene> scenes;          // N, the ground truth behind images and captions
};

struct PairsWorld {
  PairsWorldConfig config;
  // float32 [concepts + attributes + kBackgroundConcepts, D]: objects first, then attributes, then background.
  Tensor prototypes;
  std::vector<PairsSplit> splits;        // train, dev, test (and meta)
  std::vector<std::string> vocabulary;   // index = word id
  const PairsSplit& split(const std::string& name) const;
};

// The whole world for a config; the same config (seed included) always gives the same world. Each split
// draws from its own Philox counter range, so changing one split's size leaves the others unchanged.
PairsWorld make_pairs_world(const PairsWorldConfig& config);

struct PairsWorldFiles {
  std::string data_dir;    // DIR/<data_name>
  std::string vocab_path;  // DIR/vocab/<data_name>_vocab.json
  std::string images_dir;  // DIR/<data_name>/images
};
// Writes the files listed above, creating folders as needed; each file goes through a temporary name and a
// rename, so an interrupted run leaves no half-written file.
PairsWorldFiles write_pairs_world(const PairsWorld& world, const std::string& out_dir);

}  // namespace rematch::synth
