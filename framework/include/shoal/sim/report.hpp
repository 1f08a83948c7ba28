#pragma once
/// @file
/// The run header and the summary line, as `key=value` pairs so that people can read them and
/// scripts can grep them:
///
///   wator: backend=cuda device="NVIDIA H100 80GB HBM3 (sm_90, ...)" seed=1 steps=500 heap_mb=1024 width=2048 height=2560
///   wator: steps=500 seconds=0.412 steps_per_s=1213.6 fish=1210321 sharks=302212 checksum=5746447

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shoal/arch/error.hpp"
#include "shoal/config.hpp"
#include "shoal/sim/cli.hpp"

namespace shoal::sim {

/// Named values in the order given ("width" -> "2048").
using fields = std::vector<std::pair<std::string, std::string>>;

namespace detail {
inline std::string join(const fields& f) {
  std::string s;
  for (const auto& [k, v] : f) {
    const bool quote = v.empty() || v.find_first_of(" \t\"") != std::string::npos;
    s += " " + k + "=" + (quote ? "\"" + v + "\"" : v);
  }
  return s;
}
}  // namespace detail

/// "<app>: backend=.. device=".." seed=.. steps=.. heap_mb=.. <sizes...>".
inline std::string header_line(std::string_view app, const run_options& run, const fields& sizes = {}) {
  const auto& dev = arch::probe_device();
  fields f{{"backend", backend_name},
           {"device", dev.usable ? dev.description : "none (" + dev.reason + ")"},
           {"seed", std::to_string(run.seed)},
           {"steps", std::to_string(run.steps)},
           {"heap_mb", std::to_string(run.heap_mb)}};
  f.insert(f.end(), sizes.begin(), sizes.end());
  return std::string(app) + ":" + detail::join(f);
}

/// What summary_line() prints at the end of a run.
struct summary {
  std::uint64_t steps = 0;  ///< steps run by this invocation (not those before a --resume)
  double seconds = 0;  ///< wall time of those steps; steps_per_s is steps / seconds
  /// Final populations or other results, by name, in output order.
  std::vector<std::pair<std::string, std::uint64_t>> populations;
  std::uint64_t checksum = 0;  ///< the app's digest of its final state: same seed and flags, same checksum
};

/// A checksum of a real result (a kinetic energy): llround(value * scale) while that fits in 62
/// bits, else the bits of the double, so that any value, however large, gives a defined and
/// reproducible checksum (a cast of an out-of-range llround is undefined: it gave 0).
inline std::uint64_t real_checksum(double value, double scale) {
  const double q = value * scale;
  if (std::fabs(q) < 0x1p62) return static_cast<std::uint64_t>(std::llround(q));
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

/// "<app>: steps=.. seconds=.. steps_per_s=.. <populations...> checksum=..".
inline std::string summary_line(std::string_view app, const summary& s) {
  char timing[96];
  std::snprintf(timing, sizeof timing, "%.3f", s.seconds);
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.1f", s.seconds > 0 ? static_cast<double>(s.steps) / s.seconds : 0.0);
  fields f{{"steps", std::to_string(s.steps)}, {"seconds", timing}, {"steps_per_s", rate}};
  for (const auto& [name, count] : s.populations) f.emplace_back(name, std::to_string(count));
  f.emplace_back("checksum", std::to_string(s.checksum));
  return std::string(app) + ":" + detail::join(f);
}

}  // namespace shoal::sim
