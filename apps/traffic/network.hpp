#pragma once
/// @file
/// The street network, built on the host (the same code for both backends, so both simulate
/// the same network) and uploaded as plain arrays.
///
/// Intersections are points of the unit square. A street runs from one intersection to another
/// and is cut into cells; the cells of a street have consecutive indices, so a car moves from
/// cell c to c + 1 until it reaches the street's end cell, which is where the traffic light of
/// the next intersection stands and where the car chooses one of that intersection's outgoing
/// streets. An intersection has 1 to 4 outgoing and at most 4 incoming streets.
///
/// network_builder builds any network by hand (tests); generate() builds DynaSOAr's random one.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "cell_info.hpp"
#include "shoal/sim/rng.hpp"

namespace traffic {

inline constexpr std::uint32_t no_street = ~std::uint32_t{0};
/// Cell indices are 32-bit, and ~0 marks an unused outgoing street.
inline constexpr std::uint64_t max_cells = 0xFFFFFFFFull;

struct street {
  std::uint32_t from, to;   // intersections
  std::uint32_t first;      // its first cell; the others follow
  std::uint32_t cells;      // at least 1
  std::uint32_t slot;       // which incoming street of `to` it is (its light slot)
  std::uint32_t limit;      // speed limit, cells per step
  std::uint32_t end() const { return first + cells - 1; }
};

struct network {
  std::vector<float> x, y;                              // per intersection
  std::vector<std::array<std::uint32_t, cell::max_degree>> out;  // outgoing streets (no_street)
  std::vector<std::uint8_t> num_out, num_in;
  std::vector<street> streets;
  std::vector<std::uint32_t> cell_info;  // cell.hpp's packed word per cell
  std::vector<std::uint32_t> producers;  // cells, ascending
  std::uint64_t targets = 0;

  std::uint32_t intersections() const { return static_cast<std::uint32_t>(x.size()); }
  std::uint64_t cells() const { return cell_info.size(); }

  /// The first cells of each intersection's outgoing streets, 4 per intersection (~0 unused):
  /// what a car at an end cell chooses from.
  std::vector<std::uint32_t> out_first_cells() const {
    std::vector<std::uint32_t> first(std::size_t{cell::max_degree} * intersections(), ~0u);
    for (std::uint32_t i = 0; i < intersections(); ++i)
      for (std::uint32_t k = 0; k < num_out[i]; ++k)
        first[std::size_t{cell::max_degree} * i + k] = streets[out[i][k]].first;
    return first;
  }
};

/// Builds a network street by street. Every intersection that a street enters must get at least
/// one outgoing street before finish(), or cars would have nowhere to go.
class network_builder {
 public:
  std::uint32_t add_intersection(float x, float y) {
    if (net_.x.size() >= cell::max_intersections)
      throw std::invalid_argument("at most " + std::to_string(cell::max_intersections) +
                                  " intersections");
    net_.x.push_back(x);
    net_.y.push_back(y);
    net_.out.push_back({no_street, no_street, no_street, no_street});
    net_.num_out.push_back(0);
    net_.num_in.push_back(0);
    return static_cast<std::uint32_t>(net_.x.size() - 1);
  }

  /// Whether a street from `from` to `to` may still be added (degrees below 4, not a loop).
  bool can_connect(std::uint32_t from, std::uint32_t to) const {
    return from != to && net_.num_out[from] < cell::max_degree && net_.num_in[to] < cell::max_degree;
  }

