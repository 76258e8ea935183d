// The pieces of rematch's self-contained HTML reports (docs/viz.md §1): one file with inline CSS, no script and
// nothing fetched from the network, so a report opens from a copied folder, offline, years later.
#pragma once

#include <string>

namespace rematch::viz {

// Text for HTML content and attribute values: & < > " ' escaped.
std::string html_escape(const std::string& text);

// The line every page carries in its <head>: how `rematch retrieve --out` and `train --overwrite` tell a page it
// wrote from a user's own (viz/written_by_rematch.h).
inline constexpr const char* kGeneratorMeta = "<meta name=\"generator\" content=\"rematch\">";

// "<!DOCTYPE html>..." up to and including <body>, with the report's stylesheet and kGeneratorMeta; `title` is
// escaped.
std::string html_page_start(const std::string& title);
std::string html_page_end();

// A number with `digits` decimals.
std::string fixed_str(double value, int digits);

}  // namespace rematch::viz
