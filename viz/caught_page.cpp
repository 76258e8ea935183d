#include "viz/caught_page.h"

#include "viz/html.h"

namespace rematch::viz {
namespace {

std::string card_html(const PairCard& c) {
  std::string cls = c.truth == "mismatched" ? "truly-noisy" : c.truth == "matched" ? "truly-clean" : "";
  std::string h = "<div class=\"pair " + cls + "\" data-caption=\"" + std::to_string(c.caption) + "\" data-row=\"" +
                  std::to_string(c.row) + "\" data-truth=\"" + html_escape(c.truth) + "\" data-decision=\"" +
                  html_escape(c.decision) + "\">";
  if (!c.thumbnail.empty()) h += "<img src=\"" + html_escape(c.thumbnail) + "\" alt=\"image row " + std::to_string(c.row) + "\"><br>";
  h += "<span class=\"id\">image " + std::to_string(c.row) + (c.image_id.empty() ? "" : " &middot; " + html_escape(c.image_id)) +
       "</span>";
  if (c.thumbnail.empty() && !c.image_says.empty())
    h += "<br><span class=\"small\">the image shows: &ldquo;" + html_escape(c.image_says) + "&rdquo;</span>";
  h += "<p><b>&ldquo;" + html_escape(c.caption_text) + "&rdquo;</b><br><span class=\"id\">caption " +
       std::to_string(c.caption) + "</span></p>";
  if (!c.truth.empty())
    h += "<span class=\"tag " + std::string(c.truth == "mismatched" ? "noisy" : "clean") + "\">truly " + c.truth +
         "</span> ";
  h += "<span class=\"tag unknown\">" + html_escape(c.decision) + "</span></div>\n";
  return h;
}

}  // namespace

std::string caught_html(const CaughtPage& p) {
  std::string h = html_page_start(p.title);
  h += "<h1>" + html_escape(p.title) + "</h1>\n<p class=\"lead\">" + html_escape(p.summary) + "</p>\n";
  for (const auto& [href, text] : p.links)
    h += "<p><a href=\"" + html_escape(href) + "\">" + html_escape(text) + "</a></p>\n";
  if (!p.per_epoch.empty()) {
    h += "<h2>Detection of the mismatched pairs, per epoch</h2>\n";
    if (!p.plot.empty()) h += "<img src=\"" + html_escape(p.plot) + "\" alt=\"precision and recall per epoch\"><br>\n";
    h += "<table class=\"metrics\"><tr><th>epoch</th><th>flagged</th><th>truly mismatched</th><th>caught</th>"
         "<th>precision</th><th>recall</th></tr>\n";
    for (const Detection& d : p.per_epoch)
      h += "<tr data-epoch=\"" + std::to_string(d.epoch) + "\"><td>" + std::to_string(d.epoch + 1) + "</td><td>" +
           std::to_string(d.flagged) + "</td><td>" + std::to_string(d.truly_mismatched) + "</td><td>" +
           std::to_string(d.caught) + "</td><td>" + fixed_str(d.precision, 3) + "</td><td>" + fixed_str(d.recall, 3) +
           "</td></tr>\n";
    h += "</table>\n<p class=\"small\">precision: share of truly mismatched pairs among those flagged; recall: share "
         "of the truly mismatched pairs that were flagged. Epochs count from 1.</p>\n";
  }
  for (const PairSection& s : p.sections) {
    h += "<h2>" + html_escape(s.title) + " <span class=\"small\">(" + std::to_string(s.cards.size()) + " of " +
         std::to_string(s.total) + ")</span></h2>\n";
    if (!s.note.empty()) h += "<p class=\"small\">" + html_escape(s.note) + "</p>\n";
    h += "<div class=\"pairs\">\n";
    for (const PairCard& c : s.cards) h += card_html(c);
    h += "</div>\n";
  }
  return h + html_page_end();
}

}  // namespace rematch::viz
