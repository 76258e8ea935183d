// The checks of the SCAN precomp layout (docs/data.md §5.1): per split the region features and the captions,
// then the vocabulary (and its coverage of each split's words), then the noise files.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "tensor/error.h"
#include "tensor/file_io.h"
#include "tensor/npy.h"
#include "tensor/tensor.h"
#include "train/data/data_check.h"
#include "train/data/finite_features.h"
#include "train/data/precomp_dataset.h"
#include "train/data/tokenizer.h"
#include "train/data/unicode.h"
#include "train/data/vocab.h"

namespace rematch::data::check_detail {
namespace {

namespace fs = std::filesystem;

void fail(CheckItem& it, Severity s, const std::string& status, const std::string& problem,
          bool against_release = false) {
  if (s < it.severity) return;  // the first problem of the highest severity is the one said, except that one
  // of the folder's own files outranks a disagreement with the official release (CheckItem::against_release)
  if (s == it.severity && !it.problem.empty() && !(it.against_release && !against_release)) return;
  it.severity = s;
  it.status = status;
  it.problem = problem;
  it.against_release = against_release;
}

// The bytes of a caption file as the loaders see them: UTF-8 (the tokeniser refuses anything else), with or
// without a byte-order mark and Windows line ends.
struct Encoding {
  bool ascii = true, valid = true, bom = false, crlf = false;
  int64_t bad_line = 0;  // 1-based line of the first invalid byte
  std::string name() const { return !valid ? "not UTF-8" : ascii ? "ASCII" : "UTF-8"; }
};

Encoding caption_encoding(const std::string& path) {
  Encoding e;
  std::ifstream in(path, std::ios::binary);
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (n == 1) e.bom = line.compare(0, 3, "\xEF\xBB\xBF") == 0;
    if (!line.empty() && line.back() == '\r') e.crlf = true;
    e.ascii = e.ascii && std::all_of(line.begin(), line.end(), [](char c) { return (c & 0x80) == 0; });
    if (e.ascii || !e.valid) continue;
    try {
      utf8_decode(line);  // the tokeniser's own decoder: what it refuses is what stops a run
    } catch (const Error&) {
      e.valid = false;
      e.bad_line = n;
    }
  }
  return e;
}

// The share of caption words the vocabulary maps to <unk>, tokenised as the loader does.
double out_of_vocabulary_share(const std::vector<std::string>& captions, const Vocabulary& vocab, int64_t& words) {
  int64_t total = 0, unknown = 0;
#pragma omp parallel for schedule(dynamic, 512) reduction(+ : total, unknown)
  for (int64_t j = 0; j < static_cast<int64_t>(captions.size()); ++j) {
    try {
      for (const std::string& w : tokenize_caption(captions[static_cast<size_t>(j)])) {
        ++total;
        unknown += vocab.contains(w) ? 0 : 1;
      }
    } catch (const Error&) {
      // An untokenisable caption is reported by the encoding check.
    }
  }
  words = total;
  return total ? static_cast<double>(unknown) / static_cast<double>(total) : 0.0;
}

struct SplitFacts {
  std::string split;
  int64_t rows = -1, regions = -1, dim = -1, captions = -1;  // -1: unknown (missing or unreadable)
  bool features_sound = false;  // the features file reads as its header says
  std::vector<std::string> texts;
  size_t caption_item = 0;  // index of its captions item in the report
};

// Rows r and r+1..r+4 of a features file hold the same bytes: each image replicated for its five captions.
bool replicated_rows(const std::string& path) {
  const Tensor t = load_npy(path);
  if (t.size(0) < 5) return false;
  const Tensor first = kernels::contiguous(kernels::select(t, 0, 0));
  const size_t bytes = static_cast<size_t>(first.numel()) * dtype_size(first.dtype());
  for (int64_t r = 1; r < 5; ++r)
    if (std::memcmp(first.raw_data(), kernels::contiguous(kernels::select(t, 0, r)).raw_data(), bytes) != 0)
      return false;
  return true;
}

std::string rows_expected(const PrecompSplitRelease& s, const PrecompRelease& r) {
  std::string rows = count_str(s.images);
  if (s.captions != s.images) rows += " or " + count_str(s.captions);
  return "[" + rows + ", " + std::to_string(r.regions) + ", " + std::to_string(r.feature_dim) + "]";
}

void check_features(const std::string& path, const std::string& split, const PrecompSplitRelease* official,
                    const PrecompRelease* release, bool required, SplitFacts& facts, const SplitFacts* reference,
                    bool whole_files, DataCheckReport& report) {
  CheckItem it;
  it.role = split + " image features";
  it.path = path;
  it.status = "ok";
  if (official) it.expected = rows_expected(*official, *release);
  const NpyFacts f = inspect_npy(path);
  if (!f.exists) {
    it.source = release ? release->source : kPrecompSource;
    fail(it, required ? Severity::error : Severity::note, "missing",
         "'" + path + "' does not exist" + (required ? "" : " (optional: no method here reads this split)"));
    report.items.push_back(it);
    return;
  }
  if (!f.error.empty()) {
    fail(it, Severity::error, "unreadable", f.error);
    report.items.push_back(it);
    return;
  }
  it.content = f.dtype_name() + " " + f.shape_str();
  if (f.descr == "<f8" || f.descr == "<f2")
    fail(it, Severity::note, "ok", "'" + path + "' holds " + f.dtype_name() + "; the loader converts it to float32");
  else if (f.descr != "<f4")
    fail(it, Severity::error, "wrong dtype", "'" + path + "' holds " + f.dtype_name() + "; region features are float32");
  if (f.shape.size() != 3) {
    fail(it, Severity::error, "wrong shape",
         "'" + path + "' has shape " + f.shape_str() + "; region features are [rows, regions, dim]");
    report.items.push_back(it);
    return;
  }
  if (f.truncated())
    fail(it, Severity::error, "truncated",
         "'" + path + "' is truncated: it holds " + count_str(f.file_bytes) + " bytes, its header " + f.shape_str() +
             " needs " + count_str(f.needed_bytes) + " (an interrupted download or copy?)");
  else if (f.file_bytes > f.needed_bytes)
    fail(it, Severity::warning, "trailing bytes",
         "'" + path + "' is " + count_str(f.file_bytes - f.needed_bytes) + " bytes longer than its header says");
  facts.rows = f.shape[0], facts.regions = f.shape[1], facts.dim = f.shape[2];
  facts.features_sound = !f.truncated() && (f.descr == "<f4" || f.descr == "<f8" || f.descr == "<f2");
  if (whole_files && facts.features_sound) {
    try {  // as the loader checks them (precomp_dataset.h): the first row holding NaN or Inf
      check_finite_rows(load_npy(path), "image features file", path, "row",
                        "re-extract the features of that image, or remove the row and its captions");
    } catch (const Error& e) {
      fail(it, Severity::error, "not finite", e.what());
    }
  }
  it.numbers = {{"rows", double(f.shape[0])}, {"regions", double(f.shape[1])}, {"dim", double(f.shape[2])}};
  if (release && (facts.regions != release->regions || facts.dim != release->feature_dim))
    fail(it, Severity::error, "wrong shape",
         "'" + path + "' holds " + std::to_string(facts.regions) + " regions of " + std::to_string(facts.dim) +
             " features; the official " + release->title + " features are " + std::to_string(release->regions) +
             " x " + std::to_string(release->feature_dim),
         true);
  else if (!release && reference && reference->regions >= 0 &&
           (facts.regions != reference->regions || facts.dim != reference->dim))
    fail(it, Severity::error, "wrong shape",
         "'" + path + "' holds " + std::to_string(facts.regions) + " regions of " + std::to_string(facts.dim) +
             " features but the " + reference->split + " split " + std::to_string(reference->regions) + " of " +
             std::to_string(reference->dim) + ": one model cannot read both");
  if (official && facts.rows != official->images && facts.rows != official->captions)
    fail(it, Severity::error, "wrong count",
         "'" + path + "' has " + count_str(facts.rows) + " rows; the official " + split + " split has " +
             count_str(official->images) + " images" +
             (official->captions != official->images ? " (" + count_str(official->captions) + " rows when each is "
                                                           "repeated per caption)"
                                                     : std::string()) +
             ": a partial download, or another data set under this name?",
         true);
  report.items.push_back(it);
}

void check_captions(const std::string& data_path, const std::string& data_name, const std::string& split,
                    const PrecompSplitRelease* official, const PrecompRelease* release, bool required,
                    SplitFacts& facts, DataCheckReport& report) {
  CheckItem it;
  it.role = split + " captions";
  it.status = "ok";
  if (official) it.expected = count_str(official->captions) + " captions";
  std::string path;
  try {
    path = captions_file(data_path, data_name, split);
  } catch (const Error&) {
    it.path = data_path + "/" + data_name + "/" + split + "_caps" + (release ? release->caption_extension : ".txt");
    it.source = release ? release->source : kPrecompSource;
    fail(it, required ? Severity::error : Severity::note, "missing",
         "'" + it.path + "' does not exist (nor its .txt/.tsv twin)" +
             (required ? "" : " (optional: no method here reads this split)"));
    facts.caption_item = report.items.size();
    report.items.push_back(it);
    return;
  }
  it.path = path;
  try {
    io::require_regular_file(path, "captions file");  // a FIFO would block the reads below
  } catch (const Error& e) {
    fail(it, Severity::error, "unreadable", e.what());
    facts.caption_item = report.items.size();
    report.items.push_back(it);
    return;
  }
  const Encoding enc = caption_encoding(path);
  try {
    facts.texts = read_captions(path);
  } catch (const Error& e) {
    fail(it, Severity::error, "unreadable", e.what());
  }
  facts.captions = static_cast<int64_t>(facts.texts.size());
  it.content = count_str(facts.captions) + " captions, " + enc.name() + (enc.crlf ? " (CRLF)" : "");
  if (facts.captions == 0 && it.severity != Severity::error)
    fail(it, Severity::error, "empty", "'" + path + "' holds no caption: a run stops while loading it");
  it.numbers["captions"] = static_cast<double>(facts.captions);
  if (!enc.valid)
    fail(it, Severity::error, "not UTF-8",
         "'" + path + "' line " + std::to_string(enc.bad_line) +
             " is not UTF-8: the tokeniser stops there (convert the file with iconv)");
  if (enc.bom)
    fail(it, Severity::warning, "byte-order mark",
         "'" + path + "' starts with a UTF-8 byte-order mark, which becomes part of the first caption's first word");
  if (release && fs::path(path).extension() != release->caption_extension)
    fail(it, Severity::note, "ok",
         "'" + path + "': the official " + release->title + " captions come as " + release->caption_extension);
  if (official && facts.captions >= 0 && it.severity != Severity::error && facts.captions != official->captions)
    fail(it, Severity::error, "wrong count",
         "'" + path + "' has " + count_str(facts.captions) + " captions; the official " + split + " split has " +
             count_str(official->captions) + ": a partial download, or another data set under this name?",
         true);
  facts.caption_item = report.items.size();
  report.items.push_back(it);
}

// Rows against captions (the im_div rule, precomp_dataset.h) and captions per image against the release.
void check_pairing(const std::string& ims_path, const PrecompRelease* release, const SplitFacts& facts,
                   DataCheckReport& report) {
  if (facts.rows < 0 || facts.captions <= 0) return;
  if (facts.rows == 0) {
    fail(report.items[facts.caption_item], Severity::error, "wrong count",
         "'" + ims_path + "' holds no rows for the " + count_str(facts.captions) + " captions of '" +
             report.items[facts.caption_item].path + "': a run stops while loading");
    return;
  }
  CheckItem& it = report.items[facts.caption_item];
  if (facts.captions != facts.rows && facts.captions != 5 * facts.rows) {
    fail(it, Severity::error, "wrong count",
         "'" + it.path + "' has " + count_str(facts.captions) + " captions for the " + count_str(facts.rows) +
             " rows of '" + ims_path + "': the loader needs " + count_str(facts.rows) + " (one row per caption) or " +
             count_str(5 * facts.rows) + " (five captions per image), so a run stops while loading");
    return;
  }
  int64_t per_image = facts.captions == 5 * facts.rows ? 5 : 1;
  // One row per caption: whether rows come in replicated fives needs the rows themselves.
  if (per_image == 1 && facts.captions >= 5 && facts.captions % 5 == 0) {
    if (!facts.features_sound) return;
    if (replicated_rows(ims_path)) per_image = 5;
  }
  it.numbers["captions_per_image"] = static_cast<double>(per_image);
  it.content += ", " + std::to_string(per_image) + " per image";
  // (MSCN's meta pairs are scored one by one, never ranked: any pairing serves, docs/methods/mscn.md §4.)
  if (release && per_image != release->captions_per_image && facts.split != "meta")
    fail(it, Severity::error, "wrong pairing",
         "'" + it.path + "' pairs " + std::to_string(per_image) + " caption(s) with each image; the official " +
             release->title + " pairs " + std::to_string(release->captions_per_image) +
             ", so evaluation would count images and captions differently from the papers",
         true);
}

void check_vocabulary(const DataCheckOptions& o, const PrecompRelease* release, std::vector<SplitFacts>& splits,
                      DataCheckReport& report) {
  CheckItem it;
  it.role = "vocabulary";
  it.status = "ok";
  if (release) it.expected = count_str(release->vocabulary_size) + " words";
  try {
    it.path = find_vocabulary_file(o.vocab_path, o.data_path, o.data_name);
  } catch (const Error& e) {
    it.path = vocabulary_path(o.vocab_path.empty() ? o.data_path + "/vocab" : o.vocab_path, o.data_name);
    it.source = kVocabularySource;
    fail(it, Severity::error, "missing", e.what());
    report.items.push_back(it);
    return;
  }
  Vocabulary vocab;
  try {
    vocab = Vocabulary::load(it.path);
  } catch (const Error& e) {
    fail(it, Severity::error, "unreadable", e.what());
    report.items.push_back(it);
    return;
  }
  it.content = count_str(vocab.size()) + " words";
  it.numbers["words"] = static_cast<double>(vocab.size());
  if (release && vocab.size() != release->vocabulary_size)
    fail(it, Severity::warning, "not the shipped one",
         "'" + it.path + "' has " + count_str(vocab.size()) + " words; the vocabulary shipped with " + release->title +
             " has " + count_str(release->vocabulary_size) + ": official checkpoints will not load and word ids differ");
  report.items.push_back(it);
  if (!o.whole_files) return;
  // Coverage of each split (docs/data.md §5.1): a few percent of rare words are <unk> in the official data.
  for (SplitFacts& s : splits) {
    if (s.texts.empty()) continue;
    int64_t words = 0;
    const double oov = out_of_vocabulary_share(s.texts, vocab, words);
    CheckItem& c = report.items[s.caption_item];
    c.numbers["oov_share"] = oov;
    c.content += ", " + percent_str(oov) + " of words unknown";
    if (oov > 0.25)
      fail(c, Severity::error, "vocabulary",
           "'" + it.path + "' leaves " + percent_str(oov) + " of the words of '" + c.path +
               "' unknown: it is not this data set's vocabulary");
    else if (oov > 0.05)
      fail(c, Severity::warning, "vocabulary",
           "'" + it.path + "' leaves " + percent_str(oov) + " of the words of '" + c.path +
               "' unknown (the shipped vocabularies leave about 1%)");
  }
}

// Noise files by the names the official code gives them (docs/data.md §3), and those given.
std::vector<std::string> noise_files(const DataCheckOptions& o) {
  std::set<std::string> seen;
  std::vector<std::string> out;
  auto add = [&](const fs::path& p) {
    std::error_code ec;
    const std::string key = fs::weakly_canonical(p, ec).string();
    if (seen.insert(ec ? p.string() : key).second) out.push_back(p.string());
  };
  const std::string name = without_trailing_slashes(o.data_name);
  auto scan = [&](const fs::path& dir, const std::string& prefix) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return;
    std::vector<fs::path> found;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string f = e.path().filename().string();
      if (f.rfind(prefix, 0) == 0 && e.path().extension() == ".npy") found.push_back(e.path());
    }
    std::sort(found.begin(), found.end());
    for (const auto& p : found) add(p);
  };
  if (!o.find_noise_files) {
    for (const std::string& f : o.noise_files) add(f);
    return out;
  }
  scan(fs::path(o.data_path) / name, "noise_inx_");  // RCL
  scan(fs::path(o.data_path) / name, name + "_");     // NCR's own files copied beside the data
  scan(fs::path(o.data_path) / "noise_index", name + "_");  // L2RM's and BiCro's repository folder
  for (const std::string& f : o.noise_files) add(f);
  return out;
}

}  // namespace

