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

void svg_chart(std::ostringstream& svg, double x0, double y0, double w, double h,
               const std::string& title, const std::string& x_label, const std::vector<double>& xs,
               const std::vector<ChartSeries>& series) {
  double lo = 1e300, hi = -1e300;
  for (const ChartSeries& s : series)
    for (double v : s.values) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (hi <= lo) hi = lo + 1;
  double pad = (hi - lo) * 0.05;
  lo -= pad;
  hi += pad;
  const double first = xs.front(), last = std::max(xs.back(), first + 1);
  auto px = [&](double x) { return x0 + w * (x - first) / (last - first); };
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
  svg << "<text x='" << x0 << "' y='" << y0 + h + 14 << "' font-size='10'>" << x_label << " "
      << first << "</text>\n";
  svg << "<text x='" << x0 + w << "' y='" << y0 + h + 14 << "' font-size='10' text-anchor='end'>"
      << x_label << " " << last << "</text>\n";
  for (size_t s = 0; s < series.size(); ++s) {
    const ChartSeries& line = series[s];
    svg << "<polyline fill='none' stroke-width='2' stroke='" << line.color << "' points='";
    for (size_t i = 0; i < xs.size(); ++i) svg << px(xs[i]) << "," << py(line.values[i]) << " ";
    svg << "'/>\n";
    for (size_t i = 0; i < xs.size(); ++i)
      svg << "<circle r='3' fill='" << line.color << "' cx='" << px(xs[i]) << "' cy='"
          << py(line.values[i]) << "'/>\n";
    svg << "<text x='" << x0 + w - 4 << "' y='" << y0 + 16 + 14 * s
        << "' font-size='12' text-anchor='end' fill='" << line.color << "'>" << line.name
        << "</text>\n";
  }
}

std::string svg_begin(int width, int height) {
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height
      << "' font-family='sans-serif'>\n"
      << "<rect width='" << width << "' height='" << height << "' fill='white'/>\n";
  return svg.str();
}

void write_curves_svg(const std::string& path, const std::vector<EpochRow>& rows) {
  if (rows.empty()) return;
  std::vector<double> epochs, train, test, accuracy;
  for (const EpochRow& r : rows) {
    epochs.push_back(r.epoch);
    train.push_back(r.train_loss);
    test.push_back(r.test_loss);
    accuracy.push_back(r.test_accuracy);
  }
  std::ostringstream svg;
  svg << svg_begin(900, 360);
  svg_chart(svg, 60, 40, 360, 270, "loss", "epoch", epochs,
            {{"train", train, "#1f77b4"}, {"test", test, "#ff7f0e"}});
  svg_chart(svg, 510, 40, 360, 270, "test accuracy", "epoch", epochs,
            {{"accuracy", accuracy, "#2ca02c"}});
  svg << "</svg>\n";
  io::write_file_atomic(path, svg.str());
}

}  // namespace ember::cli
