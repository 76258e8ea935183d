// How rematch tells the files it wrote from a user's own, so that replacing a run, a report or a demo deletes
// only its own (train/run/run_folder_contents.h, train/cli/report_folder.h, train/cli/demo_folder.h):
//   - every PNG rematch writes (plots, report pictures, thumbnails, drawn scenes) carries a tEXt chunk
//     "Software" = "rematch" right after its IHDR (with_rematch_png_marker);
//   - every HTML page carries kGeneratorMeta in its head (viz/html.h); a page of an earlier rematch, written
//     before that line, is recognised by its head: html_page_start's exact text without that line, around any
//     title, stylesheet included.
// Only regular files are read (never a symbolic link, FIFO or folder), and only their first kilobytes.
#pragma once

#include <string>
#include <string_view>

namespace rematch::viz {

// The PNG `png` (as stb_image_write encodes it: the signature, then IHDR) with the tEXt chunk above inserted
// after IHDR; the pixels are unchanged.
std::string with_rematch_png_marker(const std::string& png);

// Whether `head`, the start of a file, is a PNG whose chunks before IDAT include the tEXt marker above.
bool png_head_marked_by_rematch(std::string_view head);

// Whether `head`, the start of a file, is an HTML page html_page_start wrote, now or before kGeneratorMeta.
bool page_head_written_by_rematch(std::string_view head);

// The file at `path` read as above: a PNG carrying the marker, or a page rematch wrote. False for anything
// else, a symbolic link, a FIFO or a file that cannot be read.
bool png_written_by_rematch(const std::string& path);
bool page_written_by_rematch(const std::string& path);

}  // namespace rematch::viz
