#include "web/charts.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "web/job_page.hpp"

namespace tony::http::svg {

namespace {

// -- geometry shared by the timeline pictures ------------------------------------

constexpr int width = 1100;  // viewBox width; the SVG scales to the page
constexpr int label_w = 150; // the row labels' column
constexpr int right_pad = 16;
constexpr int axis_h = 22; // the time axis above the rows
constexpr int plot_w = width - label_w - right_pad;

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", x);
  return buf;
}

struct time_axis {
  int64_t t0;
  int64_t t1;
  int left;
  int w;

  double x(int64_t t) const {
    auto span = static_cast<double>(std::max<int64_t>(t1 - t0, 1));
    auto pos = static_cast<double>(std::clamp(t, t0, t1) - t0);
    return left + pos / span * w;
  }
};

// "+45 s", "+3 min", "+2 h": a tick's offset from the job's start.
std::string offset_label(int64_t ms) {
  auto s = ms / 1000;
  if (s < 120)
    return "+" + std::to_string(s) + " s";
  if (s < 7200)
    return "+" + std::to_string(s / 60) + " min";
  return "+" + std::to_string(s / 3600) + " h";
}

// Ticks every "nice" step, about 6 to 10 over the span.
std::vector<int64_t> ticks(int64_t span_ms) {
  static const int64_t steps_s[] = {1,    2,    5,     10,    15,    30,
                                    60,   120,  300,   600,   900,   1800,
                                    3600, 7200, 14400, 21600, 43200, 86400};
  int64_t step = 86400 * 1000;
  for (auto s : steps_s)
    if (span_ms / (s * 1000) <= 10) {
      step = s * 1000;
      break;
    }
  std::vector<int64_t> out;
  for (int64_t t = 0; t <= span_ms && out.size() < 64; t += step)
    out.push_back(t);
  return out;
}

std::string axis_markup(const time_axis& ax, int top, int bottom) {
  std::string h = "<g class=\"axis\">";
  for (auto off : ticks(ax.t1 - ax.t0)) {
    auto x = num(ax.x(ax.t0 + off));
    h += "<line x1=\"" + x + "\" y1=\"" + std::to_string(top) + "\" x2=\"" + x +
         "\" y2=\"" + std::to_string(bottom) + "\" class=\"grid\"/>";
    h += "<text x=\"" + x + "\" y=\"" + std::to_string(top - 6) +
         "\" text-anchor=\"middle\">" + offset_label(off) + "</text>";
  }
  return h + "</g>";
}

std::string row_label(const std::string& label, const std::string& href, int y) {
  auto text = "<text x=\"4\" y=\"" + std::to_string(y) + "\" class=\"label\">" +
              html_escape(label) + "</text>";
  if (href.empty())
    return text;
  return "<a href=\"" + html_escape(href) + "\">" + text + "</a>";
}

// -- the phases of a run ----------------------------------------------------------

struct segment {
  const char* phase;
  const char* words;
  int64_t from;
  int64_t to;
};

// The run's segments up to its end (or `now`); a phase it skipped is empty.
std::vector<segment> segments_of(const history::task_run& r, int64_t now) {
  auto end = r.finished() ? r.finished_ms : now;
  auto next = [&](std::initializer_list<int64_t> later) {
    for (auto t : later)
      if (t > 0)
        return std::min(t, end);
    return end;
  };
  std::vector<segment> out;
  auto add = [&](const char* phase, const char* words, int64_t from, int64_t to) {
    if (from > 0 && to > from)
      out.push_back({phase, words, from, to});
  };
  add("waiting", "waiting for a container", r.requested_ms,
      next({r.allocated_ms, r.launched_ms, r.registered_ms, r.running_ms}));
  add("launching", "container granted, launching", r.allocated_ms,
      next({r.launched_ms, r.registered_ms, r.running_ms}));
  add("starting", "executor starting", r.launched_ms,
      next({r.registered_ms, r.running_ms}));
  add("registered", "registered, waiting for the others", r.registered_ms,
      next({r.running_ms}));
  add("running", "running", r.running_ms, end);
  return out;
}

const char* phase_at(const history::task_run& r, int64_t t, int64_t now) {
  if (r.finished() && t >= r.finished_ms) {
    if (r.state == task_state::succeeded)
      return "succeeded";
    if (r.state == task_state::killed)
      return "killed";
    return "failed";
  }
  for (auto& s : segments_of(r, now))
    if (t >= s.from && t < s.to)
      return s.phase;
  return nullptr;
}

std::string run_markup(const std::string& task, const history::task_run& r,
                       const time_axis& ax, int y, int h, int64_t now) {
  std::string g = "<g class=\"run\" data-task=\"" + html_escape(task) +
                  "\" data-attempt=\"" + std::to_string(r.attempt) +
                  "\" data-container=\"" + html_escape(r.container_id) +
                  "\" data-state=\"" + to_string(r.state) + "\">";
  auto who = task + " (attempt " + std::to_string(r.attempt) +
             (r.restart > 0 ? ", restart " + std::to_string(r.restart) : "") + ")";
  for (auto& s : segments_of(r, now)) {
    auto x0 = ax.x(s.from);
    auto w = std::max(ax.x(s.to) - x0, 1.0);
    g += "<rect class=\"seg seg-" + std::string{s.phase} + "\" x=\"" + num(x0) +
         "\" y=\"" + std::to_string(y) + "\" width=\"" + num(w) + "\" height=\"" +
         std::to_string(h) + "\"><title>" + html_escape(who) + ": " + s.words + ", " +
         html_escape(format_duration(s.to - s.from)) + "</title></rect>";
  }
  if (r.finished()) {
    auto x = ax.x(r.finished_ms);
    g += "<rect class=\"end end-" + std::string{to_string(r.state)} + "\" x=\"" +
         num(x - 2) + "\" y=\"" + std::to_string(y - 2) + "\" width=\"4\" height=\"" +
         std::to_string(h + 4) + "\"><title>" + html_escape(who) + ": " +
         to_string(r.state) + " (exit " + std::to_string(r.exit_code) + ") at " +
         html_escape(format_time(r.finished_ms)) + "</title></rect>";
  }
  return g + "</g>";
}

// -- line charts ----------------------------------------------------------------

constexpr int chart_w = 540;
constexpr int chart_h = 170;
constexpr int chart_left = 56;
constexpr int chart_top = 12;
constexpr int chart_bottom = 24;

// A round upper bound for the y axis: 1, 2 or 5 times a power of ten.
double nice_max(double x) {
  if (x <= 0)
    return 1;
  auto p = std::pow(10.0, std::floor(std::log10(x)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * p >= x)
      return m * p;
  return 10 * p;
}

std::string y_label(double v, const std::string& unit) {
  char buf[32];
  // Ticks are quarters of 1, 2, 2.5 or 5 times a power of ten: as many
  // decimals as they need (0.05, 0.1, 0.15), never two ticks alike.
  if (v >= 100 || v == std::floor(v))
    std::snprintf(buf, sizeof(buf), "%.0f", v);
  else if (v >= 10)
    std::snprintf(buf, sizeof(buf), "%.1f", v);
  else
    std::snprintf(buf, sizeof(buf), "%.3g", v);
  return std::string{buf} + (unit.empty() ? "" : " " + unit);
}

std::string path_of(const std::vector<int64_t>& t, const std::vector<double>& v,
                    const time_axis& ax, double y_max, int plot_h) {
  std::string d;
  for (size_t i = 0; i < t.size() && i < v.size(); ++i) {
    auto y = chart_top + plot_h - std::clamp(v[i] / y_max, 0.0, 1.0) * plot_h;
    d += (d.empty() ? "M" : " L") + num(ax.x(t[i])) + " " + num(y);
  }
  return d;
}

std::string band_of(const line& l, const time_axis& ax, double y_max, int plot_h) {
  if (l.lo.size() != l.t.size() || l.hi.size() != l.t.size() || l.t.empty())
    return {};
  auto d = path_of(l.t, l.hi, ax, y_max, plot_h);
  for (size_t i = l.t.size(); i-- > 0;) {
    auto y = chart_top + plot_h - std::clamp(l.lo[i] / y_max, 0.0, 1.0) * plot_h;
    d += " L" + num(ax.x(l.t[i])) + " " + num(y);
  }
  return d + " Z";
}

} // namespace

const char* line_color(size_t i) {
  static const char* palette[] = {"#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00",
                                  "#1b7c83", "#bf3989", "#6e7781", "#4d2d00", "#0550ae"};
  return palette[i % (sizeof(palette) / sizeof(palette[0]))];
}

std::string timeline_chart(const std::string& id, const std::vector<timeline_row>& rows,
                           int64_t t0, int64_t t1, int64_t now) {
  constexpr int row_h = 20, bar_h = 12;
  int height = axis_h + static_cast<int>(rows.size()) * row_h + 6;
  time_axis ax{t0, std::max(t1, t0 + 1000), label_w, plot_w};
  std::string h =
      "<svg id=\"" + html_escape(id) +
      "\" class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
      std::to_string(width) + " " + std::to_string(height) +
      "\" preserveAspectRatio=\"xMinYMin meet\" role=\"img\" aria-label=\"the "
      "tasks' runs over time\">";
  h += axis_markup(ax, axis_h, height);
  for (size_t i = 0; i < rows.size(); ++i) {
    auto y = axis_h + static_cast<int>(i) * row_h;
    auto& row = rows[i];
    h += "<g class=\"row\" data-task=\"" + html_escape(row.label) + "\">";
    h += row_label(row.label, row.href, y + 14);
    if (row.runs) {
      if (row.runs->dropped > 0)
        h += "<title>" + std::to_string(row.runs->dropped) +
             " earlier runs left out</title>";
      for (auto& r : row.runs->runs)
        h += run_markup(row.label, r, ax, y + (row_h - bar_h) / 2, bar_h, now);
    }
    h += "</g>";
  }
  return h + "</svg>";
}

std::string phase_chart(const std::string& id, const std::vector<phase_row>& rows,
                        int64_t t0, int64_t t1, int64_t now) {
  constexpr int row_h = 48, band_h = 40, columns = 160;
  static const char* phases[] = {"waiting", "launching", "starting", "registered",
                                 "running", "succeeded", "failed",   "killed"};
  int height = axis_h + static_cast<int>(rows.size()) * row_h + 6;
  time_axis ax{t0, std::max(t1, t0 + 1000), label_w, plot_w};
  std::string h =
      "<svg id=\"" + html_escape(id) +
      "\" class=\"timeline phases\" xmlns=\"http://www.w3.org/2000/svg\" "
      "shape-rendering=\"crispEdges\" viewBox=\"0 0 " +
      std::to_string(width) + " " + std::to_string(height) +
      "\" preserveAspectRatio=\"xMinYMin meet\" role=\"img\" aria-label=\"the "
      "task types' phases over time\">";
  h += axis_markup(ax, axis_h, height);
  double col_w = static_cast<double>(plot_w) / columns;
  for (size_t i = 0; i < rows.size(); ++i) {
    auto& row = rows[i];
    auto y = axis_h + static_cast<int>(i) * row_h;
    h += "<g class=\"row type-row\" data-type=\"" + html_escape(row.label) + "\">";
    h += row_label(row.label, row.href, y + 24);
    auto total = std::max<size_t>(row.tasks.size(), 1);
    for (int c = 0; c < columns; ++c) {
      auto t = t0 + static_cast<int64_t>((t1 - t0) * (c + 0.5) / columns);
      if (t > now)
        break;
      std::map<std::string, int> counts;
      for (auto* task : row.tasks) {
        const char* phase = nullptr;
        for (auto& r : task->runs)
          if (auto p = phase_at(r, t, now))
            phase = p; // the latest run wins
        if (phase)
          ++counts[phase];
      }
      double stack = 0;
      for (auto p : phases) {
        auto n = counts[p];
        if (n == 0)
          continue;
        double hh = static_cast<double>(n) / total * band_h;
        h += "<rect class=\"seg seg-" + std::string{p} + "\" x=\"" +
             num(label_w + c * col_w) + "\" y=\"" + num(y + 4 + band_h - stack - hh) +
             "\" width=\"" + num(col_w + 0.3) + "\" height=\"" + num(hh) + "\"><title>" +
             offset_label(t - t0) + ": " + std::to_string(n) + " " + p +
             "</title></rect>";
        stack += hh;
      }
    }
    h += "</g>";
  }
  return h + "</svg>";
}

std::string line_chart(const chart_options& opts, const std::vector<line>& lines) {
  int plot_h = chart_h - chart_top - chart_bottom;
  double top = opts.y_max;
  if (top <= 0) {
    for (auto& l : lines) {
      for (auto v : l.v)
        top = std::max(top, v);
      for (auto v : l.hi)
        top = std::max(top, v);
    }
    top = std::max(top, opts.limit);
    top = nice_max(top * 1.05);
  }
  // 16 px right of the plot: room for the last tick's label.
  time_axis ax{opts.t0, std::max(opts.t1, opts.t0 + 1000), chart_left,
               chart_w - chart_left - 16};
  std::string h =
      "<svg id=\"" + html_escape(opts.id) +
      "\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
      std::to_string(chart_w) + " " + std::to_string(chart_h) +
      "\" role=\"img\" aria-label=\"" + html_escape(opts.title) + "\">";
  for (int i = 0; i <= 4; ++i) {
    auto v = top * i / 4;
    auto y = num(chart_top + plot_h - plot_h * i / 4.0);
    h += "<line class=\"grid\" x1=\"" + std::to_string(chart_left) + "\" x2=\"" +
         std::to_string(chart_w - 8) + "\" y1=\"" + y + "\" y2=\"" + y + "\"/>";
    h += "<text class=\"tick\" x=\"" + std::to_string(chart_left - 4) + "\" y=\"" + y +
         "\" dy=\"4\" text-anchor=\"end\">" + html_escape(y_label(v, opts.unit)) +
         "</text>";
  }
  for (auto off : ticks(ax.t1 - ax.t0))
    h += "<text class=\"tick\" x=\"" + num(ax.x(ax.t0 + off)) + "\" y=\"" +
         std::to_string(chart_h - 6) + "\" text-anchor=\"middle\">" + offset_label(off) +
         "</text>";
  if (opts.limit >= 0) {
    auto y = num(chart_top + plot_h - std::clamp(opts.limit / top, 0.0, 1.0) * plot_h);
    h += "<line class=\"limit\" x1=\"" + std::to_string(chart_left) + "\" x2=\"" +
         std::to_string(chart_w - 8) + "\" y1=\"" + y + "\" y2=\"" + y + "\"/>";
    h += "<text class=\"limit-label\" x=\"" + std::to_string(chart_w - 10) + "\" y=\"" +
         y + "\" dy=\"-3\" text-anchor=\"end\">" + html_escape(opts.limit_label) +
         "</text>";
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    auto& l = lines[i];
    auto color = line_color(i);
    if (auto band = band_of(l, ax, top, plot_h); !band.empty())
      h += "<path class=\"band\" d=\"" + band + "\" fill=\"" + color + "\"/>";
    h += "<path class=\"line\" data-task=\"" + html_escape(l.label) + "\" d=\"" +
         path_of(l.t, l.v, ax, top, plot_h) + "\" stroke=\"" + color + "\"><title>" +
         html_escape(l.label) + "</title></path>";
  }
  return h + "</svg>";
}

std::string timeline_legend() {
  static const std::pair<const char*, const char*> items[] = {
      {"waiting", "waiting for a container"},
      {"launching", "launching"},
      {"starting", "executor starting"},
      {"registered", "waiting for the other tasks"},
      {"running", "running"},
      {"succeeded", "succeeded"},
      {"failed", "failed or lost"},
      {"killed", "killed"}};
  std::string h = "<ul class=\"legend\">";
  for (auto& [phase, words] : items)
    h += "<li><span class=\"swatch seg-" + std::string{phase} + "\"></span>" + words +
         "</li>";
  return h + "</ul>";
}

} // namespace tony::http::svg
