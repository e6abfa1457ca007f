// tools/ember/report.h: what `ember train` leaves in --out besides the checkpoint -- metrics.csv
// (one row per epoch) and curves.svg (loss and accuracy curves a browser shows) -- and the SVG
// chart pieces other reports draw with.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace ember::cli {

struct EpochRow {
  int epoch = 0;
  double train_loss = 0, test_loss = 0, test_accuracy = 0, seconds = 0, samples_per_second = 0;
};

void write_metrics_csv(const std::string& path, const std::vector<EpochRow>& rows);
// Rows of an earlier run (for --resume); empty when the file does not exist.
std::vector<EpochRow> read_metrics_csv(const std::string& path);
void write_curves_svg(const std::string& path, const std::vector<EpochRow>& rows);

// One line of a chart: a value per x.
struct ChartSeries {
  std::string name;
  std::vector<double> values;
  std::string color;
};
// A chart of polylines over xs (ascending) in a box at (x0, y0) of size w x h.
void svg_chart(std::ostringstream& svg, double x0, double y0, double w, double h,
               const std::string& title, const std::string& x_label, const std::vector<double>& xs,
               const std::vector<ChartSeries>& series);
// The opening of an SVG document of that size on a white background.
std::string svg_begin(int width, int height);

}  // namespace ember::cli
