#include "train/data/data_check.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <regex>
#include <sstream>

#include "tensor/error.h"
#include "tensor/file_io.h"
#include "tensor/npy.h"
#include "tensor/tensor.h"
#include "train/data/vocab.h"

namespace rematch::data {

namespace fs = std::filesystem;

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::ok: return "ok";
    case Severity::note: return "note";
    case Severity::warning: return "warning";
    case Severity::error: return "error";
  }
  return "?";
}

int64_t DataCheckReport::count(Severity s) const {
  return std::count_if(items.begin(), items.end(), [s](const CheckItem& i) { return i.severity == s; });
}

namespace check_detail {

std::string NpyFacts::dtype_name() const {
  if (descr.size() < 3) return descr;
  const char kind = descr[1];
  const std::string bits = std::to_string(8 * item_bytes);
  if (kind == 'f') return "float" + bits;
  if (kind == 'i') return "int" + bits;
  if (kind == 'u') return "uint" + bits;
  if (kind == 'b') return "bool";
  return descr;
}

std::string NpyFacts::shape_str() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {

// The header's fields as written by NumPy ("{'descr': '<f4', 'fortran_order': False, 'shape': (29000, 36, 2048), }"),
// read here without the data-size check of read_npy_header, so a truncated file still says what it should hold.
bool parse_header(const std::string& path, NpyFacts& f) {
  std::ifstream in(path, std::ios::binary);
  unsigned char head[12] = {};
  in.read(reinterpret_cast<char*>(head), sizeof head);
  if (in.gcount() < 10 || std::memcmp(head, "\x93NUMPY", 6) != 0) {
    f.error = "'" + path + "' is not an .npy file (it does not start with \\x93NUMPY)";
    return false;
  }
  const int major = head[6];
  const int64_t length = major == 1 ? (head[8] | head[9] << 8)
                                    : (int64_t{head[8]} | int64_t{head[9]} << 8 | int64_t{head[10]} << 16 |
                                       int64_t{head[11]} << 24);
  f.data_offset = (major == 1 ? 10 : 12) + length;
  std::string text(static_cast<size_t>(std::min<int64_t>(length, 1 << 20)), '\0');
  in.seekg(major == 1 ? 10 : 12);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  const size_t d = text.find("'descr'"), s = text.find("'shape'");
  if (in.gcount() != static_cast<std::streamsize>(text.size()) || d == std::string::npos || s == std::string::npos) {
    f.error = "'" + path + "' has a cut-off or garbled .npy header";
    return false;
  }
  const size_t q0 = text.find('\'', d + 7), q1 = q0 == std::string::npos ? q0 : text.find('\'', q0 + 1);
  const size_t p0 = text.find('(', s), p1 = p0 == std::string::npos ? p0 : text.find(')', p0);
  if (q1 == std::string::npos || p1 == std::string::npos) {
    f.error = "'" + path + "' has a garbled .npy header";
    return false;
  }
  f.descr = text.substr(q0 + 1, q1 - q0 - 1);
  std::istringstream dims(text.substr(p0 + 1, p1 - p0 - 1));
  for (std::string tok; std::getline(dims, tok, ',');) {
    const size_t b = tok.find_first_not_of(" "), e = tok.find_last_not_of(" ");
    if (b == std::string::npos) continue;
    const std::string digits = tok.substr(b, e - b + 1);
    int64_t d = 0;
    bool ok = !digits.empty() && digits.size() <= 18;  // 18 digits always fit int64
    for (char c : digits) ok = ok && c >= '0' && c <= '9';
    for (size_t i = 0; ok && i < digits.size(); ++i) d = d * 10 + (digits[i] - '0');
    if (!ok) {
      f.error = "'" + path + "' has a garbled .npy header: dimension '" + digits.substr(0, 40) +
                "' is not a non-negative integer of at most 18 digits";
      return false;
    }
    f.shape.push_back(d);
  }
  for (size_t i = 2; i < f.descr.size() && i < 6 && std::isdigit(static_cast<unsigned char>(f.descr[i])); ++i)
    f.item_bytes = f.item_bytes * 10 + (f.descr[i] - '0');
  int64_t bytes = f.item_bytes;
  bool overflow = false;
  for (int64_t n : f.shape) overflow = overflow || __builtin_mul_overflow(bytes, n, &bytes);
  overflow = overflow || __builtin_add_overflow(bytes, f.data_offset, &f.needed_bytes);
  if (overflow) {
    f.error = "'" + path + "' has a header shape " + f.shape_str() + " too large for any file (its byte count "
              "overflows 64 bits): a damaged header";
    return false;
  }
  return true;
}

}  // namespace

NpyFacts inspect_npy(const std::string& path) {
  NpyFacts f;
  std::error_code ec;
  f.exists = fs::exists(path, ec);
  if (!f.exists) return f;
  try {
    io::require_regular_file(path, "load_npy");  // a FIFO or folder is said as such, never waited on
  } catch (const Error& e) {
    f.error = e.what();
    return f;
  }
  f.file_bytes = static_cast<int64_t>(fs::file_size(path, ec));
  try {
    if (!parse_header(path, f) || f.truncated()) return f;
    read_npy_header(path);  // the loader's own reading of a complete file: what it refuses stops a run
  } catch (const std::exception& e) {
    f.error = e.what();
  }
  return f;
}

std::string count_str(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (n < 0 ? "-" : "") + out;
}

std::string percent_str(double share) {
  if (share == 0) return "0%";
  std::ostringstream s;
  s << std::fixed << std::setprecision(share > 0 && share < 0.001 ? 4 : (share < 0.1 ? 3 : 2)) << 100 * share << "%";
  return s.str();
}

double ratio_in_name(const std::string& path) {
  const std::string name = fs::path(path).stem().string();
  static const std::regex number(R"((\d*\.\d+|\d+))");
  double found = -1;
  for (auto it = std::sregex_iterator(name.begin(), name.end(), number); it != std::sregex_iterator(); ++it) {
    // A '-' right before the number, itself at the start or after a separator (noise_labels_-0.5), is a minus
    // sign: the name says a negative ratio, none in [0, 1]. After a letter or digit (f30k-0.2) it separates.
    const auto at = it->position();
    const bool minus =
        at > 0 && name[at - 1] == '-' && (at == 1 || !std::isalnum(static_cast<unsigned char>(name[at - 2])));
    const double v = std::strtod(it->str().c_str(), nullptr);  // no throw: 400 digits read as inf
    if (!minus && v >= 0 && v <= 1) found = v;
  }
  return found;
}

namespace {

CheckItem noise_problem(CheckItem it, Severity severity, const std::string& status, const std::string& problem) {
  it.severity = severity;
  it.status = status;
  it.problem = problem;
  return it;
}

}  // namespace

CheckItem check_noise_file(const std::string& path, int64_t num_images, int64_t im_div) {
  CheckItem it;
  it.role = "noise file";
  it.path = path;
  const int64_t n_cap = num_images * im_div;
  it.expected = count_str(num_images) + " (one image row per image) or " + count_str(n_cap) + " (per caption) entries";
  const NpyFacts f = inspect_npy(path);
  if (!f.exists) {
    it.source = kNoiseIndexSource;
    return noise_problem(it, Severity::error, "missing", "noise file '" + path + "' does not exist");
  }
  if (!f.error.empty()) return noise_problem(it, Severity::error, "unreadable", f.error);
  it.content = f.dtype_name() + " " + f.shape_str();
  if (f.truncated())
    return noise_problem(it, Severity::error, "truncated",
                         "noise file '" + path + "' holds " + count_str(f.file_bytes) + " bytes; its header " +
                             f.shape_str() + " needs " + count_str(f.needed_bytes));
  if (f.descr != "<i8" && f.descr != "<i4")
    return noise_problem(it, Severity::error, "wrong dtype",
                         "noise file '" + path + "' holds " + f.dtype_name() + "; a noise index holds int64 rows");
  const int64_t length = f.shape.size() == 1 ? f.shape[0] : -1;
  it.numbers["length"] = static_cast<double>(length);
  if (length != num_images && length != n_cap)
    return noise_problem(it, Severity::error, "wrong length",
                         "noise file '" + path + "' has shape " + f.shape_str() + "; the training split has " +
                             count_str(num_images) + " images and " + count_str(n_cap) +
                             " captions, so a run given it stops (one entry per image or per caption)");
  const std::vector<int64_t> v = load_npy(path, -1).to_vector<int64_t>();
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] < 0 || v[i] >= num_images)
      return noise_problem(it, Severity::error, "not an index",
                           "noise file '" + path + "': entry " + std::to_string(i) + " is " + std::to_string(v[i]) +
                               ", outside the image rows [0, " + count_str(num_images) + ")");

  // How many images each row serves: a permutation serves each one once per caption (docs/backbones.md §6.4).
  std::vector<int64_t> uses(static_cast<size_t>(num_images), 0);
  for (int64_t r : v) ++uses[static_cast<size_t>(r)];
  const int64_t per_row = length == num_images ? 1 : im_div;
  const bool balanced = std::all_of(uses.begin(), uses.end(), [&](int64_t u) { return u == per_row; });

  const bool per_image = length == num_images;
  bool blocks = !per_image;  // a per-caption file whose blocks of im_div are constant: image-level noise
  for (int64_t j = 0; blocks && j < length; ++j) blocks = v[j] == v[j - j % im_div];
  int64_t changed = 0, units = 0;
  std::string unit, protocol;
  if (per_image || blocks) {
    units = num_images, unit = "images";
    for (int64_t i = 0; i < num_images; ++i) changed += v[i * (per_image ? 1 : im_div)] != i;
    protocol = per_image ? "image level (RCL/DECL), one entry per image"
                         : "image level (RCL/DECL) written per caption, as L2RM ships it";
  } else {
    units = n_cap, unit = "captions";
    for (int64_t j = 0; j < n_cap; ++j) changed += v[j] != j / im_div;
    protocol = "caption level (NCR), one entry per caption";
  }
  const double share = units ? static_cast<double>(changed) / static_cast<double>(units) : 0.0;
  it.numbers["changed"] = static_cast<double>(changed);
  it.numbers["units"] = static_cast<double>(units);
  it.numbers["realised_ratio"] = share;
  it.content += ", " + protocol + ", changes " + percent_str(share) + " of the pairs (" + count_str(changed) +
                " of " + count_str(units) + " " + unit + ")";

  const double named = ratio_in_name(path);
  it.numbers["named_ratio"] = named;
  if (named >= 0) {
    // Python's int(r * n); shuffling the chosen set leaves a few of them in place (about one image, or at most
    // 1 + (im_div - 1)·r captions, on average; docs/data.md §3.2), so a handful fewer than n change.
    const int64_t n = static_cast<int64_t>(named * static_cast<double>(units));
    const int64_t slack = (per_image || blocks ? 6 : 15) + n / 1000;
    std::ostringstream named_s;
    named_s << named;
    it.expected = "named " + named_s.str() + ": " + count_str(n) + " " + unit + " moved";
    if (changed > n || changed < n - slack) {
      std::ostringstream p;
      p << "noise file '" << path << "' is named for ratio " << named << " but changes " << percent_str(share)
        << " of the training pairs (" << count_str(changed) << " of " << count_str(units) << " " << unit
        << "; a file of ratio " << named << " moves " << count_str(n)
        << "): a run given it trains at another noise level than its name says";
      return noise_problem(it, Severity::error, "ratio differs", p.str());
    }
  } else {
    it = noise_problem(it, Severity::note, "ok",
                       "noise file '" + path + "' names no ratio; it changes " + percent_str(share) + " of the pairs");
  }
  if (!balanced)
    return noise_problem(it, Severity::warning, "unbalanced",
                         "noise file '" + path + "' uses some images more often than others (not a permutation of "
                         "the rows, as the RCL and NCR protocols make): was it made for another data set?");
  return it;
}

}  // namespace check_detail

