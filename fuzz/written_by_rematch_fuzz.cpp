// How `train --overwrite`, `retrieve --out` and `demo --out` tell rematch's files from a user's
// (viz/written_by_rematch.h): the head of any file a user leaves in a run's plots/ or report/ (or a report folder)
// is read as a PNG chunk list and as a page head. Neither may read past the bytes it is given; and the marker
// with_rematch_png_marker adds to a PNG whose IHDR is well formed is always found again.
#include "fuzz/fuzz_util.h"
#include "viz/written_by_rematch.h"

using namespace rematch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(fuzz::bytes(data, size));
  (void)viz::page_head_written_by_rematch(input);
  const bool marked = viz::png_head_marked_by_rematch(input);
  const std::string with_marker = viz::with_rematch_png_marker(input);
  const bool well_formed_ihdr = input.size() >= 33 && input.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0 &&
                                input.compare(8, 8, std::string("\0\0\0\x0dIHDR", 8)) == 0;
  if (well_formed_ihdr && !viz::png_head_marked_by_rematch(with_marker)) __builtin_trap();
  if (!well_formed_ihdr && with_marker != input) __builtin_trap();  // anything else is left as it is
  (void)marked;
  return 0;
}
