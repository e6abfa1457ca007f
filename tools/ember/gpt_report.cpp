// tools/ember/gpt_report.cpp: the GPT's metrics.csv and curves.svg.
#include "gpt_report.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "ember/io/safetensors.h"
#include "svg_chart.h"

namespace ember::cli {

void write_gpt_metrics_csv(const std::string& path, const std::vector<GptEvalRow>& rows) {
  std::ostringstream os;
  os << "iter,train_loss,val_loss,lr,seconds,tokens_per_second\n";
  for (const GptEvalRow& r : rows) {
    char line[256];
    std::snprintf(line, sizeof line, "%lld,%.6f,%.6f,%.6g,%.3f,%.1f\n",
                  static_cast<long long>(r.iter), r.train_loss, r.val_loss, r.lr, r.seconds,
                  r.tokens_per_second);
    os << line;
  }
  io::write_file_atomic(path, os.str());
}

std::vector<GptEvalRow> read_gpt_metrics_csv(const std::string& path) {
  std::vector<GptEvalRow> rows;
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return rows;
  while (std::getline(in, line)) {
    GptEvalRow r;
    long long iter = 0;
    if (std::sscanf(line.c_str(), "%lld,%lf,%lf,%lf,%lf,%lf", &iter, &r.train_loss, &r.val_loss,
                    &r.lr, &r.seconds, &r.tokens_per_second) == 6) {
      r.iter = iter;
      rows.push_back(r);
    }
  }
  return rows;
}

void write_gpt_curves_svg(const std::string& path, const std::vector<GptEvalRow>& rows,
                          const std::string& loss_axis) {
  if (rows.empty()) return;
  std::vector<double> iters, train, val, lr;
  for (const GptEvalRow& r : rows) {
    iters.push_back(static_cast<double>(r.iter));
    train.push_back(r.train_loss);
    val.push_back(r.val_loss);
    lr.push_back(r.lr);
  }
  std::ostringstream svg;
  const std::vector<ChartSeries> losses{{"train", train, "#1f77b4"},
                                        {"validation", val, "#ff7f0e"}};
  svg << svg_begin(920, 390);
  svg_chart(svg, 70, 50, 360, 270, "loss", {"step", "loss", loss_axis_scale(loss_axis, losses)},
            iters, losses);
  svg_chart(svg, 540, 50, 360, 270, "learning rate", {"step", "learning rate"}, iters,
            {{"lr", lr, "#2ca02c"}});
  svg << "</svg>\n";
  io::write_file_atomic(path, svg.str());
}

}  // namespace ember::cli
