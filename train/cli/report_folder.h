// The folder `rematch retrieve --out` writes its page into (index.html or retrieval.html, detection.png or
// labels.png, thumbs/), replaced by the next report there. Like --overwrite of a run folder and the demo's --out
// (train/run/run_folder_contents.h, train/cli/demo_folder.h), a report replaces only what a report wrote: the
// folder must be new, empty, or hold a page rematch wrote (its head, viz/written_by_rematch.h) and nothing else a
// report does not write; never the root, home or current folder, never a file.
#pragma once

#include <string>

namespace rematch::cli {

// Why a report cannot be written to `out`, naming what is in the way and what to do, or "" when it can.
std::string report_folder_problem(const std::string& out);

}  // namespace rematch::cli
