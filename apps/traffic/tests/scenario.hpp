#pragma once
// Hand-built networks for the traffic tests.

#include "network.hpp"
#include "traffic_model.hpp"

namespace traffic::test {

/// Two streets meet at intersection B: `main` (A -> B, light slot 0) and `side` (C -> B, light
/// slot 1); B continues to A through `exit`. No producers or targets unless a test adds them.
struct junction {
  network_builder builder;
  std::uint32_t a = 0, b = 0, c = 0;
  std::uint32_t main = 0, side = 0, exit = 0;

  explicit junction(std::uint32_t cells = 10, std::uint32_t limit = 9) {
    a = builder.add_intersection(0.0f, 0.0f);
    b = builder.add_intersection(0.5f, 0.0f);
    c = builder.add_intersection(0.5f, 0.5f);
    main = builder.add_street(a, b, cells, limit);
    side = builder.add_street(c, b, cells, limit);
    exit = builder.add_street(b, a, cells, limit);
  }
};

/// Parameters without randomness where a test needs certainty: no random slow-down, no
/// producers firing unless asked.
inline model_params calm(std::uint32_t light_period, double car_probability = 0.0) {
  model_params p;
  p.slow_probability = 0.0;
  p.car_probability = car_probability;
  p.light_period = light_period;
  p.seed = 7;
  return p;
}

inline constexpr std::size_t test_heap = std::size_t{16} << 20;

}  // namespace traffic::test
