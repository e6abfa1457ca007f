// tools/ember/svg_chart.cpp: the SVG line charts of svg_chart.h.
#include "svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace ember::cli {

namespace {

std::string number_label(double v) {
  if (std::fabs(v) < 1e-12) return "0";
  char s[32];
  std::snprintf(s, sizeof s, "%.6g", v);
  return s;
}

struct Range {
  double lo, hi;
};

Range value_range(const std::vector<ChartSeries>& series) {
  Range r{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  for (const ChartSeries& s : series)
    for (double v : s.values)
      if (std::isfinite(v)) {
        r.lo = std::min(r.lo, v);
        r.hi = std::max(r.hi, v);
      }
  if (!(r.lo <= r.hi)) r = {0, 1};
  return r;
}

}  // namespace

std::vector<double> round_ticks(double lo, double hi, bool integers) {
  if (!(hi > lo)) {
    const double pad = std::max(std::fabs(lo) * 0.1, integers ? 1.0 : 0.5);
    lo -= pad;
    hi += pad;
  }
  const double span = hi - lo;
  const int e0 = static_cast<int>(std::floor(std::log10(span))) - 2;
  double best_step = 0;
  long best_n = 0;
  for (int e = e0; e <= e0 + 3 && !best_step; ++e)
    for (double m : {1.0, 2.0, 2.5, 5.0}) {
      const double step = m * std::pow(10.0, e);
      if (integers && (step < 1 || step != std::floor(step))) continue;
      const long n = std::lround(std::ceil(hi / step - 1e-9) - std::floor(lo / step + 1e-9)) + 1;
      if (n >= 5 && n <= 8) {
        best_step = step;
        best_n = n;
        break;
      }
    }
  if (!best_step) {  // a short integer range: every whole number
    best_step = 1;
    best_n = std::lround(std::ceil(hi) - std::floor(lo)) + 1;
  }
  std::vector<double> ticks;
  const double first = std::floor(lo / best_step + 1e-9) * best_step;
  for (long i = 0; i < best_n; ++i) ticks.push_back(first + static_cast<double>(i) * best_step);
  return ticks;
}

std::vector<double> log_ticks(double lo, double hi) {
  const int e_lo = static_cast<int>(std::floor(std::log10(lo))),
            e_hi = static_cast<int>(std::ceil(std::log10(hi)));
  std::vector<double> ticks;
  for (const std::vector<double>& mantissas :
       {std::vector<double>{1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}) {
    ticks.clear();
    for (int e = e_lo; e <= e_hi; ++e)
      for (double m : mantissas) {
        const double v = m * std::pow(10.0, e);
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back(v);
      }
    if (ticks.size() >= 4) return ticks;
  }
  // Less than a decade: the linear axis's round numbers, those inside [lo, hi].
  ticks.clear();
  for (double t : round_ticks(lo, hi, false))
    if (t >= lo && t <= hi) ticks.push_back(t);
  return ticks;
}

AxisScale loss_axis_scale(const std::string& mode, const std::vector<ChartSeries>& series) {
  if (mode == "linear") return AxisScale::kLinear;
  const Range r = value_range(series);
  if (!(r.lo > 0)) return AxisScale::kLinear;
  if (mode == "log") return AxisScale::kLog;
  return r.hi / r.lo > 20 ? AxisScale::kLog : AxisScale::kLinear;
}

void svg_chart(std::ostringstream& svg, double x0, double y0, double w, double h,
               const std::string& title, const ChartAxes& axes, const std::vector<double>& xs,
               const std::vector<ChartSeries>& series) {
  const Range r = value_range(series);
  const bool log = axes.y_scale == AxisScale::kLog && r.lo > 0;
  // The value axis: round ticks spanning the values (a log axis from just below the smallest
  // to just above the largest); the step axis: whole-number ticks over the steps.
  std::vector<double> y_ticks;
  double y_lo, y_hi;
  if (log) {
    y_lo = r.lo / 1.1;
    y_hi = r.hi * 1.1;
    y_ticks = log_ticks(y_lo, y_hi);
  } else {
    y_ticks = round_ticks(r.lo, r.hi, false);
    y_lo = y_ticks.front();
    y_hi = y_ticks.back();
  }
  const std::vector<double> x_ticks = round_ticks(xs.front(), xs.back(), true);
  const double x_lo = x_ticks.front(), x_hi = x_ticks.back();
  auto px = [&](double x) { return x0 + w * (x - x_lo) / (x_hi - x_lo); };
  auto py = [&](double v) {
    const double t = log ? (std::log(v) - std::log(y_lo)) / (std::log(y_hi) - std::log(y_lo))
                         : (v - y_lo) / (y_hi - y_lo);
    return y0 + h - h * t;
  };

  for (double t : y_ticks) {
    const double y = py(t);
    svg << "<line class='grid' x1='" << x0 << "' x2='" << x0 + w << "' y1='" << y << "' y2='" << y
        << "' stroke='#e6e6e6'/>\n"
        << "<text class='tick-y' x='" << x0 - 6 << "' y='" << y + 3.5
        << "' font-size='10' text-anchor='end' fill='#444'>" << number_label(t) << "</text>\n";
  }
  for (double t : x_ticks) {
    const double x = px(t);
    svg << "<line class='grid' x1='" << x << "' x2='" << x << "' y1='" << y0 << "' y2='" << y0 + h
        << "' stroke='#e6e6e6'/>\n"
        << "<text class='tick-x' x='" << x << "' y='" << y0 + h + 14
        << "' font-size='10' text-anchor='middle' fill='#444'>" << number_label(t) << "</text>\n";
  }
  svg << "<rect x='" << x0 << "' y='" << y0 << "' width='" << w << "' height='" << h
      << "' fill='none' stroke='#999'/>\n"
      << "<text x='" << x0 << "' y='" << y0 - 26 << "' font-size='14'>" << title << "</text>\n"
      << "<text class='axis-title' x='" << x0 + w / 2 << "' y='" << y0 + h + 32
      << "' font-size='11' text-anchor='middle'>" << axes.x_title << "</text>\n"
      << "<text class='axis-title' transform='translate(" << x0 - 44 << "," << y0 + h / 2
      << ") rotate(-90)' font-size='11' text-anchor='middle'>" << axes.y_title
      << (log ? " (log scale)" : "") << "</text>\n";

  // The legend: one row above the plot box, right-aligned, a swatch and a name per series.
  double lx = x0 + w;
  for (size_t s = series.size(); s-- > 0;) {
    const ChartSeries& line = series[s];
    lx -= 7.0 * static_cast<double>(line.name.size()) + 26;
    svg << "<line x1='" << lx << "' x2='" << lx + 16 << "' y1='" << y0 - 10 << "' y2='" << y0 - 10
        << "' stroke-width='3' stroke='" << line.color << "'/>\n"
        << "<text class='legend' x='" << lx + 20 << "' y='" << y0 - 6 << "' font-size='12'>"
        << line.name << "</text>\n";
  }

  for (const ChartSeries& line : series) {
    svg << "<polyline fill='none' stroke-width='2' stroke='" << line.color << "' points='";
    for (size_t i = 0; i < xs.size(); ++i)
      if (std::isfinite(line.values[i]) && (!log || line.values[i] > 0))
        svg << px(xs[i]) << "," << py(line.values[i]) << " ";
    svg << "'/>\n";
    for (size_t i = 0; i < xs.size(); ++i)
      if (std::isfinite(line.values[i]) && (!log || line.values[i] > 0))
        svg << "<circle r='3' fill='" << line.color << "' cx='" << px(xs[i]) << "' cy='"
            << py(line.values[i]) << "'/>\n";
  }
}

std::string svg_begin(int width, int height) {
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height
      << "' font-family='sans-serif'>\n"
      << "<rect width='" << width << "' height='" << height << "' fill='white'/>\n";
  return svg.str();
}

}  // namespace ember::cli
