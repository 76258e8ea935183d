// Writes the seed corpora of fuzz/corpus/<target>/: small valid files of each format and near-valid ones (cut
// short, a field of the wrong type, a value out of range), made with the library's own writers so they match
// what the targets load (fuzz_models.h), plus copies of a few small fixtures of tests/fixtures. Run from the
// repository root after building it (REMATCH_FUZZ=ON): build-fuzz/fuzz/make_corpus fuzz/corpus
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "fuzz/fuzz_models.h"
#include "fuzz/fuzz_util.h"
#include "models/sgraf_checkpoint.h"
#include "train/data/labeled_dataset.h"
#include "train/data/vocab.h"
#include "train/methods/rcsl/rcsl_options.h"
#include "train/methods/train_config.h"
#include "train/run/training_state.h"

using namespace rematch;
namespace fs = std::filesystem;

namespace {

fs::path root;  // the corpus folder

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void put(const std::string& target, const std::string& name, const std::string& bytes) {
  fs::create_directories(root / target);
  std::ofstream(root / target / name, std::ios::binary) << bytes;
}

// The bytes a writer produces: `write` writes the file it is given.
template <typename Write> std::string written(Write write) {
  const std::string path = fuzz::temp_dir() + "/seed";
  write(path);
  return read(path);
}

std::string npy(const Tensor& t) {
  return written([&](const std::string& p) { save_npy(p, t); });
}

std::string cut(const std::string& s, size_t drop) { return s.substr(0, s.size() > drop ? s.size() - drop : 0); }

std::string joined(const std::vector<std::string>& files) {
  std::string out;
  for (size_t i = 0; i < files.size(); ++i) out += (i ? std::string(fuzz::kFileSeparator) : "") + files[i];
  return out;
}

void copy_fixture(const std::string& target, const std::string& fixture) {
  put(target, fs::path(fixture).filename().string(), read(fs::path(REMATCH_FIXTURES) / fixture));
}

// A copy of `file` (safetensors) with every float32 tensor's bytes replaced by NaN.
std::string with_nan_weights(const std::string& file) {
  const std::string path = fuzz::temp_dir() + "/nan.safetensors";
  std::ofstream(path, std::ios::binary) << file;
  nn::SafetensorsFile f = nn::load_safetensors(path);
  for (auto& [name, t] : f.tensors)
    if (t.dtype() == DType::Float32) t = full(t.sizes(), NAN);
  return written([&](const std::string& p) { nn::save_safetensors(p, f.tensors, f.metadata); });
}

void npy_seeds() {
  for (const char* f : {"v1_f4", "v1_f8", "v1_i4", "v1_i8", "v1_b1", "v1_u1", "v1_scalar", "v1_empty", "v2_f4",
                        "v3_i8", "big_endian_f4", "fortran_f4", "int8"})
    copy_fixture("npy", std::string("npy/") + f + ".npy");
  const std::string f4 = read(fs::path(REMATCH_FIXTURES) / "npy/v1_f4.npy");
  put("npy", "truncated_data.npy", cut(f4, 4));
  put("npy", "truncated_header.npy", f4.substr(0, 40));
}

void safetensors_seeds() {
  copy_fixture("safetensors", "checkpoint/fake_sgraf.safetensors");
  const nn::NamedTensors all = {{"f32", full({2, 2}, 1.5)},           {"f64", full({3}, -2, DType::Float64)},
                                {"i32", full({2}, 7, DType::Int32)},  {"i64", full({1, 2}, 9, DType::Int64)},
                                {"bool", full({3}, 1, DType::Bool)},  {"u8", full({2}, 200, DType::UInt8)},
                                {"empty", zeros({0, 3})},            {"scalar", full({}, 4)}};
  const std::string file = written([&](const std::string& p) { nn::save_safetensors(p, all, {{"note", "seed"}}); });
  put("safetensors", "all_dtypes.safetensors", file);
  put("safetensors", "truncated.safetensors", cut(file, 5));
}

std::string small_checkpoint(bool schedule) {
  fuzz::SmallNet net;
  net.train_step();
  nn::CheckpointInfo info;
  info.model_config = R"({"model": "small"})";
  info.epoch = 1;
  info.step = 5;
  info.extra["best"] = "0.5";
  return written([&](const std::string& p) {
    nn::save_training_checkpoint(p, *net.model, *net.adam, schedule ? net.schedule.get() : nullptr, info);
  });
}

void checkpoint_seeds() {
  const std::string with = small_checkpoint(true);
  put("checkpoint", "with_schedule.safetensors", with);
  put("checkpoint", "without_schedule.safetensors", small_checkpoint(false));
  put("checkpoint", "nan_weights.safetensors", with_nan_weights(with));
}

models::SgrafConfig small_sgraf(models::SimilarityModule module) {
  models::SgrafConfig c;
  c.module = module;
  c.vocab_size = 9;
  c.img_dim = 5;
  c.word_dim = 3;
  c.embed_size = 4;
  c.sim_dim = 3;
  c.num_regions = 2;
  c.sgr_step = 2;
  return c;
}

void sgraf_seeds() {
  for (auto module : {models::SimilarityModule::SGR, models::SimilarityModule::SAF}) {
    Generator gen(3);
    models::SgrafModel model(small_sgraf(module), DType::Float32, &gen);
    nn::Adam adam(model.parameters(), 2e-4);
    const std::string name = models::module_name(module);
    const std::string file = written([&](const std::string& p) {
      nn::save_training_checkpoint(p, model, adam, nullptr, models::sgraf_checkpoint_info(model, 2, 10));
    });
    put("sgraf_checkpoint", name + "_checkpoint.safetensors", file);
    const std::string opt = R"({"module_name": ")" + name + R"(", "bi_gru": true})";
    put("sgraf_checkpoint", name + "_converted.safetensors",
        written([&](const std::string& p) { nn::save_safetensors(p, model.state_dict(), {{"opt", opt}}); }));
    train::TrainingState state;
    state.put_module("model.", model);
    state.put_entry("model_config", models::to_json(model.config()));
    put("sgraf_checkpoint", name + "_training_state.safetensors",
        written([&](const std::string& p) { state.save(p); }));
    if (module == models::SimilarityModule::SGR)
      put("sgraf_checkpoint", "SGR_nan_weights.safetensors", with_nan_weights(file));
  }
  copy_fixture("sgraf_checkpoint", "checkpoint/fake_sgraf.safetensors");
}

void training_state_seeds() {
  fuzz::SmallNet net;
  net.train_step();
  train::TrainingState s;
  s.put_module("model.", *net.model);
  s.put_optimizer("optim.", *net.adam);
  s.put_schedule("schedule.", *net.schedule);
  s.put_generator("rng", Generator(5));
  s.put_int("epoch", 2);
  s.put_double("best_score", 412.5);
  s.put_int_vector("order", {2, 0, 1});
  s.put_double_vector("weights", {0.25, 0.75});
  s.put_tensor("queue", full({2, 3}, 0.5));
  s.put_entry("note", R"({"phase": "main"})");
  const std::string file = written([&](const std::string& p) { s.save(p); });
  put("training_state", "state.safetensors", file);
  put("training_state", "nan_weights.safetensors", with_nan_weights(file));
  put("training_state", "truncated.safetensors", cut(file, 9));
}

void vocab_seeds() {
  const data::Vocabulary v = data::build_vocabulary({"a dog runs", "a t-shirt on the u.s. flag"}, 1);
  const std::string file = written([&](const std::string& p) { v.save(p); });
  put("vocab", "vocab.json", file);
  put("vocab", "specials_only.json", written([&](const std::string& p) { data::Vocabulary().save(p); }));
  put("vocab", "disagreeing.json",
      R"({"word2idx": {"<pad>": 0, "<start>": 1, "<end>": 2, "<unk>": 3, "dog": 5}, )"
      R"("idx2word": {"0": "<pad>", "1": "<start>", "2": "<end>", "3": "<unk>", "4": "dog"}, "idx": 5})");
  put("vocab", "truncated.json", cut(file, 10));
}

void captions_seeds() {
  put("captions_txt", "captions.txt",
      "A dog runs on the grass.\nTwo men ride bikes down a hill!\n\"Quoted\" caption, with don't and U.S.\n"
      "Un café à Paris – très bien.\n");
  put("captions_txt", "crlf_no_final_newline.txt", "a red car\r\nthe small dog's toy");
  put("captions_txt", "empty_line.txt", "a cat\n\nsits\n");
  put("captions_tsv", "captions.tsv",
      "img1\tA dog runs on the grass.\n\"img 2\"\t\"A \"\"quoted\"\" caption\"\textra\nimg3\t  spaced out  \r\n");
  put("captions_tsv", "one_column.tsv", "img1\tcaption\nimg2\n");
  put("captions_tsv", "open_quote.tsv", "img1\t\"never closed\n");
}

void labeled_seeds() {
  for (const char* f : {"mrl_tiny.h5", "mrl_fractional.h5", "mrl_missing.h5"})
    copy_fixture("labeled_h5", std::string("labeled/") + f);
  data::LabeledDataset d;
  auto split = [](int64_t n, int64_t first_label) {
    data::LabeledSplit s;
    s.images = full({n, 3}, 0.5);
    s.texts = full({n, 2}, -0.5);
    for (int64_t i = 0; i < n; ++i) s.image_labels.push_back(first_label + i % 3);
    s.text_labels = s.image_labels;
    return s;
  };
  d.train = split(4, 1);
  d.valid = split(2, 1);
  d.test = split(3, 1);
  put("labeled_h5", "with_valid.h5", written([&](const std::string& p) { data::save_labeled_h5(p, d); }));

  const std::string imgs = npy(full({3, 2}, 0.5)), texts = npy(full({3, 4}, 0.25, DType::Float64));
  const std::string labels = npy(from_vector<int64_t>({1, 2, 1}));
  put("labeled_npy", "train_test.npys", joined({imgs, texts, labels, imgs, texts, labels}));
  put("labeled_npy", "train_valid_test.npys", joined({imgs, texts, labels, imgs, texts, labels, imgs, texts, labels}));
  put("labeled_npy", "int32_labels.npys",
      joined({imgs, texts, npy(from_vector<int32_t>({0, 1, 0})), imgs, texts, npy(from_vector<int32_t>({0, 0, 1}))}));
  put("labeled_npy", "rows_disagree.npys", joined({imgs, npy(full({2, 4}, 1)), labels, imgs, texts, labels}));
}

void noise_seeds() {
  put("noise", "per_image.npy", npy(from_vector<int64_t>({1, 0, 3, 2})));
  std::vector<int64_t> per_caption;
  for (int64_t j = 0; j < 20; ++j) per_caption.push_back((j / 5 + j % 2) % 4);
  put("noise", "per_caption.npy", npy(from_vector(per_caption)));
  put("noise", "int32.npy", npy(from_vector<int32_t>({0, 1, 2, 3})));
  put("noise", "out_of_range.npy", npy(from_vector<int64_t>({0, 1, 2, 9})));
  put("noise", "float.npy", npy(full({4}, 1)));
}

void label_noise_seeds() {
  put("label_noise", "mrl.json", "[[0, 1, 2, 0, 1, 3], [0, 1, 2, 2, 1, 0]]");
  put("label_noise", "one_list.json", "[[0, 1, 2, 0, 1, 2]]");
  put("label_noise", "floats.json", "[[0.0, 1, 2, 0, 1, 2], [0, 1, 2, 0, 1, 2.5]]");
  put("label_noise", "per_pair.npy", npy(from_vector<int64_t>({2, 1, 0, 0, 1, 2})));
  put("label_noise", "two_rows.npy", npy(from_vector<int32_t>({2, 1, 0, 0, 1, 2, 0, 0, 0, 1, 1, 1}, {2, 6})));
}

void train_config_seeds() {
  for (const char* method : {"l2rm", "rcsl", "uotrcl"}) {
    train::TrainConfig c;
    c.method = method;
    c.data_path = "data";
    c.data_name = std::string(method) == "uotrcl" ? "" : "f30k_precomp";
    if (c.method == "rcsl") c.options<train::RcslOptions>().paired_length = 500;
    train::resolve_defaults(c);
    put("train_config", std::string(method) + ".json", train::to_json(c));
  }
  put("train_config", "wrong_type.json",
      R"({"method": "l2rm", "data_path": "d", "data_name": "x", "batch_size": "8"})");
  put("train_config", "out_of_range.json",
      R"({"method": "rcl", "data_path": "d", "data_name": "x", "batch_size": 1.5e300})");
}

void metrics_seeds() {
  put("metrics", "metrics.jsonl",
      R"({"epoch":0,"step":0,"kind":"epoch_start","lr":0.0002,"steps":4.0})" "\n"
      R"({"epoch":0,"step":2,"kind":"train","loss":1.25,"lr":0.0002})" "\n"
      R"({"epoch":0,"step":4,"kind":"val","score":null,"val_r1":12.5})" "\n\n"
      R"({"epoch":1,"step":2,"kind":"train","loss":0.75,"lr":0.0002})" "\n"
      R"({"epoch":1,"step":4,"kind":"train","loss":0.5,"lr":0.0002})" "\n"
      R"({"epoch":1,"step":4,"kind":"val","sc)");
  put("metrics", "bad_line.jsonl", "{\"epoch\":0,\"step\":1,\"kind\":\"train\"}\n{\"epoch\":\"x\"}\n");
}

void word_vectors_seeds() {
  put("word_vectors", "glove.txt",
      "the 0.1 -0.2 0.3\ndog 1 2 3\ntshirt 0.5 0.5 0.5\nus -1e-3 2e+2 0\ndont 4 5 6\nand 7 8 9\n"
      ". . 0.1 0.2 0.3\nat & t 1 1 1\n\n");
  put("word_vectors", "short_line.txt", "the 0.1 0.2\n");
  put("word_vectors", "not_a_number.txt", "the 0.1 x 0.3\n");
}

void ot_seeds() {
  const std::string cost = npy(from_vector<float>({0, 1, 2, 3, 1, 0, 1, 2, 2, 1, 0, 1}, {3, 4}));
  const std::string a = npy(full({3}, 1.0 / 3, DType::Float64)), b = npy(full({4}, 0.25, DType::Float64));
  const std::string batch = npy(full({2, 3, 3}, 0.5, DType::Float64));
  put("ot", "cost.npys", cost);
  put("ot", "weights.npys", joined({cost, a, b, std::string("\0\0\0", 3)}));
  put("ot", "partial_masked.npys", joined({cost, a, b, "\x09\x01\x00"}));
  put("ot", "batch_scaling.npys", joined({batch, npy(full({2, 3}, 1.0 / 3)), npy(full({2, 3}, 1.0 / 3)), "\x31\x02"}));
  put("ot", "mismatched.npys", joined({cost, b, a, std::string("\x01", 1)}));
}

// A split's .json and .npy as viz/epoch_splits.cpp writes them.
std::string split_json(int64_t epoch, const std::string& kind, int64_t pairs) {
  return "{\"epoch\": " + std::to_string(epoch) + ", \"method\": \"l2rm\", \"kind\": \"" + kind +
         "\", \"pairs\": " + std::to_string(pairs) + "}\n";
}

void epoch_splits_seeds() {
  put("epoch_splits", "kept.npys", joined({split_json(0, "kept", 6), npy(from_vector<uint8_t>({1, 0, 1, 1, 0, 1}))}));
  put("epoch_splits", "weight.npys", joined({split_json(0, "weight", 3), npy(from_vector<uint8_t>({0, 128, 255}))}));
  put("epoch_splits", "label.npys", joined({split_json(0, "label", 3), npy(from_vector<int32_t>({2, 0, 7}))}));
  put("epoch_splits", "nan.npys", joined({split_json(0, "weight", 3), npy(from_vector<float>({0.5f, NAN, 1}))}));
  put("epoch_splits", "flag_out_of_range.npys", joined({split_json(0, "kept", 2), npy(from_vector<uint8_t>({1, 7}))}));
  put("epoch_splits", "epoch_string.npys",
      joined({"{\"epoch\": \"one\", \"method\": \"l2rm\", \"kind\": \"kept\"}", npy(from_vector<uint8_t>({1}))}));
  put("epoch_splits", "pairs_mismatch.npys", joined({split_json(0, "kept", 9), npy(from_vector<uint8_t>({1, 0}))}));
}

// Run folders of the caught page's fixed data set: 4 training images x 5 captions.
void caught_page_seeds() {
  std::vector<int64_t> rows(20);
  for (int64_t j = 0; j < 20; ++j) rows[j] = (j / 5 + (j % 7 == 0 ? 1 : 0)) % 4;
  std::vector<uint8_t> kept(20, 1);
  for (int64_t j = 0; j < 20; j += 3) kept[j] = 0;
  const std::string metrics =
      R"({"epoch":3,"step":0,"kind":"epoch_start","clean_size":14,"clean_precision":0.9})" "\n";
  const std::string noise = npy(from_vector(rows)), split = npy(from_vector(kept));
  put("caught_page", "intact.npys", joined({noise, metrics, split_json(3, "kept", 20), split}));
  std::vector<int64_t> past = rows;
  past[7] = 1000000;
  put("caught_page", "noise_past_the_data.npys", joined({npy(from_vector(past)), "", split_json(3, "kept", 20), split}));
  past[7] = -3;
  put("caught_page", "noise_negative.npys", joined({npy(from_vector(past)), "", split_json(3, "kept", 20), split}));
  put("caught_page", "noise_nan.npys", joined({npy(full({20}, NAN)), "", split_json(3, "kept", 20), split}));
  put("caught_page", "no_splits_odd_metrics.npys",
      joined({noise, R"({"epoch":1,"step":0,"kind":"epoch_start","clean_size":1e300,"clean_precision":null})" "\n" +
                         metrics}));
}

// Run folders of the labels page's fixed data set: 12 training pairs of 3 classes.
void label_page_seeds() {
  std::vector<int64_t> noisy(24);
  for (size_t i = 0; i < noisy.size(); ++i) noisy[i] = static_cast<int64_t>(i % 3);
  std::vector<int32_t> corrected(12);
  for (size_t i = 0; i < corrected.size(); ++i) corrected[i] = static_cast<int32_t>((i + 1) % 3);
  const std::string labels = npy(from_vector(noisy, {2, 12}));
  put("label_page", "intact.npys", joined({labels, split_json(1, "label", 12), npy(from_vector(corrected))}));
  put("label_page", "nan_labels.npys", joined({npy(full({2, 12}, NAN)), split_json(1, "label", 12),
                                               npy(from_vector(corrected))}));
  noisy[5] = -2;
  put("label_page", "negative_label.npys", joined({npy(from_vector(noisy, {2, 12}))}));
}

void run_config_seeds() {
  const std::string karpathy =
      R"({"images": [{"split": "test", "filepath": "val2014", "filename": "a.jpg"}, {"split": "train", "filename": "b.jpg"}, {"split": "test", "filename": "c.jpg"}]})";
  put("run_config", "intact.jsons",
      joined({R"({"method": "l2rm", "data_path": "d", "data_name": "f30k_precomp", "valid_len": -1, "test_split": null})",
              karpathy}));
  put("run_config", "wrong_types.jsons",
      joined({R"({"method": [1], "data_path": 5, "data_name": true, "valid_len": "all"})",
              R"({"images": [{"split": "test", "filename": 7}, 3]})"}));
  put("run_config", "not_objects.jsons", joined({"[1, 2]", R"({"images": 3})"}));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_corpus <corpus folder, e.g. fuzz/corpus>\n";
    return 2;
  }
  root = argv[1];
  npy_seeds();
  safetensors_seeds();
  checkpoint_seeds();
  sgraf_seeds();
  training_state_seeds();
  vocab_seeds();
  captions_seeds();
  labeled_seeds();
  noise_seeds();
  label_noise_seeds();
  train_config_seeds();
  metrics_seeds();
  word_vectors_seeds();
  epoch_splits_seeds();
  caught_page_seeds();
  label_page_seeds();
  run_config_seeds();
  ot_seeds();
  std::cout << "seed corpora written to " << root.string() << "\n";
  return 0;
}
