#include "train/methods/data_files.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "tensor/error.h"
#include "train/data/data_check.h"
#include "train/data/labeled_dataset.h"
#include "train/data/precomp_dataset.h"
#include "train/data/vocab.h"
#include "train/methods/method_spec.h"
#include "train/methods/kit/pairs_data.h"

namespace rematch::train {
namespace {

namespace fs = std::filesystem;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Exists, is a regular file, opens, is not empty; an .npy starts with "\x93NUMPY". `flags` locate the file.
void check_file(const DataFile& f, const std::string& flags) {
  std::error_code ec;
  const fs::file_status st = fs::status(f.path, ec);
  if (!fs::exists(st)) REMATCH_FAIL(f.role, ": '", f.path, "' does not exist (check ", flags, ")");
  if (!fs::is_regular_file(st)) REMATCH_FAIL(f.role, ": '", f.path, "' is not a regular file (check ", flags, ")");
  std::ifstream in(f.path, std::ios::binary);
  if (!in.is_open()) REMATCH_FAIL(f.role, ": '", f.path, "' cannot be opened for reading (check its permissions)");
  char head[6] = {};
  in.read(head, sizeof head);
  if (in.bad()) REMATCH_FAIL(f.role, ": reading '", f.path, "' failed");
  if (in.gcount() == 0) REMATCH_FAIL(f.role, ": '", f.path, "' is empty");
  if (ends_with(f.path, ".npy") && (in.gcount() < 6 || std::memcmp(head, "\x93NUMPY", 6) != 0))
    REMATCH_FAIL(f.role, ": '", f.path, "' is not an .npy file (it does not start with the magic string \\x93NUMPY)");
}

void precomp_files(const TrainConfig& c, std::vector<DataFile>& out) {
  const std::string folder = precomp_folder(c);
  const std::string flags = "--data_path and --data_name";
  for (const std::string& split : {std::string("train"), std::string("dev"), c.test_split_name()}) {
    out.push_back({split + " image features", folder + "/" + split + "_ims.npy"});
    check_file(out.back(), flags);
    try {  // .txt, else .tsv, as the loader picks them
      out.push_back({split + " captions", data::captions_file(c.data_path, c.data_name, split)});
    } catch (const Error& e) {
      REMATCH_FAIL(split, " captions: ", e.what(), " (check ", flags, ")");
    }
    check_file(out.back(), flags);
  }
  out.push_back({"vocabulary", data::find_vocabulary_file(c.vocab_path, c.data_path, c.data_name)});
  check_file(out.back(), "--vocab_path");
}

void labeled_files(const TrainConfig& c, std::vector<DataFile>& out) {
  if (!fs::is_directory(c.data_path)) {
    out.push_back({"labelled data (HDF5)", c.data_path});
    check_file(out.back(), "--data_path");
    return;
  }
  std::vector<std::string> splits = {"train", "test"};
  const std::string partial = data::partial_npy_valid_split(c.data_path);
  REMATCH_CHECK(partial.empty(), partial, " (check --data_path)");
  if (fs::exists(c.data_path + "/valid_imgs.npy")) splits.insert(splits.begin() + 1, "valid");
  for (const std::string& split : splits)
    for (const char* part : {"imgs", "texts", "labels"}) {
      out.push_back({split + " " + part, c.data_path + "/" + split + "_" + part + ".npy"});
      check_file(out.back(), "--data_path (a folder of <split>_imgs.npy, _texts.npy, _labels.npy)");
    }
}

}  // namespace

std::vector<DataFile> check_data_files(const TrainConfig& c) {
  std::vector<DataFile> out;
  const MethodSpec& spec = method_spec(c.method);
  if (spec.layout == DataLayout::Labelled)
    labeled_files(c, out);
  else
    precomp_files(c, out);
  // The method's own files (MSCN's meta split).
  if (spec.data_files)
    for (const DataFile& f : spec.data_files(c)) {
      out.push_back(f);
      check_file(out.back(), "--data_path and --data_name");
    }
  // The file flags given: the common ones (--noise_file), then the method's (--word_vectors).
  std::vector<const Flag*> files;
  for (const Flag& f : common_flags().flags)
    if (f.kind == FlagKind::File) files.push_back(&f);
  for (const OptionTable* table : spec.tables)
    for (const Flag& f : table->flags)
      if (f.kind == FlagKind::File) files.push_back(&f);
  for (const Flag* f : files) {
    const std::string path = f->get(c).get<std::string>();
    if (path.empty()) continue;
    out.push_back({"--" + f->name, path});
    check_file(out.back(), "--" + f->name);
  }
  return out;
}

void check_training_data(const TrainConfig& c, std::ostream& log) {
  data::TrainingDataFiles files;
  files.data_path = c.data_path;
  files.data_name = c.data_name;
  files.vocab_path = c.vocab_path;
  files.noise_file = c.noise_file;
  files.test_split = c.test_split_name();
  files.labeled = method_spec(c.method).layout == DataLayout::Labelled;
  files.valid_len = c.valid_len;
  data::check_for_training(files, log);
}

}  // namespace rematch::train
