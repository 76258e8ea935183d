// The retrieval report of `rematch retrieve` (docs/viz.md §3): for query images their top-k captions, for query
// captions their top-k images, each with its score and the ground truth marked, ranked exactly as `rematch eval`
// ranks (train/eval/retrieval_metrics.h: by decreasing score, ties to the higher index). One HTML file plus the
// thumbnails it names; without a picture an image shows its id and its own captions.
//
// The page is also read by programs (the tests): each query is an element with data-query-image="i" or
// data-query-caption="j" and data-gt-rank (eval's 0-based rank of its first ground truth), each result an
// element with data-rank (1-based), data-caption="j" or data-image="i", data-score, and class "gt" or "miss".
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace rematch::viz {

struct Ranked {
  int64_t index = 0;  // caption (image queries) or image (caption queries)
  double score = 0;
  bool ground_truth = false;
};

// The k best of one row (image i against every caption) or one column (caption j against every image) of a
// similarity matrix [N_img, N_cap] whose captions c·i .. c·i + c − 1 belong to image i, in eval's order.
std::vector<Ranked> top_captions(const Tensor& sims, int64_t image, int64_t captions_per_image, int64_t k);
std::vector<Ranked> top_images(const Tensor& sims, int64_t caption, int64_t captions_per_image, int64_t k);

struct PageImage {
  std::string id;         // the data set's id or file name ("" when unknown)
  std::string thumbnail;  // path relative to the page ("" when there is no picture)
};

struct ImageQuery {
  int64_t image = 0;
  int64_t gt_rank = 0;  // eval's i2t rank
  std::vector<Ranked> captions;
};

struct CaptionQuery {
  int64_t caption = 0;
  int64_t gt_rank = 0;  // eval's t2i rank
  std::vector<Ranked> images;
};

struct RetrievalPage {
  std::string title;
  std::vector<std::pair<std::string, std::string>> links;  // (href, text) shown under the title
  std::string summary;        // what was scored, on which split
  std::string metrics_table;  // preformatted (eval's table)
  int64_t captions_per_image = 5;
  std::vector<PageImage> images;      // N_img
  std::vector<std::string> captions;  // N_cap
  std::vector<ImageQuery> image_queries;
  std::vector<CaptionQuery> caption_queries;
};

std::string retrieval_html(const RetrievalPage& page);

}  // namespace rematch::viz
