// The pieces of rematch's self-contained HTML reports (docs/viz.md §1): one file with inline CSS, no script and
// nothing fetched from the network, so a report opens from a copied folder, offline, years later.
#pragma once

#include <string>

namespace rematch::viz {

// Text for HTML content and attribute values: & < > " ' escaped.
std::string html_escape(const std::string& text);

// "<!DOCTYPE html>..." up to and including <body>, with the report's stylesheet; `title` is escaped.
std::string html_page_start(const std::string& title);
std::string html_page_end();

// A number with `digits` decimals.
std::string fixed_str(double value, int digits);

}  // namespace rematch::viz
