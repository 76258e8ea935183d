// What a folder given as a run folder holds, told apart by who wrote it, so that starting a run there never
// deletes or writes over anything rematch did not write itself:
//   - a run folder is recognised by its config.json: a JSON object with a string "method" (what `rematch train`
//     writes; a config.json of another tool, or none, is not a run);
//   - the entries rematch writes directly in a run folder are those of run_folder.h (config.json, metrics.jsonl,
//     the two checkpoints, results.md, run.lock, plots/), the method's record of its noise (noise_index.npy,
//     noisy_labels.npy), its per-epoch splits (splits/), the report `rematch retrieve --run` writes (report/),
//     and the temporary files of atomic writes of any of them (<name>.tmp.<pid>.<n>); inside plots/, splits/
//     and report/ only what rematch puts there, told by its content too (viz/written_by_rematch.h): PNG plots
//     carrying rematch's marker, or an earlier rematch's unmarked plots of the names it gave them (loss.png,
//     validation.png, the methods' statistics; detection.png, labels.png in report/); splits' epoch_<e>.json
//     holding what viz::write_epoch_split writes for epoch e, and the epoch_<e>.npy beside it; pages with
//     rematch's head; report/thumbs/ by name (.png, .jpg). Anything else there (a figure of the user's in
//     plots/, a page of their own) is foreign: --overwrite refuses naming it, never deletes it.
#pragma once

#include <string>
#include <vector>

namespace rematch::run {

// Whether dir/config.json is a run's (see above). False when it is missing, unreadable or not such an object.
bool holds_rematch_config(const std::string& dir);

// The entries under `dir` (relative paths, sorted) that rematch does not write in a run folder; empty when the
// folder does not exist.
std::vector<std::string> foreign_entries(const std::string& dir);

// Whether `file`, directly in a run's subfolder `folder` ("plots", "splits" or "report"), is one rematch wrote
// there (see above): what a run may delete there without asking.
bool written_by_rematch_in(const std::string& folder, const std::string& file);

// The entries under a report folder of `rematch retrieve --run` (relative to it, sorted) that it does not write
// (its pages, plots and thumbs/ of pictures); empty when the folder does not exist.
std::vector<std::string> foreign_report_entries(const std::string& report_dir);

// The entries directly in `dir` (names, sorted) that a run writes and that hold something: every entry rematch
// writes except run.lock, temporary files and a plots/ without other files (what a refused or killed start
// leaves behind).
std::vector<std::string> run_entries_with_content(const std::string& dir);

// Why `dir` may never be emptied as a run folder ("the root folder", "your home folder", "the current folder"),
// or "" when it may. Compares canonical paths, so "." and "./" and a symbolic link to the home folder count.
std::string protected_folder(const std::string& dir);

// Deletes every entry directly in `dir` that rematch writes in a run folder (see above), folders recursively,
// except run.lock (held by the caller). Returns the first path it could not delete and why, or "" when none.
std::string remove_run_entries(const std::string& dir);

// "a, b, c" of at most `shown` names, then "and N more".
std::string list_names(const std::vector<std::string>& names, size_t shown = 8);

}  // namespace rematch::run
