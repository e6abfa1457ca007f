// tools/ember/gpt_report.cpp: the GPT's metrics.csv and curves.svg.
#include "gpt_report.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "ember/io/safetensors.h"
#include "report.h"

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

void write_gpt_curves_svg(const std::string& path, const std::vector<GptEvalRow>& rows) {
  if (rows.empty()) return;
  std::vector<double> iters, train, val, lr;
  for (const GptEvalRow& r : rows) {
    iters.push_back(static_cast<double>(r.iter));
    train.push_back(r.train_loss);
    val.push_back(r.val_loss);
    lr.push_back(r.lr);
  }
  std::ostringstream svg;
  svg << svg_begin(900, 360);
  svg_chart(svg, 60, 40, 360, 270, "loss", "iter", iters,
            {{"train", train, "#1f77b4"}, {"validation", val, "#ff7f0e"}});
  svg_chart(svg, 510, 40, 360, 270, "learning rate", "iter", iters, {{"lr", lr, "#2ca02c"}});
  svg << "</svg>\n";
  io::write_file_atomic(path, svg.str());
}

}  // namespace ember::cli