  /// A street of `cells` cells (>= 1) with speed limit `limit` (1..15); returns its index.
  std::uint32_t add_street(std::uint32_t from, std::uint32_t to, std::uint32_t cells,
                           std::uint32_t limit) {
    const std::uint32_t n = static_cast<std::uint32_t>(net_.x.size());
    if (from >= n || to >= n) throw std::invalid_argument("street between unknown intersections");
    if (!can_connect(from, to))
      throw std::invalid_argument("street " + std::to_string(from) + " -> " + std::to_string(to) +
                                  ": a loop, or more than 4 streets out of or into an intersection");
    if (cells == 0 || limit == 0 || limit > cell::max_limit)
      throw std::invalid_argument("a street needs at least 1 cell and a limit of 1..15");
    if (net_.cell_info.size() + cells >= max_cells)
      throw std::invalid_argument("the network has more than " + std::to_string(max_cells - 1) + " cells");
    street s{from, to, static_cast<std::uint32_t>(net_.cell_info.size()), cells, net_.num_in[to], limit};
    net_.out[from][net_.num_out[from]++] = static_cast<std::uint32_t>(net_.streets.size());
    net_.num_in[to] += 1;
    net_.cell_info.insert(net_.cell_info.end(), cells, cell::street_cell(limit, false));
    net_.streets.push_back(s);
    return static_cast<std::uint32_t>(net_.streets.size() - 1);
  }

  std::uint64_t cells() const { return net_.cell_info.size(); }
  /// The network so far (positions, streets), e.g. for street lengths.
  const network& peek() const { return net_; }

  void set_target(std::uint32_t c) {
    net_.cell_info.at(c) |= cell::street_cell(0, true);
    roles_.push_back(c);
  }
  void set_producer(std::uint32_t c) {
    if (c >= net_.cell_info.size()) throw std::invalid_argument("producer outside the network");
    net_.producers.push_back(c);
  }

  network finish() {
    for (std::uint32_t i = 0; i < net_.x.size(); ++i)
      if (net_.num_in[i] > 0 && net_.num_out[i] == 0)
        throw std::invalid_argument("intersection " + std::to_string(i) +
                                    " has incoming streets but no outgoing one");
    for (const street& s : net_.streets) {
      std::uint32_t& info = net_.cell_info[s.end()];
      info = cell::end_cell(s.limit, cell::is_target(info), s.slot, net_.num_in[s.to],
                            net_.num_out[s.to], s.to);
    }
    std::sort(net_.producers.begin(), net_.producers.end());
    net_.producers.erase(std::unique(net_.producers.begin(), net_.producers.end()),
                         net_.producers.end());
    std::sort(roles_.begin(), roles_.end());
    net_.targets = static_cast<std::uint64_t>(std::unique(roles_.begin(), roles_.end()) - roles_.begin());
    return std::move(net_);
  }

