#include "viz/html.h"

#include <iomanip>
#include <sstream>

namespace rematch::viz {

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string html_page_start(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" + std::string(kGeneratorMeta) +
         "\n<title>" + html_escape(title) + "</title>\n<style>\n"
         "body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:24px auto;"
         "max-width:1180px;color:#222;background:#fafafa;padding:0 16px}\n"
         "h1{font-size:1.5em;margin-bottom:.2em}h2{margin-top:1.6em;border-bottom:1px solid #ccc;padding-bottom:.2em}\n"
         ".lead{color:#555;margin-top:0}.small{color:#666;font-size:.85em}\n"
         "table.metrics{border-collapse:collapse;margin:.6em 0}table.metrics td,table.metrics th{border:1px solid "
         "#ccc;padding:3px 9px;text-align:right}\n"
         ".query{background:#fff;border:1px solid #ddd;border-radius:6px;padding:10px 12px;margin:12px 0;"
         "display:flex;gap:16px;align-items:flex-start}\n"
         ".query .probe{flex:0 0 190px}.query .probe img{border:1px solid #bbb}\n"
         ".query ol{margin:0;padding-left:2.2em;flex:1}.query li{margin:2px 0}\n"
         ".gt{background:#e3f6e3}.gt .mark{color:#1a7f1a;font-weight:bold}.miss .mark{color:#bbb}\n"
         ".score{color:#777;font-variant-numeric:tabular-nums;font-size:.85em;margin-right:.4em}\n"
         ".strip{display:flex;gap:8px;flex-wrap:wrap}.strip figure{margin:0;padding:4px;border:2px solid #ddd;"
         "border-radius:4px;text-align:center;font-size:.8em;background:#fff}\n"
         ".strip figure.gt{border-color:#2ca02c}.id{font-family:monospace;font-size:.85em;color:#444}\n"
         ".pairs{display:grid;grid-template-columns:repeat(auto-fill,minmax(250px,1fr));gap:10px}\n"
         ".pair{background:#fff;border:2px solid #ddd;border-radius:6px;padding:6px;font-size:.85em}\n"
         ".pair.truly-noisy{border-color:#d62728}.pair.truly-clean{border-color:#2ca02c}\n"
         ".tag{display:inline-block;padding:0 5px;border-radius:3px;font-size:.8em;color:#fff}\n"
         ".tag.noisy{background:#d62728}.tag.clean{background:#2ca02c}.tag.unknown{background:#888}\n"
         "</style>\n</head>\n<body>\n";
}

std::string html_page_end() { return "</body>\n</html>\n"; }

std::string fixed_str(double value, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << value;
  return s.str();
}

}  // namespace rematch::viz
