#include "viz/retrieval_page.h"

#include <algorithm>
#include <numeric>

#include "tensor/error.h"
#include "tensor/kernels.h"
#include "viz/html.h"

namespace rematch::viz {
namespace {

std::vector<double> host_values(const Tensor& t) {
  return kernels::contiguous(kernels::cast(t, DType::Float64)).to_vector<double>();
}

Tensor host_matrix(const Tensor& sims) {
  REMATCH_CHECK(sims.dim() == 2, "retrieval page: the similarity matrix must be 2-D, got ", sims.shape_str());
  return kernels::to_device(sims, Device::cpu());
}

// eval's order (retrieval_metrics.h): higher score first, among equal scores the higher index first.
std::vector<Ranked> best_of(std::vector<Ranked> all, int64_t k) {
  const size_t n = std::min<size_t>(all.size(), static_cast<size_t>(std::max<int64_t>(k, 0)));
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(),
                    [](const Ranked& a, const Ranked& b) {
                      return a.score > b.score || (a.score == b.score && a.index > b.index);
                    });
  all.resize(n);
  return all;
}

}  // namespace

std::vector<Ranked> top_captions(const Tensor& sims, int64_t image, int64_t cpi, int64_t k) {
  const Tensor host = host_matrix(sims);
  REMATCH_CHECK(image >= 0 && image < host.size(0), "retrieval page: image ", image, " out of range");
  const std::vector<double> row = host_values(kernels::select(host, 0, image));
  std::vector<Ranked> all(row.size());
  for (size_t j = 0; j < row.size(); ++j)
    all[j] = {static_cast<int64_t>(j), row[j], static_cast<int64_t>(j) / cpi == image};
  return best_of(std::move(all), k);
}

std::vector<Ranked> top_images(const Tensor& sims, int64_t caption, int64_t cpi, int64_t k) {
  const Tensor host = host_matrix(sims);
  REMATCH_CHECK(caption >= 0 && caption < host.size(1), "retrieval page: caption ", caption, " out of range");
  const std::vector<double> column = host_values(kernels::select(host, 1, caption));
  std::vector<Ranked> all(column.size());
  for (size_t i = 0; i < column.size(); ++i)
    all[i] = {static_cast<int64_t>(i), column[i], static_cast<int64_t>(i) == caption / cpi};
  return best_of(std::move(all), k);
}

namespace {

std::string image_block(const RetrievalPage& p, int64_t i, bool with_captions) {
  const PageImage& im = p.images[static_cast<size_t>(i)];
  std::string s;
  if (!im.thumbnail.empty())
    s += "<img src=\"" + html_escape(im.thumbnail) + "\" alt=\"image " + std::to_string(i) + "\"><br>";
  s += "<span class=\"id\">image " + std::to_string(i) + (im.id.empty() ? "" : " &middot; " + html_escape(im.id)) +
       "</span>";
  if (im.thumbnail.empty() && with_captions) {
    // No picture: the image's own captions say what it shows.
    s += "<ul class=\"small\">";
    for (int64_t j = i * p.captions_per_image; j < (i + 1) * p.captions_per_image; ++j)
      s += "<li>" + html_escape(p.captions[static_cast<size_t>(j)]) + "</li>";
    s += "</ul>";
  }
  return s;
}

std::string rank_note(int64_t gt_rank) {
  return gt_rank == 0 ? "found first" : "ground truth at rank " + std::to_string(gt_rank + 1);
}

}  // namespace

std::string retrieval_html(const RetrievalPage& p) {
  std::string h = html_page_start(p.title);
  h += "<h1>" + html_escape(p.title) + "</h1>\n<p class=\"lead\">" + html_escape(p.summary) + "</p>\n";
  for (const auto& [href, text] : p.links)
    h += "<p><a href=\"" + html_escape(href) + "\">" + html_escape(text) + "</a></p>\n";
  if (!p.metrics_table.empty()) h += "<pre class=\"small\">" + html_escape(p.metrics_table) + "</pre>\n";
  h += "<p class=\"small\">Green rows are ground truth: the captions written for the query image, or the image a "
       "query caption was written for. Scores are the model's similarities; ranks are those of "
       "<code>rematch eval</code>.</p>\n";
  if (!p.image_queries.empty()) h += "<h2>Images &rarr; captions</h2>\n";
  for (const ImageQuery& q : p.image_queries) {
    h += "<div class=\"query\" data-query-image=\"" + std::to_string(q.image) + "\" data-gt-rank=\"" +
         std::to_string(q.gt_rank) + "\">\n<div class=\"probe\">" + image_block(p, q.image, true) +
         "<br><span class=\"small\">" + rank_note(q.gt_rank) + "</span></div>\n<ol>\n";
    for (size_t r = 0; r < q.captions.size(); ++r) {
      const Ranked& c = q.captions[r];
      h += "<li class=\"" + std::string(c.ground_truth ? "gt" : "miss") + "\" data-rank=\"" + std::to_string(r + 1) +
           "\" data-caption=\"" + std::to_string(c.index) + "\" data-score=\"" + fixed_str(c.score, 6) +
           "\"><span class=\"mark\">" + (c.ground_truth ? "&#10003;" : "&middot;") + "</span> <span class=\"score\">" +
           fixed_str(c.score, 3) + "</span>" + html_escape(p.captions[static_cast<size_t>(c.index)]) + "</li>\n";
    }
    h += "</ol>\n</div>\n";
  }
  if (!p.caption_queries.empty()) h += "<h2>Captions &rarr; images</h2>\n";
  for (const CaptionQuery& q : p.caption_queries) {
    h += "<div class=\"query\" data-query-caption=\"" + std::to_string(q.caption) + "\" data-gt-rank=\"" +
         std::to_string(q.gt_rank) + "\">\n<div class=\"probe\"><b>&ldquo;" +
         html_escape(p.captions[static_cast<size_t>(q.caption)]) + "&rdquo;</b><br><span class=\"id\">caption " +
         std::to_string(q.caption) + "</span><br><span class=\"small\">" + rank_note(q.gt_rank) +
         "</span></div>\n<div class=\"strip\">\n";
    for (size_t r = 0; r < q.images.size(); ++r) {
      const Ranked& im = q.images[r];
      h += "<figure class=\"" + std::string(im.ground_truth ? "gt" : "miss") + "\" data-rank=\"" +
           std::to_string(r + 1) + "\" data-image=\"" + std::to_string(im.index) + "\" data-score=\"" +
           fixed_str(im.score, 6) + "\">" + image_block(p, im.index, false) + "<br>#" + std::to_string(r + 1) +
           " <span class=\"score\">" + fixed_str(im.score, 3) + "</span>" + (im.ground_truth ? " &#10003;" : "") +
           "</figure>\n";
    }
    h += "</div>\n</div>\n";
  }
  return h + html_page_end();
}

}  // namespace rematch::viz