 private:
  network net_;
  std::vector<std::uint32_t> roles_;  // target cells, to count them
};

/// DynaSOAr's benchmark network (its defaults).
struct network_params {
  std::uint32_t intersections = 17500;
  double cell_length = 0.005;
  double producer_ratio = 0.02;   // of the cells
  double target_ratio = 0.003;    // of the cells, disjoint from the producers
  std::uint32_t max_speed = 10;   // street limits are max_speed/2 .. max_speed - 1
  std::uint64_t seed = 42;
};

/// Random streams of the network (car and producer draws use others, see traffic_model.hpp).
namespace stream {
inline constexpr std::uint32_t intersection = 100;  // id: intersection (position, degree)
inline constexpr std::uint32_t destination = 101;   // id: intersection, step: its k-th street
inline constexpr std::uint32_t street_limit = 102;  // id: street
inline constexpr std::uint32_t cell_role = 103;     // id: cell (producer, target)
}  // namespace stream

/// Cells of a street of length `length`: pieces of `cell_length`, at least one.
inline std::uint32_t cells_for(double length, double cell_length) {
  return static_cast<std::uint32_t>(std::max(1.0, std::ceil(length / cell_length)));
}

/// The random network: intersections at random points, each with 1–4 streets to random other
/// intersections that still have fewer than 4 incoming ones, cut into cells of `cell_length`;
/// producer and target cells drawn per cell. Every draw is keyed by what it decides (an
/// intersection, a street, a cell), so the network depends on the parameters only.
inline network generate(const network_params& p) {
  if (p.intersections < 2) throw std::invalid_argument("the network needs at least 2 intersections");
  if (p.intersections > cell::max_intersections)
    throw std::invalid_argument("at most " + std::to_string(cell::max_intersections) + " intersections");
  if (p.max_speed < 2 || p.max_speed > cell::max_limit + 1)
    throw std::invalid_argument("the maximum speed must be 2..16");
  if (!(p.cell_length > 0.0)) throw std::invalid_argument("the cell length must be positive");
  if (!(p.producer_ratio >= 0.0 && p.target_ratio >= 0.0 && p.producer_ratio + p.target_ratio <= 1.0))
    throw std::invalid_argument("producer and target ratios must be >= 0 and add up to at most 1");
  const std::uint32_t n = p.intersections;
  network_builder b;
  std::vector<std::uint32_t> degree(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    shoal::sim::random r(p.seed, i, 0, stream::intersection);
    const float x = r.uniform(), y = r.uniform();
    b.add_intersection(x, y);
    degree[i] = 1 + r.below(cell::max_degree);
  }
  // Destinations first, in DynaSOAr's order (intersection by intersection): an intersection
  // with 4 incoming streets takes no more, so later choices depend on earlier ones.
  std::vector<std::uint32_t> incoming(n, 0);
  std::vector<std::array<std::uint32_t, 2>> streets;  // (from, to)
  auto open = [&](std::uint32_t i, std::uint32_t c) { return c != i && incoming[c] < cell::max_degree; };
  for (std::uint32_t i = 0; i < n; ++i) {
    for (std::uint32_t k = 0; k < degree[i]; ++k) {
      // Rejection sampling as DynaSOAr does, then a deterministic scan should it keep failing
      // (possible only when nearly every intersection already has 4 incoming streets).
      std::uint32_t to = n;
      shoal::sim::random r(p.seed, i, k, stream::destination);
      for (std::uint32_t attempt = 0; attempt < 64 && to == n; ++attempt) {
        const std::uint32_t c = r.below(n);
        if (open(i, c)) to = c;
      }
      for (std::uint32_t j = 1; j < n && to == n; ++j)
        if (open(i, (i + j) % n)) to = (i + j) % n;
      if (to == n) {
        if (k == 0) throw std::runtime_error("cannot build the network: every other intersection is full");
        break;
      }
      incoming[to] += 1;
      streets.push_back({i, to});
    }
  }
  // Street lengths, and the network's size before any cell is stored.
  const network& shape = b.peek();
  std::vector<std::uint32_t> cells(streets.size());
  std::uint64_t total = 0;
  for (std::size_t s = 0; s < streets.size(); ++s) {
    const auto [from, to] = streets[s];
    const double dx = static_cast<double>(shape.x[to]) - shape.x[from];
    const double dy = static_cast<double>(shape.y[to]) - shape.y[from];
    cells[s] = cells_for(std::sqrt(dx * dx + dy * dy), p.cell_length);
    total += cells[s];
  }
  if (total >= max_cells)
    throw std::invalid_argument("the network would have " + std::to_string(total) + " cells, more than " +
                                std::to_string(max_cells - 1));
  const std::uint32_t low = p.max_speed / 2, span = p.max_speed - low;
  for (std::uint32_t s = 0; s < streets.size(); ++s) {
    const std::uint32_t limit = low + shoal::sim::random(p.seed, s, 0, stream::street_limit).below(span);
    b.add_street(streets[s][0], streets[s][1], cells[s], limit);
  }
  // One word per cell against two thresholds: producer and target cells are disjoint.
  const std::uint64_t producer = shoal::sim::probability(p.producer_ratio).threshold();
  const std::uint64_t target = producer + shoal::sim::probability(p.target_ratio).threshold();
  for (std::uint64_t c = 0; c < b.cells(); ++c) {
    const std::uint64_t u = shoal::sim::random(p.seed, c, 0, stream::cell_role).next();
    if (u < producer) b.set_producer(static_cast<std::uint32_t>(c));
    else if (u < target) b.set_target(static_cast<std::uint32_t>(c));
  }
  return b.finish();
}

}  // namespace traffic
