#include "train/data/precomp_dataset.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "tensor/file_io.h"
#include "train/data/finite_features.h"
#include "train/data/float_npy.h"
#include "train/data/tokenizer.h"

namespace rematch::data {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Python's bytes.strip(): ASCII whitespace, which is what the repositories' line.strip() removes.
std::string strip_ascii(const std::string& s) {
  const char* ws = " \t\n\r\v\f";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

// The fields of one line as Python's csv.reader(delimiter='\t') splits them: a field that starts with '"' is
// quoted ("" inside is one quote, text after the closing quote is kept); quotes elsewhere are literal.
std::vector<std::string> tsv_fields(const std::string& line, const std::string& path, size_t line_no) {
  std::vector<std::string> fields;
  size_t i = 0;
  while (true) {
    std::string field;
    if (i < line.size() && line[i] == '"') {
      size_t j = i + 1;
      while (true) {
        REMATCH_CHECK(j < line.size(), "captions file '", path, "' line ", line_no,
                      ": quoted field is not closed on this line");
        if (line[j] == '"' && j + 1 < line.size() && line[j + 1] == '"') {
          field += '"', j += 2;
        } else if (line[j] == '"') {
          ++j;
          break;
        } else {
          field += line[j++];
        }
      }
      const size_t tab = line.find('\t', j);
      field += line.substr(j, tab == std::string::npos ? std::string::npos : tab - j);
      i = tab;
    } else {
      const size_t tab = line.find('\t', i);
      field = line.substr(i, tab == std::string::npos ? std::string::npos : tab - i);
      i = tab;
    }
    fields.push_back(std::move(field));
    if (i == std::string::npos) break;
    ++i;
  }
  return fields;
}

void check_file(const std::string& path, const char* what) {
  REMATCH_CHECK(std::filesystem::exists(path), what, " '", path, "' does not exist");
  io::require_regular_file(path, what);  // a FIFO there is said as such (and never waited on)
}

}  // namespace

ValSubset parse_val_subset(const std::string& name) {
  if (name == "sgraf") return ValSubset::sgraf;
  if (name == "ncr") return ValSubset::ncr;
  REMATCH_FAIL("validation subset must be 'sgraf' or 'ncr', got '", name, "'");
}

std::vector<std::string> read_captions(const std::string& path) {
  check_file(path, "captions file");
  std::ifstream in(path, std::ios::binary);
  REMATCH_CHECK(in.good(), "captions file '", path, "' cannot be opened");
  const bool tsv = ends_with(path, ".tsv");
  std::vector<std::string> captions;
  std::string line;
  size_t line_no = 0;
  // Lines end at '\n' (the files are read as bytes); a final line without '\n' still counts.
  while (std::getline(in, line)) {
    ++line_no;
    std::string caption = line;
    if (tsv) {
      if (!caption.empty() && caption.back() == '\r') caption.pop_back();
      const std::vector<std::string> fields = tsv_fields(caption, path, line_no);
      REMATCH_CHECK(fields.size() >= 2, "captions file '", path, "' line ", line_no, " has ", fields.size(),
                    " column; expected image_id<TAB>caption");
      caption = fields[1];
    }
    caption = strip_ascii(caption);
    REMATCH_CHECK(!caption.empty(), "captions file '", path, "' line ", line_no, ": empty caption");
    captions.push_back(std::move(caption));
  }
  return captions;
}

std::string captions_file(const std::string& data_path, const std::string& data_name, const std::string& split) {
  const std::string base = data_path + "/" + data_name + "/" + split + "_caps";
  // exists, not is_regular_file: a FIFO or folder there is named by the reader, not taken for a missing file.
  if (std::filesystem::exists(base + ".txt")) return base + ".txt";
  if (std::filesystem::exists(base + ".tsv")) return base + ".tsv";
  REMATCH_FAIL("captions file '", base, ".txt' (or '", base, ".tsv') does not exist");
}

PrecompDataset::PrecompDataset(const std::string& data_path, const std::string& data_name, const std::string& split,
                               const Vocabulary& vocab, const PrecompOptions& options) {
  REMATCH_CHECK(split == "train" || split == "dev" || split == "test" || split == "testall" || split == "meta",
                "precomp data set: split must be train, dev, test, testall or meta (MSCN's meta set), got '", split,
                "'");
  images_path_ = data_path + "/" + data_name + "/" + split + "_ims.npy";
  check_file(images_path_, "image features file");
  captions_path_ = captions_file(data_path, data_name, split);

  features_ = load_float_npy(images_path_, "image features", options.notes ? *options.notes : std::cerr,
                             /*keep_float64=*/false, options.mmap_min_bytes);
  REMATCH_CHECK(features_.dim() == 3 && features_.dtype() == DType::Float32, "image features file '", images_path_,
                "' holds ", features_.describe(), "; expected float [rows, regions, dim] (float32, float64 or "
                "float16)");
  if (options.check_finite)
    check_finite_rows(features_, "image features file", images_path_, "row",
                      "re-extract the features of that image, or remove the row and its captions");
  std::vector<std::string> texts = read_captions(captions_path_);
  const int64_t rows = features_.size(0), n_caps = static_cast<int64_t>(texts.size());
  if (rows == n_caps)
    im_div_ = 1;
  else if (rows * 5 == n_caps)
    im_div_ = 5;
  else
    REMATCH_FAIL("image features file '", images_path_, "' has ", rows, " rows but captions file '", captions_path_,
                 "' has ", n_caps, " captions: expected ", n_caps, " rows (one per caption) or ", n_caps / 5.0,
                 " rows (five captions per image)");

  num_captions_ = n_caps;
  if (split == "dev")
    num_captions_ = std::min(n_caps, options.val_subset == ValSubset::sgraf ? int64_t{5000} : 1000 * im_div_);

  captions_per_image_ = options.captions_per_image;
  if (captions_per_image_ == 0) {
    captions_per_image_ = 1;
    if (im_div_ == 5) {
      captions_per_image_ = 5;
    } else if (num_captions_ >= 5 && num_captions_ % 5 == 0) {
      // One row per caption: rows 0..4 being one image means each image was replicated for its five captions.
      const Tensor first = kernels::contiguous(image(0));
      const size_t bytes = static_cast<size_t>(first.numel()) * sizeof(float);
      bool replicated = true;
      for (int64_t r = 1; r < 5 && replicated; ++r)
        replicated = std::memcmp(first.raw_data(), kernels::contiguous(image(r)).raw_data(), bytes) == 0;
      if (replicated) captions_per_image_ = 5;
    }
  }
  REMATCH_CHECK(captions_per_image_ > 0 && num_captions_ % captions_per_image_ == 0, "precomp data set '",
                captions_path_, "': ", num_captions_, " captions do not split into groups of captions_per_image = ",
                captions_per_image_);

  texts.resize(static_cast<size_t>(num_captions_));
  std::vector<std::vector<int64_t>> encoded(texts.size());
  std::string first_error;
  int64_t first_bad = -1;
  // Tokenising 566k COCO captions is the slow part of loading; captions are independent.
#pragma omp parallel for schedule(dynamic, 512)
  for (int64_t j = 0; j < num_captions_; ++j) {
    try {
      encoded[static_cast<size_t>(j)] = encode_caption(texts[static_cast<size_t>(j)], vocab);
    } catch (const Error& e) {
#pragma omp critical(rematch_precomp_tokenize)
      if (first_bad < 0 || j < first_bad) first_bad = j, first_error = e.what();
    }
  }
  REMATCH_CHECK(first_bad < 0, "captions file '", captions_path_, "' line ", first_bad + 1, ": ", first_error);
  offsets_.reserve(encoded.size() + 1);
  offsets_.push_back(0);
  for (const auto& ids : encoded) {
    ids_.insert(ids_.end(), ids.begin(), ids.end());
    offsets_.push_back(static_cast<int64_t>(ids_.size()));
  }
  texts_ = std::move(texts);
}

void PrecompDataset::check_caption(int64_t j) const {
  REMATCH_CHECK(j >= 0 && j < num_captions_, "precomp data set '", captions_path_, "': caption index ", j,
                " is out of range [0, ", num_captions_, ")");
}

Tensor PrecompDataset::image(int64_t row) const {
  REMATCH_CHECK(row >= 0 && row < features_.size(0), "precomp data set '", images_path_, "': image row ", row,
                " is out of range [0, ", features_.size(0), ")");
  return kernels::select(features_, 0, row);
}

Tensor PrecompDataset::images(const std::vector<int64_t>& rows) const {
  for (int64_t r : rows)
    REMATCH_CHECK(r >= 0 && r < features_.size(0), "precomp data set '", images_path_, "': image row ", r,
                  " is out of range [0, ", features_.size(0), ")");
  return kernels::index_select(features_, 0, from_vector(rows));
}

const int64_t* PrecompDataset::caption_ids(int64_t j) const {
  check_caption(j);
  return ids_.data() + offsets_[static_cast<size_t>(j)];
}

int64_t PrecompDataset::caption_length(int64_t j) const {
  check_caption(j);
  return offsets_[static_cast<size_t>(j) + 1] - offsets_[static_cast<size_t>(j)];
}

std::vector<int64_t> PrecompDataset::caption_vector(int64_t j) const {
  const int64_t* p = caption_ids(j);
  return std::vector<int64_t>(p, p + caption_length(j));
}

const std::string& PrecompDataset::caption_text(int64_t j) const {
  check_caption(j);
  return texts_[static_cast<size_t>(j)];
}

int64_t PrecompDataset::image_index(int64_t j) const {
  check_caption(j);
  return j / im_div_;
}

Vocabulary build_precomp_vocabulary(const std::string& data_path, const std::string& data_name,
                                    int64_t min_count) {
  std::vector<std::string> captions = read_captions(captions_file(data_path, data_name, "train"));
  const std::vector<std::string> dev = read_captions(captions_file(data_path, data_name, "dev"));
  captions.insert(captions.end(), dev.begin(), dev.end());
  return build_vocabulary(captions, min_count);
}

}  // namespace rematch::data
