// The street network: the generator's invariants (degrees, cell counts, roles), its
// determinism, and the builder's refusals. Host code only.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "network.hpp"

namespace traffic::test {
namespace {

network_params small_params(std::uint64_t seed) {
  network_params p;
  p.intersections = 400;
  p.seed = seed;
  return p;
}

TEST(Network, DegreesAreOneToFourOutAndAtMostFourIn) {
  const network net = generate(small_params(1));
  ASSERT_EQ(net.intersections(), 400u);
  std::vector<std::uint32_t> in(net.intersections(), 0), out(net.intersections(), 0);
  for (const street& s : net.streets) {
    ASSERT_NE(s.from, s.to) << "no street returns to its own intersection";
    out[s.from] += 1;
    in[s.to] += 1;
  }
  for (std::uint32_t i = 0; i < net.intersections(); ++i) {
    EXPECT_GE(out[i], 1u) << "intersection " << i;
    EXPECT_LE(out[i], 4u) << "intersection " << i;
    EXPECT_LE(in[i], 4u) << "intersection " << i;
    EXPECT_EQ(out[i], net.num_out[i]);
    EXPECT_EQ(in[i], net.num_in[i]);
  }
}

TEST(Network, StreetsAreCutIntoCellsOfTheCellLength) {
  const network_params p = small_params(2);
  const network net = generate(p);
  std::uint32_t next_first = 0, single = 0;
  for (const street& s : net.streets) {
    const double dx = double{net.x[s.to]} - net.x[s.from], dy = double{net.y[s.to]} - net.y[s.from];
    const double length = std::sqrt(dx * dx + dy * dy);
    EXPECT_GE(s.cells, 1u);
    // ceil(length / cell_length) pieces: each at most one cell long, one fewer would not do.
    if (length > p.cell_length) {
      EXPECT_LE(length / s.cells, p.cell_length * (1 + 1e-9));
      EXPECT_GT(length / (s.cells - 1), p.cell_length);
    } else {
      EXPECT_EQ(s.cells, 1u);
      ++single;
    }
    EXPECT_EQ(s.first, next_first) << "streets are contiguous in cell order";
    next_first += s.cells;
  }
  EXPECT_EQ(next_first, net.cells());
  // 400 random points: mean street length about 0.52, so about 100 cells per street.
  EXPECT_GT(net.cells(), 60 * net.streets.size());
  EXPECT_LT(net.cells(), 150 * net.streets.size());
  EXPECT_LT(single, net.streets.size() / 10);
}

TEST(Network, EndCellsKnowTheirIntersectionAndLight) {
  const network net = generate(small_params(3));
  const std::vector<std::uint32_t> first = net.out_first_cells();
  std::vector<std::set<std::uint32_t>> slots(net.intersections());
  for (const street& s : net.streets) {
    for (std::uint32_t c = s.first; c < s.end(); ++c) {
      ASSERT_FALSE(cell::is_end(net.cell_info[c])) << "cell " << c;
      ASSERT_EQ(cell::limit(net.cell_info[c]), s.limit);
    }
    const std::uint32_t e = net.cell_info[s.end()];
    ASSERT_TRUE(cell::is_end(e));
    EXPECT_EQ(cell::limit(e), s.limit);
    EXPECT_GE(s.limit, 5u);
    EXPECT_LE(s.limit, 9u);
    EXPECT_EQ(cell::intersection(e), s.to);
    EXPECT_EQ(cell::num_in(e), net.num_in[s.to]);
    EXPECT_EQ(cell::num_out(e), net.num_out[s.to]);
    EXPECT_TRUE(slots[s.to].insert(cell::slot(e)).second) << "two streets share a light slot";
    EXPECT_LT(cell::slot(e), net.num_in[s.to]);
  }
  for (std::uint32_t i = 0; i < net.intersections(); ++i)
    for (std::uint32_t k = 0; k < 4; ++k) {
      if (k < net.num_out[i]) {
        const street& s = net.streets[net.out[i][k]];
        EXPECT_EQ(s.from, i);
        EXPECT_EQ(first[4 * i + k], s.first);
      } else {
        EXPECT_EQ(first[4 * i + k], ~0u);
      }
    }
}

TEST(Network, ProducersAndTargetsAreDisjointFractionsOfTheCells) {
  network_params p = small_params(4);
  p.intersections = 2000;  // about 500,000 cells: fractions within a few per cent
  const network net = generate(p);
  std::uint64_t targets = 0;
  for (std::uint32_t info : net.cell_info) targets += cell::is_target(info) ? 1 : 0;
  EXPECT_EQ(targets, net.targets);
  for (std::uint32_t c : net.producers) EXPECT_FALSE(cell::is_target(net.cell_info[c])) << c;
  EXPECT_TRUE(std::is_sorted(net.producers.begin(), net.producers.end()));
  const double cells = static_cast<double>(net.cells());
  EXPECT_NEAR(net.producers.size() / cells, 0.02, 0.002);
  EXPECT_NEAR(targets / cells, 0.003, 0.0004);
}

TEST(Network, SameParametersSameNetworkOtherSeedOtherNetwork) {
  const network a = generate(small_params(5)), b = generate(small_params(5));
  const network c = generate(small_params(6));
  EXPECT_EQ(a.cell_info, b.cell_info);
  EXPECT_EQ(a.producers, b.producers);
  EXPECT_EQ(a.x, b.x);
  EXPECT_NE(a.cell_info, c.cell_info);
}

TEST(Network, DefaultSizeMatchesDynaSoarsScale) {
  const network net = generate(network_params{});
  EXPECT_EQ(net.intersections(), 17500u);
  // 17,500 x 2.5 streets x about 104 cells.
  EXPECT_GT(net.cells(), 3'500'000u);
  EXPECT_LT(net.cells(), 5'500'000u);
}

TEST(NetworkBuilder, RefusesLoopsFifthStreetsAndDeadEnds) {
  network_builder b;
  const std::uint32_t hub = b.add_intersection(0, 0);
  std::vector<std::uint32_t> others;
  for (int k = 0; k < 5; ++k) others.push_back(b.add_intersection(0.1f * k, 0.1f));
  EXPECT_THROW(b.add_street(hub, hub, 3, 5), std::invalid_argument);
  for (int k = 0; k < 4; ++k) b.add_street(hub, others[k], 3, 5);
  EXPECT_THROW(b.add_street(hub, others[4], 3, 5), std::invalid_argument) << "fifth outgoing";
  for (int k = 0; k < 4; ++k) b.add_street(others[k], hub, 3, 5);
  EXPECT_THROW(b.add_street(others[4], hub, 3, 5), std::invalid_argument) << "fifth incoming";
  EXPECT_THROW(b.add_street(others[4], others[0], 0, 5), std::invalid_argument) << "no cells";
  b.add_street(others[4], others[0], 2, 5);
  b.add_street(others[0], others[4], 2, 5);
  EXPECT_NO_THROW(network_builder(b).finish());
  b.add_intersection(1, 1);
  const std::uint32_t dead = b.add_intersection(1, 0.5f);
  b.add_street(others[1], dead, 2, 5);
  EXPECT_THROW(b.finish(), std::invalid_argument) << "a street into an intersection with no way out";
}

TEST(Network, GeneratorRejectsBadParameters) {
  network_params p = small_params(1);
  p.intersections = 1;
  EXPECT_THROW(generate(p), std::invalid_argument);
  p = small_params(1);
  p.producer_ratio = 0.9;
  p.target_ratio = 0.2;
  EXPECT_THROW(generate(p), std::invalid_argument);
  p = small_params(1);
  p.cell_length = 0;
  EXPECT_THROW(generate(p), std::invalid_argument);
}

}  // namespace
}  // namespace traffic::test
