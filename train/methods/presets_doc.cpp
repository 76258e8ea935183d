#include "train/methods/presets_doc.h"

#include <cctype>
#include <set>
#include <sstream>
#include <vector>

#include "train/methods/method_spec.h"

namespace rematch::train {
namespace {

const char* const kIntro = R"(# Presets and where each value comes from

<!-- Generated from the flag tables and the methods' defaults (train/methods/train_config.cpp and each method
folder's *_options.cpp; train/methods/presets_doc.cpp writes this page). Edit those, then run
REMATCH_WRITE_DOCS=1 train_tests --gtest_filter=PresetsDoc.*: tests/train/reproduce_doc_test.cpp fails while this
file differs from them. -->

`rematch train --preset P` fills every value a flag does not give with the official run's value for the method
and data set (`resolve_defaults`, from each method's defaults). `--dry_run` prints the result as JSON, and every
run's `config.json` records it. This page gives the source of each value: a script or options file of the official
code (at the commit named), or the paper where there is no code (UOT-RCL), or our own choice where neither says
(marked **ours**, with the reason). Flags always win over a preset; "no --preset" is the value without one.

Sources, as read (methods/shared.md §0.5 lists the snapshots the method pages were written from):

| short name | what | commit |
|---|---|---|
| L2RM scripts | `hhc1997/L2RM`: `train_f30k.sh`, `tarin_coco.sh` (sic), `train_cc152.sh`, `opt.py`, `main_L2RM.py`, `data.py` | 537793c |
| RCL scripts | `penghu-cs/RCL/RCL-SGRAF`: `train_f30k.sh`, `train_coco.sh`, `train_cc152k.sh`, `opts.py`, `train.py`, `evaluate_model.py`, `data.py` | c059a98 (`train_cc152k.sh`, `evaluate_model.py`), 04a7e01 / 89c7d1e (F30K / COCO scripts), 5800ee1 (`opts.py`) |
| SGRAF | `Paranioar/SGRAF`: README "Training new models from scratch", `opts.py` | 18937f5, 44dc4bb |
| RCSL scripts | `QinYang79/RCSL`: `train.sh`, `opts.py`, `train.py`, `data.py`, `model.py` | 6e99081 |
| UOT-RCL §V-B | the UOT-RCL paper, "Implementation details" (seed `001`); MRL's `main_noisy.py` for the splits | — |

The RCL repository in the snapshot methods/shared.md §0.5 names (1096a24) had no CC152K script; `train_cc152k.sh` is
in the later commit c059a98 and gives the 40 / 20 / 2e-4 used here.
)";

std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string shown(const Flag& f, const nlohmann::json& v) {
  if (f.kind == FlagKind::Switch) return v.get<bool>() ? "on" : "off";
  if (v.is_string() && v.get<std::string>().empty()) return "—";
  if (f.kind == FlagKind::Integer && v.is_number_integer() && v.get<int64_t>() < 0) return "—";
  return format_value(v);
}

const Flag& flag_named(const MethodSpec* spec, const std::string& name) {
  const TrainFlag* f = find_train_flag(name);
  return spec ? f->of(spec->name) : f->first();
}

// The cell of a default for one preset ("" = without --preset).
std::string default_cell(const Default& d, const Flag& f, const std::string& preset) {
  const nlohmann::json* any = nullptr;
  for (const auto& [p, v] : d.values) {
    if (p == preset) return cell(v.is_string() && d.rule ? v.get<std::string>() : shown(f, v));
    if (p == "*") any = &v;
  }
  if (any) return cell(shown(f, *any));
  if (d.rule) return cell(d.rule_text);
  return "—";
}

std::string flag_cell(const Flag& f) {
  return "`--" + (f.negated_switch.empty() ? f.name : f.negated_switch) + "`" + (f.ablation ? " (ablation)" : "");
}

void defaults_table(std::ostringstream& s, const std::vector<Default>& defaults, const MethodSpec* spec,
                    const std::vector<std::string>& presets) {
  s << "| value |";
  for (const std::string& p : presets) s << " " << (p.empty() ? "no --preset" : p) << " |";
  s << " source |\n|---|";
  for (size_t i = 0; i < presets.size(); ++i) s << "---|";
  s << "---|\n";
  for (const Default& d : defaults) {
    const Flag& f = flag_named(spec, d.flag);
    s << "| " << flag_cell(f) << " |";
    for (const std::string& p : presets) s << " " << default_cell(d, f, p) << " |";
    s << " " << cell(d.source) << " |\n";
  }
}

void options_table(std::ostringstream& s, const OptionTable& table, const std::set<std::string>& with_defaults) {
  s << "| option | default | allowed | source |\n|---|---|---|---|\n";
  for (const Flag& f : table.flags) {
    std::string allowed = f.range_text();
    if (f.kind == FlagKind::Choice) {
      for (const std::string& c : f.choices)
        if (!c.empty()) allowed += (allowed.empty() ? "" : " \\| ") + c;
    }
    const std::string value = with_defaults.count(f.name)  ? "per method and preset (above)"
                              : !f.negated_switch.empty() ? "off"
                                                          : shown(f, f.initial);
    s << "| " << flag_cell(f) << " | " << cell(value) << " | " << allowed << " | " << cell(f.source) << " |\n";
  }
}

}  // namespace

std::string presets_markdown() {
  std::ostringstream s;
  s << kIntro;

  s << "\n## What every method shares\n\nAfter a method's own defaults (below), where its flag is still not "
       "given:\n\n| value | default | source |\n|---|---|---|\n";
  for (const Default& d : common_defaults()) {
    const Flag& f = flag_named(nullptr, d.flag);
    std::string value = d.rule ? d.rule_text : "";
    for (const auto& [p, v] : d.values)
      value += (value.empty() ? "" : ", ") + (p == "*" ? "" : "with --preset " + p + ": ") + shown(f, v);
    s << "| " << flag_cell(f) << " | " << cell(value) << " | " << cell(d.source) << " |\n";
  }

  std::set<std::string> with_defaults;  // flags some method or preset sets
  for (const Default& d : common_defaults()) with_defaults.insert(d.flag);
  for (const MethodSpec* m : registered_methods()) {
    for (const Default& d : m->defaults) with_defaults.insert(d.flag);
    std::vector<std::string> presets = m->presets;
    presets.push_back("");
    std::string summary = m->summary;
    if (!summary.empty()) summary[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(summary[0])));
    s << "\n## " << m->name << " (`--method " << m->name << "`)\n\n" << summary << " (" << m->doc
      << "). Its defaults, applied in this order where the flag is not given:\n\n";
    defaults_table(s, m->defaults, m, presets);
  }

  s << "\n## Every option's own default\n\nThe value of each option that no preset changes, what it allows, and "
       "where it comes from; a switch marked (ablation) removes a piece of its method as a paper's ablation table "
       "does and is refused for another method.\n";
  std::set<std::string> titles;
  std::vector<const OptionTable*> tables = {&common_flags()};
  for (const MethodSpec* m : registered_methods())
    for (const OptionTable* t : m->tables) tables.push_back(t);
  for (const OptionTable* t : tables) {
    if (!titles.insert(t->title).second) continue;
    s << "\n### " << (t == &common_flags() ? t->title : group_title(t->title)) << "\n\n";
    options_table(s, *t, with_defaults);
  }
  return s.str();
}

}  // namespace rematch::train
