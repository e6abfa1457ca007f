// tools/ember/report.cpp: metrics.csv and an SVG of the training curves.
#include "report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "ember/error.h"
#include "ember/io/safetensors.h"

namespace ember::cli {

void write_metrics_csv(const std::string& path, const std::vector<EpochRow>& rows) {
  std::ostringstream os;
  os << "epoch,train_loss,test_loss,test_accuracy,seconds,samples_per_second\n";
  for (const EpochRow& r : rows) {
    char line[256];
    std::snprintf(line, sizeof line, "%d,%.6f,%.6f,%.6f,%.3f,%.1f\n", r.epoch, r.train_loss,
                  r.test_loss, r.test_accuracy, r.seconds, r.samples_per_second);
    os << line;
  }
  io::write_file_atomic(path, os.str());
}

std::vector<EpochRow> read_metrics_csv(const std::string& path) {
  std::vector<EpochRow> rows;
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return rows;
  while (std::getline(in, line)) {
    EpochRow r;
    if (std::sscanf(line.c_str(), "%d,%lf,%lf,%lf,%lf,%lf", &r.epoch, &r.train_loss, &r.test_loss,
                    &r.test_accuracy, &r.seconds, &r.samples_per_second) == 6)
      rows.push_back(r);
  }
  return rows;
}

namespace {

// One chart: a polyline per series over epochs, in a box at (x0, y0) of size w x h.
void chart(std::ostringstream& svg, double x0, double y0, double w, double h,
           const std::string& title, const std::vector<EpochRow>& rows,
           const std::vector<std::pair<std::string, double EpochRow::*>>& series,
           const std::vector<std::string>& colors) {
  double lo = 1e300, hi = -1e300;
  for (const auto& [name, field] : series)
    for (const EpochRow& r : rows) {
      lo = std::min(lo, r.*field);
      hi = std::max(hi, r.*field);
    }
  if (hi <= lo) hi = lo + 1;
  double pad = (hi - lo) * 0.05;
  lo -= pad;
  hi += pad;
  int first = rows.front().epoch, last = std::max(rows.back().epoch, first + 1);
  auto px = [&](int e) { return x0 + w * (e - first) / static_cast<double>(last - first); };
  auto py = [&](double v) { return y0 + h - h * (v - lo) / (hi - lo); };
  svg << "<rect x='" << x0 << "' y='" << y0 << "' width='" << w << "' height='" << h
      << "' fill='none' stroke='#999'/>\n";
  svg << "<text x='" << x0 << "' y='" << y0 - 8 << "' font-size='14'>" << title << "</text>\n";
  char label[64];
  std::snprintf(label, sizeof label, "%.4g", hi);
  svg << "<text x='" << x0 - 6 << "' y='" << y0 + 10 << "' font-size='10' text-anchor='end'>"
      << label << "</text>\n";
  std::snprintf(label, sizeof label, "%.4g", lo);
  svg << "<text x='" << x0 - 6 << "' y='" << y0 + h << "' font-size='10' text-anchor='end'>"
      << label << "</text>\n";
  svg << "<text x='" << x0 << "' y='" << y0 + h + 14 << "' font-size='10'>epoch " << first
      << "</text>\n";
  svg << "<text x='" << x0 + w << "' y='" << y0 + h + 14
      << "' font-size='10' text-anchor='end'>epoch " << last << "</text>\n";
  for (size_t s = 0; s < series.size(); ++s) {
    svg << "<polyline fill='none' stroke-width='2' stroke='" << colors[s] << "' points='";
    for (const EpochRow& r : rows) svg << px(r.epoch) << "," << py(r.*series[s].second) << " ";
    svg << "'/>\n";
    for (const EpochRow& r : rows)
      svg << "<circle r='3' fill='" << colors[s] << "' cx='" << px(r.epoch) << "' cy='"
          << py(r.*series[s].second) << "'/>\n";
    svg << "<text x='" << x0 + w - 4 << "' y='" << y0 + 16 + 14 * s
        << "' font-size='12' text-anchor='end' fill='" << colors[s] << "'>" << series[s].first
        << "</text>\n";
  }
}

}  // namespace

void write_curves_svg(const std::string& path, const std::vector<EpochRow>& rows) {
  if (rows.empty()) return;
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='900' height='360' "
         "font-family='sans-serif'>\n"
      << "<rect width='900' height='360' fill='white'/>\n";
  chart(svg, 60, 40, 360, 270, "loss", rows,
        {{"train", &EpochRow::train_loss}, {"test", &EpochRow::test_loss}}, {"#1f77b4", "#ff7f0e"});
  chart(svg, 510, 40, 360, 270, "test accuracy", rows, {{"accuracy", &EpochRow::test_accuracy}},
        {"#2ca02c"});
  svg << "</svg>\n";
  io::write_file_atomic(path, svg.str());
}

}  // namespace ember::cli
