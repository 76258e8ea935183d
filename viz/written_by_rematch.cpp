#include "viz/written_by_rematch.h"

#include <array>
#include <cstdint>
#include <filesystem>

#include "tensor/file_io.h"
#include "viz/html.h"

namespace rematch::viz {
namespace {

constexpr std::string_view kPngSignature("\x89PNG\r\n\x1a\n", 8);
// The tEXt chunk's data: keyword, a zero byte, text (the PNG specification's "Software" keyword).
constexpr std::string_view kMarkerText("Software\0rematch", 16);
// Enough for the signature, IHDR and the marker, and for html_page_start's head with a long title.
constexpr size_t kHeadBytes = 8192;

uint32_t crc32(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  uint32_t c = 0xffffffffu;
  for (unsigned char b : bytes) c = table[(c ^ b) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

void put_be32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}

uint32_t be32(std::string_view s, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

// The first kHeadBytes of a regular file that is no symbolic link, or "" when it is not one or cannot be read.
std::string head_of(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::symlink_status(path, ec);
  if (ec || !std::filesystem::is_regular_file(st)) return "";
  try {
    const io::ReadFile f(path, "file");
    std::string head(kHeadBytes, '\0');
    head.resize(f.read_at(head.data(), head.size(), 0));
    return head;
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace

std::string with_rematch_png_marker(const std::string& png) {
  constexpr size_t kAfterIhdr = 8 + 4 + 4 + 13 + 4;  // signature, IHDR's length, type, data and CRC
  // IHDR's length is always 13: with another, the marker would land inside a chunk, so the bytes stay as they are.
  if (png.size() < kAfterIhdr || png.compare(0, 8, kPngSignature) != 0 || be32(png, 8) != 13 ||
      png.compare(12, 4, "IHDR") != 0)
    return png;
  std::string chunk;
  put_be32(chunk, static_cast<uint32_t>(kMarkerText.size()));
  chunk += "tEXt";
  chunk += kMarkerText;
  put_be32(chunk, crc32(std::string_view(chunk).substr(4)));  // over the type and the data
  return png.substr(0, kAfterIhdr) + chunk + png.substr(kAfterIhdr);
}

bool png_head_marked_by_rematch(std::string_view head) {
  if (head.size() < 8 || head.substr(0, 8) != kPngSignature) return false;
  for (size_t at = 8; at + 12 <= head.size();) {
    const uint32_t length = be32(head, at);
    const std::string_view type = head.substr(at + 4, 4);
    if (type == "IDAT" || type == "IEND" || length > head.size()) return false;
    if (type == "tEXt" && length == kMarkerText.size() && at + 8 + length <= head.size() &&
        head.substr(at + 8, length) == kMarkerText)
      return true;
    at += 12 + static_cast<size_t>(length);
  }
  return false;
}

bool page_head_written_by_rematch(std::string_view head) {
  if (head.find(kGeneratorMeta) != std::string_view::npos) return true;
  // An earlier rematch's page: html_page_start without the generator line, any title.
  const std::string now = html_page_start("");
  const std::string generator_line = std::string(kGeneratorMeta) + "\n";
  const size_t line_at = now.find(generator_line);
  const size_t title_end = now.find("</title>\n");
  if (line_at == std::string::npos || title_end == std::string::npos) return false;
  const std::string before_title = now.substr(0, line_at) + "<title>";  // "<!DOCTYPE html>...<title>"
  const std::string after_title = now.substr(title_end);                 // "</title>\n<style>...<body>\n"
  if (head.substr(0, before_title.size()) != before_title) return false;
  const size_t end = head.find("</title>\n", before_title.size());
  return end != std::string_view::npos && head.substr(end, after_title.size()) == after_title;
}

bool png_written_by_rematch(const std::string& path) { return png_head_marked_by_rematch(head_of(path)); }

bool page_written_by_rematch(const std::string& path) { return page_head_written_by_rematch(head_of(path)); }

}  // namespace rematch::viz
