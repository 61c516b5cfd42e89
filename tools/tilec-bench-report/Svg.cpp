// The report's hand-written SVG plots: the compile-time breakdown and a
// roofline per target.
#include "BenchReport.h"

#include <algorithm>
#include <cstdio>

using namespace llvm;

namespace tilec::benchreport {

/// "cold", "warm" (compiled-kernel cache hit) or "warm code object" (only the
/// code object cached) for a compile benchmark.
std::string compileKind(const Bench &b) {
  return b.part(0) == "BM_CompileCold" ? "cold" : b.part(0) == "BM_CompileWarm" ? "warm" : "warm code object";
}

bool isCompileBench(const Bench &b) {
  return b.part(0) == "BM_CompileCold" || b.part(0) == "BM_CompileWarm" || b.part(0) == "BM_CompileWarmCodeObject";
}

/// Horizontal stacked bars, one per cold/warm compile benchmark.
std::string compileSvg(const std::vector<const Bench *> &rows) {
  const int left = 200, width = 560, rowH = 24, top = 40;
  double maxMs = 0;
  for (const Bench *b : rows)
    maxMs = std::max(maxMs, b->counter("mean_ms", 0));
  maxMs = maxMs > 0 ? maxMs * 1.05 : 1;
  const int legendRows = (std::size(kStages) + 3) / 4;
  const int height = top + rowH * int(rows.size()) + 40 + legendRows * 18;
  std::string s;
  raw_string_ostream os(s);
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + width + 80 << "\" height=\"" << height
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"10\" y=\"20\" font-size=\"14\">Compile time per stage (mean of iterations, ms)</text>\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Bench &b = *rows[i];
    int y = top + int(i) * rowH;
    std::string kind = compileKind(b);
    os << "<text x=\"" << left - 6 << "\" y=\"" << y + 15 << "\" text-anchor=\"end\">" << xmlEscape(b.part(1))
       << " " << xmlEscape(b.part(2)) << " " << kind << "</text>\n";
    double x = left;
    for (const Stage &st : kStages) {
      double w = b.counter(st.counter, 0) / maxMs * width;
      if (w <= 0)
        continue;
      os << "<rect x=\"" << num(x, 2) << "\" y=\"" << y + 3 << "\" width=\"" << num(w, 2)
         << "\" height=\"" << rowH - 6 << "\" fill=\"" << st.color << "\"><title>" << st.name << ": "
         << num(b.counter(st.counter, 0), 2) << " ms</title></rect>\n";
      x += w;
    }
    os << "<text x=\"" << num(x + 4, 2) << "\" y=\"" << y + 15 << "\">" << num(b.counter("mean_ms"), 1)
       << " ms</text>\n";
  }
  int axisY = top + rowH * int(rows.size()) + 4;
  os << "<line x1=\"" << left << "\" y1=\"" << axisY << "\" x2=\"" << left + width << "\" y2=\"" << axisY
     << "\" stroke=\"black\"/>\n";
  for (int t = 0; t <= 4; ++t) {
    double x = left + width * t / 4.0;
    os << "<text x=\"" << num(x, 1) << "\" y=\"" << axisY + 14 << "\" text-anchor=\"middle\">"
       << num(maxMs * t / 4.0, 0) << "</text>\n";
  }
  for (size_t i = 0; i < std::size(kStages); ++i) {
    int lx = 10 + int(i % 4) * 190, ly = axisY + 26 + int(i / 4) * 18;
    os << "<rect x=\"" << lx << "\" y=\"" << ly - 10 << "\" width=\"12\" height=\"12\" fill=\""
       << kStages[i].color << "\"/><text x=\"" << lx + 16 << "\" y=\"" << ly << "\">" << kStages[i].name
       << "</text>\n";
  }
  os << "</svg>\n";
  return s;
}

