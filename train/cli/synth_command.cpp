#include "train/cli/synth_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "train/cli/app.h"
#include "train/cli/number_checks.h"
#include "train/synth/labeled_world.h"
#include "train/synth/pairs_world.h"

namespace rematch::cli {
namespace {

struct SynthOptions {
  std::string kind;
  std::string out;
  std::string data_name;
  uint64_t seed = 0;
  double feature_noise = 0;
  synth::PairsWorldConfig pairs;
  synth::LabeledWorldConfig labeled;
  std::vector<CLI::Option*> pairs_only, labeled_only;
  CLI::Option* data_name_opt = nullptr;
  CLI::Option* noise_opt = nullptr;
};

// A flag of the other kind is almost certainly a mistake (it would be silently ignored), so it is refused.
void refuse_other_kind(const std::vector<CLI::Option*>& opts, const std::string& kind) {
  for (const CLI::Option* o : opts)
    if (o->count() > 0) throw UsageError(o->get_name() + " does not apply to --kind " + kind);
}

std::string shape_of(const Tensor& t) { return t.shape_str(); }

void run_pairs(SynthOptions& o, std::ostream& out) {
  refuse_other_kind(o.labeled_only, "pairs");
  synth::PairsWorldConfig c = o.pairs;
  c.seed = o.seed;
  if (o.data_name_opt->count() > 0) c.data_name = o.data_name;
  if (o.noise_opt->count() > 0) c.feature_noise = o.feature_noise;
  try {
    synth::validate(c);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  const synth::PairsWorld world = synth::make_pairs_world(c);
  const synth::PairsWorldFiles files = synth::write_pairs_world(world, o.out);
  out << "synthetic image-caption benchmark '" << c.data_name << "' (seed " << c.seed << ")\n"
      << "  data:  " << files.data_dir << "   (--data_path " << o.out << " --data_name " << c.data_name << ")\n"
      << "  vocab: " << files.vocab_path << "   (" << world.vocabulary.size() << " words; --vocab_path "
      << std::filesystem::path(files.vocab_path).parent_path().string() << ")\n"
      << "  pictures: " << files.images_dir << "   (each image drawn from its objects and attributes)\n";
  for (const auto& s : world.splits)
    out << "  " << s.name << ": " << s.images.size(0) << " images " << shape_of(s.images) << ", "
        << s.captions.size() << " captions\n";
  out << "  e.g. test caption 0: \"" << world.split("test").captions[0] << "\"\n";
}

void run_labeled(SynthOptions& o, std::ostream& out) {
  refuse_other_kind(o.pairs_only, "labeled");
  synth::LabeledWorldConfig c = o.labeled;
  c.seed = o.seed;
  if (o.data_name_opt->count() > 0) c.name = o.data_name;
  if (o.noise_opt->count() > 0) c.feature_noise = o.feature_noise;
  try {
    synth::validate(c);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  const synth::LabeledWorld world = synth::make_labeled_world(c);
  const std::string dir = synth::write_labeled_world(world, o.out);
  out << "synthetic labelled cross-modal benchmark '" << c.name << "' (seed " << c.seed << ", " << c.classes
      << " classes)\n  data:  " << dir << "\n";
  for (const auto& s : world.splits)
    out << "  " << s.name << ": images " << shape_of(s.images) << ", texts " << shape_of(s.texts) << ", labels "
        << shape_of(s.labels) << "\n";
}

}  // namespace

void add_synth_command(CLI::App& app, std::ostream& out) {
  auto o = std::make_shared<SynthOptions>();
  CLI::App* cmd = app.add_subcommand("synth", "Write a synthetic benchmark with planted cross-modal structure");
  cmd->add_option("--kind", o->kind, "pairs: image regions + captions (SCAN precomp layout); "
                                     "labeled: class-labelled image/text features (.npy layout of load_labeled_npy)")
      ->required()
      ->check(CLI::IsMember({"pairs", "labeled"}));
  cmd->add_option("--out", o->out, "Output folder (created if needed)")->required();
  cmd->add_option("--seed", o->seed, "Random seed; the same seed gives the same files")->capture_default_str();
  o->data_name_opt = cmd->add_option("--data_name", o->data_name,
                                     "Folder name of the data set (default synth_precomp / synth_labeled)");
  o->noise_opt = cmd->add_option("--feature_noise", o->feature_noise,
                                 "Std of the feature noise (default 0.5 pairs / 0.3 labeled)")
                     ->check(kNonNegative);

  synth::PairsWorldConfig& p = o->pairs;
  auto pairs_opt = [&](const std::string& name, auto& field, const std::string& help) {
    CLI::Option* opt = cmd->add_option(name, field, help + " [pairs]")->capture_default_str();
    o->pairs_only.push_back(opt);
    return opt;
  };
  pairs_opt("--images", p.train_images, "Training images")->check(kPositiveCount);
  pairs_opt("--dev_images", p.dev_images, "Validation images")->check(kPositiveCount);
  pairs_opt("--test_images", p.test_images, "Test images")->check(kPositiveCount);
  pairs_opt("--meta_images", p.meta_images, "Images of a clean meta split, meta_ims.npy + meta_caps.txt (MSCN's "
            "--meta_source split); 0: none")->check(kNonNegativeCount);
  pairs_opt("--regions", p.regions, "Regions per image (>= 2)")->check(CLI::Range(int64_t{2}, int64_t{1} << 20));
  pairs_opt("--feature_dim", p.feature_dim, "Region feature size")->check(kPositiveCount);
  pairs_opt("--concepts", p.concepts, "Object concepts")
      ->check(CLI::Range(int64_t{2}, synth::max_object_concepts()));
  pairs_opt("--attributes", p.attributes, "Attribute concepts")
      ->check(CLI::Range(int64_t{2}, synth::max_attribute_concepts()));
  pairs_opt("--twin_fraction", p.twin_fraction, "Share of images in twin pairs (same objects, swapped attributes)")
      ->check(CLI::Range(0.0, 1.0));

  synth::LabeledWorldConfig& l = o->labeled;
  auto labeled_opt = [&](const std::string& name, auto& field, const std::string& help) {
    CLI::Option* opt = cmd->add_option(name, field, help + " [labeled]")->capture_default_str();
    o->labeled_only.push_back(opt);
    return opt;
  };
  labeled_opt("--classes", l.classes, "Classes (>= 2)")->check(CLI::Range(int64_t{2}, int64_t{1} << 20));
  labeled_opt("--samples", l.train_samples, "Training samples")->check(kPositiveCount);
  labeled_opt("--valid_samples", l.valid_samples, "Validation samples")->check(kPositiveCount);
  labeled_opt("--test_samples", l.test_samples, "Test samples")->check(kPositiveCount);
  labeled_opt("--img_dim", l.img_dim, "Image feature size")->check(kPositiveCount);
  labeled_opt("--txt_dim", l.txt_dim, "Text feature size")->check(kPositiveCount);
  labeled_opt("--class_spread", l.class_spread, "Within-class spread of the shared latent")
      ->check(kNonNegative);

  cmd->callback([o, &out] {
    if (o->kind == "pairs") {
      run_pairs(*o, out);
    } else {
      run_labeled(*o, out);
    }
  });
}

}  // namespace rematch::cli
