#include "viz/label_page.h"

#include "tensor/error.h"
#include "viz/html.h"

namespace rematch::viz {

LabelEpoch label_epoch(int64_t epoch, const std::vector<int64_t>& clean, const std::vector<int64_t>& noisy,
                       const std::vector<int64_t>& corrected) {
  REMATCH_CHECK(clean.size() == noisy.size() && clean.size() == corrected.size(), "label_epoch: epoch ", epoch,
                " has ", corrected.size(), " corrected labels, ", noisy.size(), " noisy and ", clean.size(),
                " clean ones; they must be of the same training pairs");
  LabelEpoch e;
  e.epoch = epoch;
  e.samples = static_cast<int64_t>(clean.size());
  int64_t right = 0, noisy_right = 0;
  for (size_t i = 0; i < clean.size(); ++i) {
    const bool r = corrected[i] == clean[i], n = noisy[i] == clean[i];
    right += r;
    noisy_right += n;
    e.fixed += r && !n;
    e.broken += n && !r;
  }
  if (e.samples > 0) {
    e.corrected_accuracy = static_cast<double>(right) / static_cast<double>(e.samples);
    e.noisy_accuracy = static_cast<double>(noisy_right) / static_cast<double>(e.samples);
  }
  return e;
}

std::string label_html(const LabelPage& p) {
  std::string h = html_page_start(p.title);
  h += "<h1>" + html_escape(p.title) + "</h1>\n<p class=\"lead\">" + html_escape(p.summary) + "</p>\n";
  for (const auto& [href, text] : p.links)
    h += "<p><a href=\"" + html_escape(href) + "\">" + html_escape(text) + "</a></p>\n";
  if (!p.per_epoch.empty()) {
    h += "<h2>Corrected labels against the clean ones, per epoch</h2>\n";
    if (!p.plot.empty()) h += "<img src=\"" + html_escape(p.plot) + "\" alt=\"label accuracy per epoch\"><br>\n";
    h += "<table class=\"metrics\"><tr><th>epoch</th><th>pairs</th><th>noisy labels right</th>"
         "<th>corrected labels right</th><th>fixed</th><th>broken</th></tr>\n";
    for (const LabelEpoch& e : p.per_epoch)
      h += "<tr data-epoch=\"" + std::to_string(e.epoch) + "\"><td>" + std::to_string(e.epoch + 1) + "</td><td>" +
           std::to_string(e.samples) + "</td><td>" + fixed_str(e.noisy_accuracy, 4) + "</td><td>" +
           fixed_str(e.corrected_accuracy, 4) + "</td><td>" + std::to_string(e.fixed) + "</td><td>" +
           std::to_string(e.broken) + "</td></tr>\n";
    h += "</table>\n<p class=\"small\">fixed: pairs whose noisy label was wrong and whose corrected label is right; "
         "broken: pairs whose noisy label was right and whose corrected label is wrong. Epochs count from 1.</p>\n";
  }
  for (const LabelSection& s : p.sections) {
    h += "<h2>" + html_escape(s.title) + " <span class=\"small\">(" + std::to_string(s.cards.size()) + " of " +
         std::to_string(s.total) + ")</span></h2>\n";
    if (!s.note.empty()) h += "<p class=\"small\">" + html_escape(s.note) + "</p>\n";
    h += "<table class=\"metrics\"><tr><th>pair</th><th>clean</th><th>noisy</th><th>corrected</th></tr>\n";
    for (const LabelCard& c : s.cards)
      h += "<tr class=\"sample\" data-sample=\"" + std::to_string(c.sample) + "\" data-clean=\"" +
           std::to_string(c.clean) + "\" data-noisy=\"" + std::to_string(c.noisy) + "\" data-corrected=\"" +
           std::to_string(c.corrected) + "\"><td>" + std::to_string(c.sample) + "</td><td>class " +
           std::to_string(c.clean) + "</td><td>class " + std::to_string(c.noisy) + "</td><td>class " +
           std::to_string(c.corrected) + "</td></tr>\n";
    h += "</table>\n";
  }
  return h + html_page_end();
}

}  // namespace rematch::viz