/// Log-log roofline of one target: the memory and compute ceilings, and the
/// modelled points (FLOP per byte of memory traffic, modelled TFLOP/s).
std::string rooflineSvg(const std::string &arch, const std::vector<const Bench *> &points) {
  const double peak = points.front()->counter("peak_tflops"), bw = points.front()->counter("mem_tbs");
  const int left = 70, top = 40, w = 520, h = 320;
  double xLo = 1, xHi = 1e4, yLo = peak / 1e3, yHi = peak * 2;
  for (const Bench *b : points) {
    xLo = std::min(xLo, b->counter("intensity") / 2);
    xHi = std::max(xHi, b->counter("intensity") * 2);
    yLo = std::min(yLo, b->counter("modelled_tflops") / 2);
  }
  xLo = std::pow(10, std::floor(std::log10(xLo)));
  xHi = std::pow(10, std::ceil(std::log10(xHi)));
  yLo = std::pow(10, std::floor(std::log10(yLo)));
  yHi = std::pow(10, std::ceil(std::log10(yHi)));
  auto X = [&](double v) { return left + w * (std::log10(v) - std::log10(xLo)) / (std::log10(xHi) - std::log10(xLo)); };
  auto Y = [&](double v) { return top + h - h * (std::log10(v) - std::log10(yLo)) / (std::log10(yHi) - std::log10(yLo)); };
  std::string s;
  raw_string_ostream os(s);
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + w + 200 << "\" height=\"" << top + h + 50
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"10\" y=\"20\" font-size=\"14\">Roofline model, " << xmlEscape(arch) << ": " << num(peak, 1)
     << " TFLOP/s, " << num(bw * 1000, 0) << " GB/s (modelled, not measured)</text>\n";
  os << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << w << "\" height=\"" << h
     << "\" fill=\"none\" stroke=\"black\"/>\n";
  for (double v = xLo; v <= xHi * 1.001; v *= 10)
    os << "<line x1=\"" << num(X(v), 1) << "\" y1=\"" << top << "\" x2=\"" << num(X(v), 1) << "\" y2=\""
       << top + h << "\" stroke=\"#eee\"/><text x=\"" << num(X(v), 1) << "\" y=\"" << top + h + 16
       << "\" text-anchor=\"middle\">" << si(v) << "</text>\n";
  for (double v = yLo; v <= yHi * 1.001; v *= 10)
    os << "<line x1=\"" << left << "\" y1=\"" << num(Y(v), 1) << "\" x2=\"" << left + w << "\" y2=\""
       << num(Y(v), 1) << "\" stroke=\"#eee\"/><text x=\"" << left - 6 << "\" y=\"" << num(Y(v) + 4, 1)
       << "\" text-anchor=\"end\">" << si(v) << "</text>\n";
  os << "<text x=\"" << left + w / 2 << "\" y=\"" << top + h + 36
     << "\" text-anchor=\"middle\">arithmetic intensity (FLOP per byte of memory traffic)</text>\n"
     << "<text x=\"16\" y=\"" << top + h / 2 << "\" transform=\"rotate(-90 16 " << top + h / 2
     << ")\" text-anchor=\"middle\">TFLOP/s</text>\n";
  // The ceilings: bandwidth x intensity up to the ridge, then the peak.
  double ridge = peak / bw;
  double x0 = std::max(xLo, yLo / bw);
  os << "<polyline fill=\"none\" stroke=\"#c00\" stroke-width=\"2\" points=\"" << num(X(x0), 1) << ","
     << num(Y(x0 * bw), 1) << " " << num(X(ridge), 1) << "," << num(Y(peak), 1) << " " << num(X(xHi), 1) << ","
     << num(Y(peak), 1) << "\"/>\n";
  const char *colors[] = {"#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
  for (size_t i = 0; i < points.size(); ++i) {
    const Bench &b = *points[i];
    double px = X(b.counter("intensity")), py = Y(b.counter("modelled_tflops"));
    const char *c = colors[i % std::size(colors)];
    os << "<circle cx=\"" << num(px, 1) << "\" cy=\"" << num(py, 1) << "\" r=\"5\" fill=\"" << c << "\"/>\n"
       << "<rect x=\"" << left + w + 12 << "\" y=\"" << top + 8 + 18 * int(i) << "\" width=\"10\" height=\"10\" fill=\""
       << c << "\"/><text x=\"" << left + w + 26 << "\" y=\"" << top + 17 + 18 * int(i) << "\">"
       << xmlEscape(b.part(3)) << ": " << num(b.counter("pct_peak"), 0) << "%</text>\n";
  }
  os << "</svg>\n";
  return s;
}

} // namespace tilec::benchreport
