// The "what the run caught" page (docs/viz.md §4): the training pairs a method flagged as mismatched and those it
// kept, each with its image (thumbnail, or id and one of the image's own captions) and its caption, sorted into
// sections (with known noise: caught, false alarms, missed, kept), and the detection's precision and recall per
// epoch, as a table and a plot. Each card carries data-caption, data-row, data-truth and data-decision for programs.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "viz/epoch_splits.h"

namespace rematch::viz {

struct PairCard {
  int64_t caption = 0;      // the training caption
  int64_t row = 0;          // the image row it was trained with
  std::string caption_text;
  std::string image_id;
  std::string thumbnail;    // relative to the page, "" when there is none
  std::string image_says;   // without a thumbnail: one of the row's own captions
  std::string truth;        // "mismatched", "matched" or "" (unknown)
  std::string decision;     // "flagged", "kept", "weight 0.12", ...
};

struct PairSection {
  std::string title, note;
  int64_t total = 0;  // pairs in the category (cards are a sample of them)
  std::vector<PairCard> cards;
};

struct CaughtPage {
  std::string title, summary;
  std::vector<std::pair<std::string, std::string>> links;  // (href, text) shown under the title
  std::vector<Detection> per_epoch;  // empty when the noise is not known
  std::string plot;                  // the precision/recall plot, relative to the page ("" when none)
  std::vector<PairSection> sections;
};

std::string caught_html(const CaughtPage& page);

}  // namespace rematch::viz
