// The "labels a run corrected" page (docs/viz.md §4.3): for a method that corrects the class labels of its
// training pairs (UOT-RCL), each epoch's corrected labels against the clean ones and the noisy ones it was given:
// accuracy per epoch (table and plot), and the pairs of the last recorded epoch in four sections — fixed (noisy
// label wrong, corrected right), broken (noisy right, corrected wrong), still wrong, unchanged and right. Each card
// carries data-sample, data-clean, data-noisy and data-corrected for programs.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rematch::viz {

// One epoch's corrected labels against the truth.
struct LabelEpoch {
  int64_t epoch = 0;
  int64_t samples = 0;
  int64_t fixed = 0;   // noisy label wrong, corrected label right
  int64_t broken = 0;  // noisy label right, corrected label wrong
  double corrected_accuracy = 0, noisy_accuracy = 0;
};

// The counts above from three label lists of equal length (an Error when they differ).
LabelEpoch label_epoch(int64_t epoch, const std::vector<int64_t>& clean, const std::vector<int64_t>& noisy,
                       const std::vector<int64_t>& corrected);

struct LabelCard {
  int64_t sample = 0;
  int64_t clean = 0, noisy = 0, corrected = 0;
};

struct LabelSection {
  std::string title, note;
  int64_t total = 0;  // samples in the category (cards are a sample of them)
  std::vector<LabelCard> cards;
};

struct LabelPage {
  std::string title, summary;
  std::vector<std::pair<std::string, std::string>> links;  // (href, text) under the title
  std::vector<LabelEpoch> per_epoch;
  std::string plot;  // the accuracy plot, relative to the page ("" when none)
  std::vector<LabelSection> sections;
};

std::string label_html(const LabelPage& page);

}  // namespace rematch::viz