DataCheckReport check_data(const DataCheckOptions& options) {
  DataCheckReport r;
  r.data_path = options.data_path;
  r.data_name = without_trailing_slashes(options.data_name);
  DataLayout layout = options.layout;
  if (layout == DataLayout::automatic) {
    std::error_code ec;
    const bool labeled = fs::is_regular_file(options.data_path, ec) ||
                         fs::is_regular_file(fs::path(options.data_path) / "train_imgs.npy", ec);
    layout = labeled ? DataLayout::labeled : DataLayout::precomp;
  }
  r.layout = layout == DataLayout::labeled ? "labeled" : "precomp";
  if (layout == DataLayout::labeled)
    check_detail::check_labeled(options, r);
  else
    check_detail::check_precomp(options, r);
  return r;
}

void check_for_training(const TrainingDataFiles& files, std::ostream& log) {
  DataCheckOptions options;
  options.data_path = files.data_path;
  options.data_name = files.data_name;
  options.vocab_path = files.vocab_path;
  if (!files.noise_file.empty()) options.noise_files = {files.noise_file};
  options.layout = files.labeled ? DataLayout::labeled : DataLayout::precomp;
  options.test_split = files.test_split;
  options.valid_len = files.valid_len;
  options.release = files.release;
  options.whole_files = false;
  options.find_noise_files = false;
  options.only_splits = {"train", "dev", files.test_split};
  const DataCheckReport r = check_data(options);
  std::string errors;
  int64_t problems = 0;
  // A disagreement with the official release is a warning here: a subset, or another data set under an official
  // name, trains (the log says how it differs); `rematch data check` counts it as an error.
  for (const CheckItem& i : r.items) {
    const bool error = i.severity == Severity::error && !i.against_release;
    if (!error && (i.severity == Severity::warning || i.severity == Severity::error))
      log << "data check: warning: " << i.problem << "\n";
    if (!error) continue;
    ++problems;
    errors += "\n  " + i.problem + (i.source.empty() ? "" : " (it comes from " + i.source + ")");
  }
  REMATCH_CHECK(errors.empty(), "data check of ", r.folder, " found ", problems,
                " problem(s) that would stop this run or make it train on other data:", errors,
                "\n(`rematch data check --data_path ", r.data_path, r.data_name.empty() ? "" : " --data_name ",
                r.data_name, "` shows every file)");
}

}  // namespace rematch::data
