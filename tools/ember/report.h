// tools/ember/report.h: what `ember train` leaves in --out besides the checkpoint -- metrics.csv
// (one row per epoch) and curves.svg (loss and accuracy curves a browser shows).
#pragma once

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
// loss_axis: auto, linear or log (the --loss-axis flag; svg_chart.h).
void write_curves_svg(const std::string& path, const std::vector<EpochRow>& rows,
                      const std::string& loss_axis = "auto");

}  // namespace ember::cli
