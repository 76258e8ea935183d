// Readers of the labelled data layouts and the HDF5 writer. HDF5 goes through the C API; its automatic error
// printing is switched off while we call it, because every failure is turned into an Error with context.
#include "train/data/labeled_dataset.h"

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include "tensor/file_io.h"
#include "train/data/finite_features.h"

namespace rematch::data {

namespace {

// Silences HDF5's error stack printing for the lifetime of the guard and restores the previous handler.
class H5Quiet {
 public:
  H5Quiet() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~H5Quiet() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// Closes an HDF5 handle with its matching close function.
class H5Handle {
 public:
  H5Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~H5Handle() {
    if (id_ >= 0) close_(id_);
  }
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  hid_t get() const { return id_; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// The largest label magnitude: every integer up to it is exact in a double (2^53), so labels stored as floats
// convert exactly, and label differences cannot overflow.
constexpr int64_t kMaxLabel = int64_t{1} << 53;

// More than deflate's best ratio (about 1032:1) of dataset elements to stored bytes: a file cannot hold more.
constexpr hsize_t kMaxCompression = 1100;

bool h5_has(hid_t file, const std::string& name) { return H5Lexists(file, name.c_str(), H5P_DEFAULT) > 0; }

// Where each array of a split comes from, for the messages: key "<split> imgs", "<split> texts" or "<split> labels",
// value "labelled data file 'dir/test_texts.npy'" or "HDF5 file 'f.h5' dataset 'test_text'".
using Origins = std::map<std::string, std::string>;

// The size in bytes of a dataset's stored integer or float type, after checking that its layout describes bits
// inside the element: libhdf5 trusts these fields when it converts, and a damaged bit offset (16384 in an 8-byte
// integer) made it read far outside its buffer (SIGBUS in H5T__bit_copy, found by fuzz/labeled_h5_fuzz).
size_t number_size(hid_t type, const std::string& name, const std::string& path) {
  const H5T_class_t cls = H5Tget_class(type);
  REMATCH_CHECK(cls == H5T_INTEGER || cls == H5T_FLOAT, "HDF5 file '", path, "': dataset '", name,
                "' is not numeric");
  const size_t bytes = H5Tget_size(type), precision = H5Tget_precision(type), offset = H5Tget_offset(type);
  bool valid = bytes >= 1 && bytes <= 8 && precision >= 1 && offset + precision <= 8 * bytes;
  if (valid && cls == H5T_FLOAT) {
    size_t sign = 0, exponent = 0, exponent_bits = 0, mantissa = 0, mantissa_bits = 0;
    valid = H5Tget_fields(type, &sign, &exponent, &exponent_bits, &mantissa, &mantissa_bits) >= 0 &&
            sign < 8 * bytes && exponent_bits >= 1 && exponent + exponent_bits <= 8 * bytes && mantissa_bits >= 1 &&
            mantissa + mantissa_bits <= 8 * bytes;
  }
  REMATCH_CHECK(valid, "HDF5 file '", path, "': dataset '", name, "' has a malformed ",
                cls == H5T_FLOAT ? "float" : "integer", " type (", bytes, " bytes, ", precision, " bits from bit ",
                offset, ")");
  return bytes;
}

// Reads a numeric dataset converted to `mem_type`, with its dimensions.
template <typename T>
std::vector<T> h5_read(hid_t file, const std::string& name, hid_t mem_type, const std::string& path,
                       std::vector<hsize_t>& dims) {
  REMATCH_CHECK(h5_has(file, name), "HDF5 file '", path, "' has no dataset '", name, "'");
  H5Handle set(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  REMATCH_CHECK(set.get() >= 0, "HDF5 file '", path, "': cannot open dataset '", name, "'");
  H5Handle type(H5Dget_type(set.get()), H5Tclose);
  const size_t element = number_size(type.get(), name, path);
  H5Handle space(H5Dget_space(set.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  REMATCH_CHECK(rank >= 0 && rank <= 2, "HDF5 file '", path, "': dataset '", name, "' has rank ", rank,
                "; expected 1 or 2");
  dims.assign(static_cast<size_t>(rank), 0);
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  hsize_t n = 1;
  for (hsize_t d : dims) {
    REMATCH_CHECK(d == 0 || n <= std::numeric_limits<hsize_t>::max() / d, "HDF5 file '", path, "': dataset '", name,
                  "' has too many elements");
    n *= d;
  }
  // The shape is only a claim, checked against the storage before memory is allocated: uncompressed (compact,
  // contiguous) storage holds exactly the elements, and libhdf5 copied a 20-byte compact dataset out of 0 stored
  // bytes from a null pointer (SEGV, found by fuzz/labeled_h5_fuzz); chunks may be compressed, at most as much as
  // deflate does, and unwritten ones read as fill values, which let a 7 kB file declare 2^53 elements.
  H5Handle plist(H5Dget_create_plist(set.get()), H5Pclose);
  const H5D_layout_t layout = H5Pget_layout(plist.get());
  REMATCH_CHECK(layout == H5D_COMPACT || layout == H5D_CONTIGUOUS || layout == H5D_CHUNKED, "HDF5 file '", path,
                "': dataset '", name, "' has a storage layout other than compact, contiguous or chunked");
  const hsize_t stored = H5Dget_storage_size(set.get());
  const bool holds = layout == H5D_CHUNKED ? n <= (stored / element + 1) * kMaxCompression
                                           : stored % element == 0 && stored / element == n;
  REMATCH_CHECK(holds, "HDF5 file '", path, "': dataset '", name, "' declares ", n, " elements but holds ", stored,
                " bytes of data (the file is damaged, or the dataset was never written)");
  std::vector<T> out(static_cast<size_t>(n));
  if (n > 0)
    REMATCH_CHECK(H5Dread(set.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) >= 0, "HDF5 file '", path,
                  "': reading dataset '", name, "' failed");
  return out;
}

Tensor h5_matrix(hid_t file, const std::string& name, const std::string& path) {
  std::vector<hsize_t> dims;
  std::vector<float> values = h5_read<float>(file, name, H5T_NATIVE_FLOAT, path, dims);
  REMATCH_CHECK(dims.size() == 2, "HDF5 file '", path, "': dataset '", name, "' must be [N, dim]");
  Tensor t = from_vector(values, {static_cast<int64_t>(dims[0]), static_cast<int64_t>(dims[1])});
  check_finite_rows(t, "HDF5 file", path, "dataset '" + name + "' row", "fix or drop that sample");
  return t;
}

// Labels as exact integers: stored as integers or as integral floats (MATLAB exports), [N], [N, 1] or [1, N].
std::vector<int64_t> integral_labels(const std::vector<double>& values, const std::string& what) {
  std::vector<int64_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    REMATCH_CHECK(std::isfinite(values[i]) && std::floor(values[i]) == values[i] &&
                      std::fabs(values[i]) <= static_cast<double>(kMaxLabel),
                  what, ": label ", i, " is ", values[i], ", not an integer");
    out[i] = static_cast<int64_t>(values[i]);
  }
  return out;
}

std::vector<int64_t> h5_labels(hid_t file, const std::string& name, const std::string& path) {
  std::vector<hsize_t> dims;
  const std::vector<double> values = h5_read<double>(file, name, H5T_NATIVE_DOUBLE, path, dims);
  REMATCH_CHECK(dims.size() == 1 || dims[0] == 1 || dims[1] == 1, "HDF5 file '", path, "': labels '", name,
                "' must be a vector");
  return integral_labels(values, "HDF5 file '" + path + "' dataset '" + name + "'");
}

LabeledSplit h5_split(hid_t file, const std::string& split, const std::string& path, Origins& origins) {
  LabeledSplit s;
  s.images = h5_matrix(file, split + "_imgs_deep", path);
  s.image_labels = h5_labels(file, split + "_imgs_labels", path);
  const std::string texts = h5_has(file, split + "_text") ? split + "_text" : split + "_texts";
  s.texts = h5_matrix(file, texts, path);
  s.text_labels = h5_labels(file, split + "_texts_labels", path);
  const std::string file_said = "HDF5 file '" + path + "'";
  origins[split + " imgs"] = file_said + " dataset '" + split + "_imgs_deep'";
  origins[split + " texts"] = file_said + " dataset '" + texts + "'";
  origins[split + " labels"] = file_said + " datasets '" + split + "_imgs_labels' and '" + split + "_texts_labels'";
  return s;
}

// Whether the file holds a valid split: all of its four datasets, or none. Some but not all is an error naming
// the missing ones, since reading on without them would validate on test rows without a word.
bool h5_valid_split(hid_t file, const std::string& path) {
  std::vector<std::string> present, missing;
  for (const std::string name : {"valid_imgs_deep", "valid_imgs_labels", "valid_text(s)", "valid_texts_labels"}) {
    const bool has = name == "valid_text(s)" ? h5_has(file, "valid_text") || h5_has(file, "valid_texts")
                                             : h5_has(file, name);
    (has ? present : missing).push_back("'" + name + "'");
  }
  if (missing.empty()) return true;
  if (present.empty()) return false;
  auto list = [](const std::vector<std::string>& v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
    return out;
  };
  REMATCH_FAIL("HDF5 file '", path, "' has the valid-split dataset(s) ", list(present), " but not ", list(missing),
               ": a valid split needs all four; add the missing one(s), or delete the others to validate on the "
               "first --valid_len test rows");
}

LabeledSplit npy_split(const std::string& dir, const std::string& split, Origins& origins) {
  auto load = [&](const std::string& name) {
    const std::string path = dir + "/" + split + "_" + name + ".npy";
    REMATCH_CHECK(std::filesystem::is_regular_file(path), "labelled data file '", path, "' does not exist");
    origins[split + " " + name] = "labelled data file '" + path + "'";
    return std::make_pair(load_npy(path), path);
  };
  auto features = [&](const std::string& name) {
    const auto [t, path] = load(name);
    REMATCH_CHECK(t.dim() == 2 && (t.dtype() == DType::Float32 || t.dtype() == DType::Float64),
                  "labelled data file '", path, "' holds ", t.describe(), "; expected float [N, dim]");
    check_finite_rows(t, "labelled data file", path, "row", "fix or drop that sample");
    // A float64 value beyond float32 passes the check above and becomes inf in the cast below.
    check_float32_range(t, "labelled data file", path, "row", "fix or drop that sample, or rescale the features");
    return kernels::contiguous(kernels::cast(t, DType::Float32));
  };
  LabeledSplit s;
  s.images = features("imgs");
  s.texts = features("texts");
  const auto [labels, path] = load("labels");
  REMATCH_CHECK(labels.dim() == 1 && (labels.dtype() == DType::Int64 || labels.dtype() == DType::Int32),
                "labelled data file '", path, "' holds ", labels.describe(), "; expected int64 [N]");
  s.image_labels = labels.to_vector<int64_t>();
  s.text_labels = s.image_labels;
  return s;
}

LabeledSplit take_rows(const LabeledSplit& s, int64_t begin, int64_t end) {
  LabeledSplit out;
  out.images = kernels::contiguous(kernels::slice(s.images, 0, begin, end));
  out.texts = kernels::contiguous(kernels::slice(s.texts, 0, begin, end));
  out.image_labels.assign(s.image_labels.begin() + begin, s.image_labels.begin() + end);
  out.text_labels.assign(s.text_labels.begin() + begin, s.text_labels.begin() + end);
  return out;
}

// Images, texts and both label lists of a split have one row per pair.
void check_rows(const LabeledSplit& s, const std::string& src, const char* name) {
  const int64_t n = s.images.size(0);
  REMATCH_CHECK(s.texts.size(0) == n && s.size() == n && static_cast<int64_t>(s.text_labels.size()) == n,
                "labelled data '", src, "' split ", name, ": ", n, " images, ", s.texts.size(0), " texts, ",
                s.image_labels.size(), " image labels and ", s.text_labels.size(), " text labels disagree");
}

// Every split has the training split's feature sizes, and none is 0: the networks' input widths come from the
// training split, so another width stopped a run only when that split was first encoded, after training.
void check_widths(const LabeledDataset& d, bool has_valid, const Origins& origins) {
  const std::pair<const char*, const LabeledSplit*> splits[] = {{"train", &d.train}, {"test", &d.test},
                                                                {"valid", &d.valid}};
  for (const auto& [name, s] : splits) {
    if (std::string(name) == "valid" && !has_valid) continue;
    for (const auto& [part, t] : {std::pair<std::string, const Tensor*>{"imgs", &s->images}, {"texts", &s->texts}}) {
      const std::string& file = origins.at(std::string(name) + " " + part);
      REMATCH_CHECK(t->size(1) > 0, file, " holds ", t->shape_str(), ": 0 features per row; every row needs at ",
                    "least one feature value");
      const Tensor& train = part == "imgs" ? d.train.images : d.train.texts;
      REMATCH_CHECK(t->size(1) == train.size(1), file, " has ", t->size(1), " features per row, ",
                    origins.at("train " + part), " ", train.size(1), ": every split needs the training split's ",
                    "feature sizes (the networks' input widths); use the same features for every split");
    }
  }
}

// The class count after the shift, K = largest - smallest + 1, asks for what a researcher means by "classes":
// at least two of them in the training labels (with one, every item is relevant to every query: MRL's loss is
// -inf and mAP is 1), and no more classes than training pairs (ids are shifted, not renumbered, so sparse ids
// such as 0, 1e9, 2e9 made a class count no memory holds; with K > N at least K - N classes have no pair).
void check_classes(const LabeledDataset& d, int64_t lowest, const Origins& origins) {
  const std::string& file = origins.at("train labels");
  const int64_t used = distinct_classes(d.train);
  REMATCH_CHECK(used >= 2, file, ": every training label is ", d.train.image_labels.front() + lowest,
                ", a single class; class-labelled retrieval needs at least 2 classes in the training labels (with "
                "one, every item is relevant to every query)");
  const int64_t N = d.train.size();
  REMATCH_CHECK(d.num_classes <= N, file, ": the training labels run from ", lowest, " to the largest id ",
                lowest + d.num_classes - 1, ", which makes ", d.num_classes, " classes (ids are shifted by the "
                "smallest label, not renumbered: docs/methods/uotrcl.md §4.1), more than the ", N,
                " training pairs (", used, " distinct labels are used); number the classes 0..K-1 without gaps");
}

// The shared checks and the label shift of both layouts.
LabeledDataset finish(LabeledDataset d, bool has_valid, int64_t valid_len, const Origins& origins) {
  const std::string& src = d.source;
  // Rows first: the valid split below is cut from the test rows of every array.
  check_rows(d.train, src, "train");
  check_rows(d.test, src, "test");
  if (has_valid) check_rows(d.valid, src, "valid");
  check_widths(d, has_valid, origins);
  if (!has_valid) {
    REMATCH_CHECK(valid_len >= 0 && valid_len <= d.test.images.size(0), "labelled data '", src, "': valid_len ",
                  valid_len, " is outside [0, ", d.test.images.size(0), "] test rows");
    const int64_t n = d.test.images.size(0);
    d.valid = take_rows(d.test, 0, valid_len);
    d.test = take_rows(d.test, valid_len, n);
  }
  const std::pair<const char*, LabeledSplit*> splits[] = {{"train", &d.train}, {"valid", &d.valid}, {"test", &d.test}};
  int64_t lowest = std::numeric_limits<int64_t>::max();
  for (const auto& [name, s] : splits)
    for (const auto* labels : {&s->image_labels, &s->text_labels})
      for (size_t i = 0; i < labels->size(); ++i) {
        // Bounded so that shifting by the lowest label below cannot overflow.
        REMATCH_CHECK((*labels)[i] >= -kMaxLabel && (*labels)[i] <= kMaxLabel, "labelled data '", src, "' split ", name, ": label ",
                      (*labels)[i], " of pair ", i, " is out of range (at most ", kMaxLabel, " in magnitude)");
        lowest = std::min(lowest, (*labels)[i]);
      }
  REMATCH_CHECK(d.train.size() > 0, "labelled data '", src, "' has no training pairs");
  for (const auto& [name, s] : splits)
    for (auto* labels : {&s->image_labels, &s->text_labels})
      for (int64_t& l : *labels) l -= lowest;
  d.num_classes = 1 + std::max(*std::max_element(d.train.image_labels.begin(), d.train.image_labels.end()),
                               *std::max_element(d.train.text_labels.begin(), d.train.text_labels.end()));
  for (const auto& [name, s] : splits)
    for (const auto* labels : {&s->image_labels, &s->text_labels})
      for (size_t i = 0; i < labels->size(); ++i)
        REMATCH_CHECK((*labels)[i] < d.num_classes, "labelled data '", src, "' split ", name, ": label ",
                      (*labels)[i] + lowest, " of pair ", i, " is out of range: the training labels span ", lowest,
                      "..", lowest + d.num_classes - 1);
  check_classes(d, lowest, origins);
  return d;
}

}  // namespace

LabeledDataset load_labeled_h5(const std::string& path, int64_t valid_len) {
  REMATCH_CHECK(std::filesystem::exists(path), "HDF5 file '", path, "' does not exist");
  io::require_regular_file(path, "HDF5 file");  // libhdf5's own open would wait on a FIFO
  H5Quiet quiet;
  H5Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  REMATCH_CHECK(file.get() >= 0, "HDF5 file '", path, "' cannot be opened as HDF5");
  LabeledDataset d;
  d.source = path;
  Origins origins;
  d.train = h5_split(file.get(), "train", path, origins);
  d.test = h5_split(file.get(), "test", path, origins);
  const bool has_valid = h5_valid_split(file.get(), path);
  if (has_valid) d.valid = h5_split(file.get(), "valid", path, origins);
  return finish(std::move(d), has_valid, valid_len, origins);
}

LabeledDataset load_labeled_npy(const std::string& dir, int64_t valid_len) {
  REMATCH_CHECK(std::filesystem::is_directory(dir), "labelled data folder '", dir, "' does not exist");
  LabeledDataset d;
  d.source = dir;
  Origins origins;
  d.train = npy_split(dir, "train", origins);
  d.test = npy_split(dir, "test", origins);
  const std::string partial = partial_npy_valid_split(dir);
  REMATCH_CHECK(partial.empty(), partial);
  const bool has_valid = std::filesystem::exists(dir + "/valid_imgs.npy");
  if (has_valid) d.valid = npy_split(dir, "valid", origins);
  return finish(std::move(d), has_valid, valid_len, origins);
}

int64_t distinct_classes(const LabeledSplit& s) {
  std::vector<int64_t> all = s.image_labels;
  all.insert(all.end(), s.text_labels.begin(), s.text_labels.end());
  std::sort(all.begin(), all.end());
  return std::unique(all.begin(), all.end()) - all.begin();
}

std::string partial_npy_valid_split(const std::string& dir) {
  std::string present, missing;
  int missing_count = 0;
  for (const char* part : {"imgs", "texts", "labels"}) {
    const std::string file = "'" + dir + "/valid_" + part + ".npy'";
    std::error_code ec;
    const bool exists = std::filesystem::exists(dir + "/valid_" + part + ".npy", ec);
    std::string& list = exists ? present : missing;
    missing_count += !exists;
    list += (list.empty() ? "" : " and ") + file;
  }
  if (present.empty() || missing.empty()) return "";
  return std::string(missing_count > 1 ? "labelled data files " : "labelled data file ") + missing +
         (missing_count > 1 ? " do not exist, but " : " does not exist, but ") + present +
         (missing_count > 1 ? " does" : " do") +
         ": a valid split needs all three files; add the missing one(s), or move the others away to validate on "
         "the first --valid_len test rows";
}

LabeledDataset load_labeled(const std::string& path, int64_t valid_len) {
  if (std::filesystem::is_directory(path)) return load_labeled_npy(path, valid_len);
  return load_labeled_h5(path, valid_len);
}

void save_labeled_h5(const std::string& path, const LabeledDataset& d) {
  H5Quiet quiet;
  // HDF5 opens the file by name itself: it writes the writer's temporary file, closed before the commit.
  io::AtomicFileWriter out(path, "save_labeled_h5");
  const std::string& tmp = out.temp_path();
  {
    H5Handle file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
    REMATCH_CHECK(file.get() >= 0, "save_labeled_h5: cannot create '", tmp, "'");
    auto write = [&](const std::string& name, const std::vector<hsize_t>& dims, hid_t file_type, hid_t mem_type,
                     const void* data) {
      H5Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
      H5Handle set(H5Dcreate2(file.get(), name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT,
                              H5P_DEFAULT),
                   H5Dclose);
      hsize_t n = 1;
      for (hsize_t v : dims) n *= v;
      // An empty dataset is created but not written: HDF5 rejects a write from an empty buffer.
      REMATCH_CHECK(set.get() >= 0 && (n == 0 || H5Dwrite(set.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                                          data) >= 0),
                    "save_labeled_h5: writing dataset '", name, "' of '", tmp, "' failed");
    };
    auto write_split = [&](const std::string& split, const LabeledSplit& s) {
      for (const auto& [name, t] : {std::pair<std::string, Tensor>{"_imgs_deep", s.images}, {"_texts", s.texts}}) {
        const Tensor c = kernels::contiguous(kernels::cast(t, DType::Float32));
        REMATCH_CHECK(c.dim() == 2, "save_labeled_h5: ", split, name, " must be [N, dim], got ", c.describe());
        write(split + name, {static_cast<hsize_t>(c.size(0)), static_cast<hsize_t>(c.size(1))}, H5T_IEEE_F32LE,
              H5T_NATIVE_FLOAT, c.raw_data());
      }
      for (const auto& [name, labels] : {std::pair<std::string, const std::vector<int64_t>*>{"_imgs_labels",
                                                                                         &s.image_labels},
                                         {"_texts_labels", &s.text_labels}})
        write(split + name, {static_cast<hsize_t>(labels->size())}, H5T_STD_I64LE, H5T_NATIVE_INT64,
              labels->data());
    };
    write_split("train", d.train);
    write_split("test", d.test);
    if (d.valid.images.defined() && d.valid.size() > 0) write_split("valid", d.valid);
    REMATCH_CHECK(H5Fflush(file.get(), H5F_SCOPE_GLOBAL) >= 0, "save_labeled_h5: flushing '", tmp, "' failed");
  }
  out.commit();
}

}  // namespace rematch::data
