// tools/ember/report.cpp: metrics.csv and an SVG of the training curves.
#include "report.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "ember/error.h"
#include "ember/io/safetensors.h"
#include "svg_chart.h"

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

void write_curves_svg(const std::string& path, const std::vector<EpochRow>& rows,
                      const std::string& loss_axis) {
  if (rows.empty()) return;
  std::vector<double> epochs, train, test, accuracy;
  for (const EpochRow& r : rows) {
    epochs.push_back(r.epoch);
    train.push_back(r.train_loss);
    test.push_back(r.test_loss);
    accuracy.push_back(r.test_accuracy);
  }
  std::ostringstream svg;
  const std::vector<ChartSeries> losses{{"train", train, "#1f77b4"}, {"test", test, "#ff7f0e"}};
  svg << svg_begin(920, 390);
  svg_chart(svg, 70, 50, 360, 270, "loss", {"epoch", "loss", loss_axis_scale(loss_axis, losses)},
            epochs, losses);
  svg_chart(svg, 540, 50, 360, 270, "test accuracy", {"epoch", "accuracy"}, epochs,
            {{"accuracy", accuracy, "#2ca02c"}});
  svg << "</svg>\n";
  io::write_file_atomic(path, svg.str());
}

}  // namespace ember::cli
