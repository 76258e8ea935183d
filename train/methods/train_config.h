// The options of `rematch train`: the common block every method reads (what to run, data, noise, schedule,
// device, run folder, seed) and one typed section per method (config.options<L2rmOptions>(), ...; options.h),
// declared in the method's folder with the table of its flags. Each field's flag is its name with `--`
// (the names of the public PyTorch code's flags, docs/methods/), and config.json holds them flat under the same
// names. Values that depend on the method or the preset are unset here (NaN / -1 / "" / the choice "") and
// filled by resolve_defaults() from the method's defaults (method_spec.h; their sources in docs/presets.md):
// the run's config.json records the resolved values, so a run is reproducible from its config alone.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tensor/device.h"
#include "train/data/precomp_dataset.h"
#include "train/methods/options.h"
#include "train/run/progress.h"

namespace rematch::train {

// --device: the spelling given ("cpu", "cuda", "cuda:1"; config.json keeps it) and the Device it names, parsed
// once, when the option is set: a spelling that is not cpu, cuda or cuda:N is an Error naming the flag. Whether
// this process can use the device is the command's check (usable_device), made once before any data is read.
class DeviceOption {
 public:
  DeviceOption() = default;
  DeviceOption(const std::string& spec);  // NOLINT: assigned from a flag's text
  DeviceOption(const char* spec) : DeviceOption(std::string(spec)) {}  // NOLINT
  const std::string& spec() const { return spec_; }
  const Device& device() const { return device_; }
  // The same spelling (config.json keeps it) on another device: under mpirun, the GPU of this rank
  // (parallel::rank_device; `cuda` on rank 3 of a node computes on cuda:3).
  DeviceOption on(const Device& d) const {
    DeviceOption o = *this;
    o.device_ = d;
    return o;
  }
  bool operator==(const std::string& spec) const { return spec_ == spec; }
  bool operator!=(const std::string& spec) const { return spec_ != spec; }

 private:
  std::string spec_ = "cpu";
  Device device_ = Device::cpu();
};
std::ostream& operator<<(std::ostream& out, const DeviceOption& d);

// --test_split: the split of the final test.
enum class TestSplit { Test, Testall };
const char* test_split_name(TestSplit split);  // "test" | "testall"

// --noise_mode: image | caption for image-caption pairs (data/noise.h), symmetric | mrl for labels
// (data/labeled_dataset.h); which ones a method takes follows its data layout.
enum class NoiseMode { Image, Caption, Symmetric, Mrl };
const char* noise_mode_name(NoiseMode mode);

struct CommonOptions {
  // ---- what to run ------------------------------------------------------------------------------------------
  std::string method;          // a registered method (make_method.h): triplet | infonce | rcl | l2rm | ...
  std::string preset;          // one of the method's presets (f30k | coco | cc152k, wiki | nus | xmedianet) or ""
  DeviceOption device;         // cpu | cuda | cuda:N
  uint64_t seed = 0;

  // ---- data -------------------------------------------------------------------------------------------------
  std::string data_path;       // folder holding <data_name>/ (precomp) or the labelled data file/folder root
  std::string data_name;       // e.g. f30k_precomp; for labelled data: wiki | nus | xmedianet | a folder name
  std::string vocab_path;      // folder of <data_name>_vocab.json ("" = <data_path>/vocab, then build one)
  // sgraf | ncr: the precomp dev subset used for model selection (unset = the method's official code's: ncr for
  // l2rm, sgraf for the others; docs/backbones.md §6.3).
  std::optional<data::ValSubset> val_subset;
  int64_t valid_len = -1;      // labelled data without a valid split: first valid_len test rows (-1: preset)
  bool coco_folds = false;     // also report COCO 5-fold 1K on testall (test split "testall")
  // test | testall (unset = the official run's: testall with the 5-fold 1K mean and the full 5K for --preset
  // coco, as L2RM's main_L2RM.py, RCL's evaluate_model.py and RCSL's train.py end; test otherwise).
  std::optional<TestSplit> test_split;

  // ---- noise ------------------------------------------------------------------------------------------------
  double noise_ratio = 0;      // mismatched pairs (image-level by default) or label noise (uotrcl)
  std::string noise_file;      // a published noise index / label file (overrides generation)
  std::optional<NoiseMode> noise_mode;  // unset = the method's protocol (its defaults)
  int64_t noise_seed = -1;     // -1: the run seed

  // ---- schedule ---------------------------------------------------------------------------------------------
  int64_t batch_size = -1;
  int64_t num_epochs = -1;     // main epochs (warm-up epochs come on top for l2rm, inside for uotrcl: §4.3)
  int64_t warmup_epoch = -1;
  double learning_rate = std::numeric_limits<double>::quiet_NaN();
  int64_t lr_update = -1;      // ×0.1 every lr_update epochs
  double grad_clip = std::numeric_limits<double>::quiet_NaN();  // global norm clip (0 = off): 2 (SGRAF, RCSL), 0 (uotrcl)

  // ---- run folder -------------------------------------------------------------------------------------------
  std::string run_dir;              // "" = runs/<method>-<YYYYmmdd-HHMMSS>
  std::string resume;               // a run folder to continue
  bool overwrite = false;           // reuse a run folder that holds a finished or abandoned run
  run::ProgressStyle progress = run::ProgressStyle::Auto;  // auto | bar | plain | none
  int64_t log_step = 10;            // metrics.jsonl step records (and plain progress lines) every log_step steps
  bool plots = true;
  bool detect_anomaly = false;      // anomaly mode for every step (slow); a NaN loss retries its step with it anyway
  int64_t max_steps = -1;           // stop each epoch after this many steps (smoke runs and tests)
  int64_t eval_batch = 100;         // evaluation block size (images × captions)

  // The test split's name ("test" when unset).
  std::string test_split_name() const;
};

// The common options and the typed section of each method.
struct TrainConfig : CommonOptions {
  // The section S of its method: config.options<L2rmOptions>().reg. Created with its defaults on first use.
  template <class S> S& options() { return sections_.get<S>(); }
  template <class S> const S& options() const { return sections_.get<S>(); }

 private:
  OptionSections sections_;
};

// The table of the common options (their flags, ranges and help), and the defaults every method shares, applied
// after the method's own (method_spec.h).
const OptionTable& common_flags();
struct Default;
const std::vector<Default>& common_defaults();

// Fills method- and preset-dependent defaults (the method's MethodSpec::defaults, then the common ones) and
// checks the result (check_config): an unknown method or preset, a missing --data_path, rcsl without
// --paired_length, a value out of range — an Error naming the flag. A new run's config is resolved once.
void resolve_defaults(TrainConfig& config);

// The checks of resolve_defaults without filling anything (make_method runs them again on the config it is
// given): an ablation switch given to a method it does not belong to, what the method requires, the data
// layout's choices, every range of the common and the method's flags, then the method's checks across flags.
void check_config(const TrainConfig& config);

// The config as pretty JSON (config.json: every flag of every method, flat) and back (resume reads it).
std::string to_json(const TrainConfig& config);
TrainConfig train_config_from_json(const std::string& text);

// The config.json text of a run being resumed, read from `path`: parsed, then checked as resolve_defaults
// checks the flags of a new run (the file may have been edited or damaged since the run wrote it). Every error
// names the file.
TrainConfig resumed_train_config(const std::string& text, const std::string& path);

}  // namespace rematch::train