void check_precomp(const DataCheckOptions& o, DataCheckReport& report) {
  const PrecompRelease* release = o.release ? o.release : find_precomp_release(o.data_name);
  const std::string name = without_trailing_slashes(o.data_name);
  REMATCH_CHECK(!name.empty(), "data check: give --data_name (the folder of the precomp layout, e.g. f30k_precomp)");
  report.folder = o.data_path + "/" + name;
  if (release) report.release = release->title;

  std::vector<std::pair<std::string, bool>> splits;  // name, required
  if (release) {
    for (const PrecompSplitRelease& s : release->splits) splits.push_back({s.split, s.required});
  } else {
    splits = {{"train", true}, {"dev", true}, {"test", true}};
    std::error_code ec;
    if (fs::exists(report.folder + "/testall_ims.npy", ec)) splits.push_back({"testall", false});
  }
  {
    // MSCN's meta split (docs/methods/mscn.md §4), checked like the others when the folder has one.
    std::error_code ec;
    if (fs::exists(report.folder + "/meta_ims.npy", ec) || fs::exists(report.folder + "/meta_caps.txt", ec))
      splits.push_back({"meta", false});
  }
  if (!o.test_split.empty()) {
    auto it = std::find_if(splits.begin(), splits.end(), [&](const auto& s) { return s.first == o.test_split; });
    if (it == splits.end())
      splits.push_back({o.test_split, true});
    else
      it->second = true;
  }

  if (!o.only_splits.empty())
    splits.erase(std::remove_if(splits.begin(), splits.end(),
                                [&](const auto& s) {
                                  return std::find(o.only_splits.begin(), o.only_splits.end(), s.first) ==
                                         o.only_splits.end();
                                }),
                 splits.end());
  std::vector<SplitFacts> facts;
  for (const auto& [split, required] : splits) {
    const PrecompSplitRelease* official = nullptr;
    if (release)
      for (const PrecompSplitRelease& s : release->splits)
        if (s.split == split) official = &s;
    SplitFacts f;
    f.split = split;
    const std::string ims = report.folder + "/" + split + "_ims.npy";
    const SplitFacts* reference = facts.empty() ? nullptr : &facts.front();
    check_features(ims, split, official, release, required, f, reference, o.whole_files, report);
    check_captions(o.data_path, name, split, official, release, required, f, report);
    check_pairing(ims, release, f, report);
    facts.push_back(std::move(f));
  }
  check_vocabulary(o, release, facts, report);

  // The training split's size, which a noise file must index: the files' if readable, else the release's.
  int64_t images = -1, im_div = 1;
  const SplitFacts& train = facts.front();
  if (train.rows > 0 && (train.captions == train.rows || train.captions == 5 * train.rows)) {
    images = train.rows;
    im_div = train.captions / train.rows;
  } else if (release) {
    images = release->splits.front().images;
    im_div = release->splits.front().captions / images;
  }
  for (const std::string& path : noise_files(o)) {
    if (images > 0) {
      report.items.push_back(check_noise_file(path, images, im_div));
    } else {
      CheckItem it;
      it.role = "noise file";
      it.path = path;
      it.severity = Severity::warning;
      it.status = "not checked";
      it.problem = "noise file '" + path + "' cannot be checked: the train split's size is unknown (see above)";
      report.items.push_back(it);
    }
  }
}

}  // namespace rematch::data::check_detail
