// tools/ember/gpt_report.h: what `ember train --model gpt` leaves in --out besides the
// checkpoint -- metrics.csv (one row per evaluation) and curves.svg (train and validation loss,
// and the learning rate, over iterations).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ember::cli {

struct GptEvalRow {
  int64_t iter = 0;  // optimizer steps done
  double train_loss = 0, val_loss = 0, lr = 0, seconds = 0, tokens_per_second = 0;
};

void write_gpt_metrics_csv(const std::string& path, const std::vector<GptEvalRow>& rows);
// Rows of an earlier run (for --resume); empty when the file does not exist.
std::vector<GptEvalRow> read_gpt_metrics_csv(const std::string& path);
// loss_axis: auto, linear or log (the --loss-axis flag; svg_chart.h).
void write_gpt_curves_svg(const std::string& path, const std::vector<GptEvalRow>& rows,
                          const std::string& loss_axis = "auto");

}  // namespace ember::cli
