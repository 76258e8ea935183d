// docs/presets.md, written from the flag tables and the methods' defaults (options.h, method_spec.h): for every
// method, each value a preset or the method sets, per preset, with its source, then every other option of its
// tables with its default and source. tests/train/reproduce_doc_test.cpp checks that the file equals this text
// (REMATCH_WRITE_DOCS=1 makes that test write it).
#pragma once

#include <string>

namespace rematch::train {

std::string presets_markdown();

}  // namespace rematch::train
