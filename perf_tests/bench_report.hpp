// kband-bench: result rows, timing statistics, table / JSON / CSV output.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace kband_bench {

struct Row {
  std::string algo;     // e.g. thomas, shared, periodic, periodic-shared, naive-x, copy, cusparse-...
  std::string layout;   // contiguous, interleaved, grouped, field-LL, flat
  std::string variant;  // global, scratch, auto, -
  std::string precision;
  int n = 0;
  long long nsys = 0;
  long long points = 0;
  int reps = 0;
  double t_med = 0, t_min = 0, t_max = 0;  // seconds per call
  double elems_per_point = 0;              // minimum data movement, in elements of sizeof(T)
  int elem_bytes = 8;
  double ns_per_point = 0;
  double gbs = 0;         // by the minimum data movement
  double bw_ratio = 0;    // gbs / copy gbs
  double time_ratio = 0;  // ns/point / copy ns/point
  std::string status;     // ok, n/a, FAIL
  std::string note;
  double residual = 0;
};

struct Stats {
  double med = 0, min = 0, max = 0;
};

inline Stats stats_of(std::vector<double> t) {
  Stats s;
  if (t.empty()) return s;
  std::sort(t.begin(), t.end());
  const std::size_t m = t.size();
  s.med = m % 2 ? t[m / 2] : 0.5 * (t[m / 2 - 1] + t[m / 2]);
  s.min = t.front();
  s.max = t.back();
  return s;
}

inline std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

inline void print_table_header() {
  std::printf("%-34s %-12s %-8s %6s %9s %9s %8s %8s %8s  %s\n", "algorithm", "layout", "variant", "n",
              "nsys", "ns/point", "GB/s", "bw/copy", "t/copy", "check");
}

inline void print_row(const Row& r) {
  if (r.status == "n/a") {
    std::printf("%-34s %-12s %-8s %6d %9lld %9s %8s %8s %8s  n/a  (%s)\n", r.algo.c_str(), r.layout.c_str(),
                r.variant.c_str(), r.n, r.nsys, "n/a", "n/a", "n/a", "n/a", r.note.c_str());
  } else {
    std::printf("%-34s %-12s %-8s %6d %9lld %9.4f %8.2f %8.3f %8.3f  %s%s%s\n", r.algo.c_str(),
                r.layout.c_str(), r.variant.c_str(), r.n, r.nsys, r.ns_per_point, r.gbs, r.bw_ratio,
                r.time_ratio, r.status.c_str(), r.note.empty() ? "" : "  ", r.note.c_str());
  }
  std::fflush(stdout);
}

inline std::string json_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      o += '\\';
      o += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      o += ' ';
    } else {
      o += ch;
    }
  }
  return o;
}

inline std::string json_num(double v) {
  if (!std::isfinite(v)) return "null";
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

struct Meta {
  std::map<std::string, std::string> kv;  // printed as JSON strings
};

inline bool write_json(const std::string& file, const Meta& meta, const std::vector<Row>& rows,
                       const std::vector<std::string>& summary = {}) {
  std::ofstream o(file);
  if (!o) return false;
  o << "{\n  \"meta\": {";
  bool first = true;
  for (const auto& p : meta.kv) {
    o << (first ? "\n" : ",\n") << "    \"" << json_escape(p.first) << "\": \"" << json_escape(p.second) << "\"";
    first = false;
  }
  o << "\n  },\n  \"rows\": [";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    o << (i ? ",\n" : "\n") << "    {\"algorithm\": \"" << json_escape(r.algo) << "\", \"layout\": \""
      << json_escape(r.layout) << "\", \"variant\": \"" << json_escape(r.variant) << "\", \"precision\": \""
      << r.precision << "\", \"exec_space\": \"" << json_escape(meta.kv.at("exec_space"))
      << "\", \"device\": \"" << json_escape(meta.kv.at("device")) << "\", \"n\": " << r.n
      << ", \"nsys\": " << r.nsys << ", \"points\": " << r.points << ", \"reps\": " << r.reps
      << ", \"time_median_s\": " << json_num(r.t_med) << ", \"time_min_s\": " << json_num(r.t_min)
      << ", \"time_max_s\": " << json_num(r.t_max) << ", \"min_elems_per_point\": " << json_num(r.elems_per_point)
      << ", \"ns_per_point\": " << json_num(r.status == "n/a" ? NAN : r.ns_per_point)
      << ", \"gbs_min_data\": " << json_num(r.status == "n/a" ? NAN : r.gbs)
      << ", \"bw_ratio_to_copy\": " << json_num(r.status == "n/a" ? NAN : r.bw_ratio)
      << ", \"time_ratio_to_copy\": " << json_num(r.status == "n/a" ? NAN : r.time_ratio)
      << ", \"max_rel_residual\": " << json_num(r.residual) << ", \"status\": \"" << r.status
      << "\", \"note\": \"" << json_escape(r.note) << "\"}";
  }
  o << "\n  ],\n  \"summary\": [";
  for (std::size_t i = 0; i < summary.size(); ++i) o << (i ? ",\n" : "\n") << "    \"" << json_escape(summary[i]) << "\"";
  o << "\n  ]\n}\n";
  return static_cast<bool>(o);
}

inline std::string csv_num(double v) { return std::isfinite(v) ? json_num(v) : std::string(); }

inline std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char ch : s) {
    if (ch == '"') o += '"';
    o += ch;
  }
  return o + "\"";
}

inline bool write_csv(const std::string& file, const Meta& meta, const std::vector<Row>& rows) {
  std::ofstream o(file);
  if (!o) return false;
  o << "algorithm,layout,variant,precision,exec_space,device,n,nsys,points,reps,time_median_s,time_min_s,"
       "time_max_s,min_elems_per_point,ns_per_point,gbs_min_data,bw_ratio_to_copy,time_ratio_to_copy,"
       "max_rel_residual,status,note\n";
  for (const Row& r : rows) {
    const bool na = r.status == "n/a";
    o << csv_field(r.algo) << ',' << csv_field(r.layout) << ',' << csv_field(r.variant) << ',' << r.precision
      << ',' << csv_field(meta.kv.at("exec_space")) << ',' << csv_field(meta.kv.at("device")) << ',' << r.n
      << ',' << r.nsys << ',' << r.points << ',' << r.reps << ',' << csv_num(r.t_med) << ','
      << csv_num(r.t_min) << ',' << csv_num(r.t_max) << ',' << r.elems_per_point << ','
      << (na ? "" : csv_num(r.ns_per_point)) << ',' << (na ? "" : csv_num(r.gbs)) << ','
      << (na ? "" : csv_num(r.bw_ratio)) << ',' << (na ? "" : csv_num(r.time_ratio)) << ','
      << csv_num(r.residual) << ',' << r.status << ',' << csv_field(r.note) << '\n';
  }
  return static_cast<bool>(o);
}

}  // namespace kband_bench
