// tools/ember/svg_chart.h: line charts in SVG for the training reports (curves.svg) -- round-number
// ticks with light grid lines on both axes, axis titles, a linear or logarithmic value axis, and
// the legend above the plot where no line can cross it.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace ember::cli {

// One line of a chart: a value per x.
struct ChartSeries {
  std::string name;
  std::vector<double> values;
  std::string color;
};

enum class AxisScale { kLinear, kLog };

struct ChartAxes {
  std::string x_title, y_title;
  AxisScale y_scale = AxisScale::kLinear;  // kLog needs positive values (else it draws linear)
};

// A chart of polylines over xs (ascending) in a plot box at (x0, y0) of size w x h; the title and
// legend go above the box, tick labels and axis titles left of and below it.
void svg_chart(std::ostringstream& svg, double x0, double y0, double w, double h,
               const std::string& title, const ChartAxes& axes, const std::vector<double>& xs,
               const std::vector<ChartSeries>& series);
// The opening of an SVG document of that size on a white background.
std::string svg_begin(int width, int height);

// 5 to 8 round numbers (1, 2, 2.5 or 5 times a power of ten; whole numbers when integers) whose
// first is at most lo and last at least hi -- fewer only when integers leave fewer in the range.
std::vector<double> round_ticks(double lo, double hi, bool integers);
// Round numbers (powers of ten, then also 2x and 5x, then every 1x-9x) from lo to hi on a log
// axis: the coarsest set that gives at least 4 ticks in [lo, hi]; for a range too narrow for
// that, the round numbers of a linear axis that fall inside it.
std::vector<double> log_ticks(double lo, double hi);

// "auto", "linear" or "log" (the --loss-axis flag) for these values: auto is log when the values
// are positive and span more than a factor of 20.
AxisScale loss_axis_scale(const std::string& mode, const std::vector<ChartSeries>& series);

}  // namespace ember::cli
