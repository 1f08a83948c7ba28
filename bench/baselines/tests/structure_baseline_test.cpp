// The structure baseline computes what the app computes: from the same mesh, after the same
// steps, the same springs are broken, the same nodes deleted, and every live node has the same
// position, velocity and degree, bit for bit (one backend: the same arithmetic in the same order,
// structure_baseline.hpp says how).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "baselines/structure_baseline.hpp"
#include "shoal/sim/phase_timer.hpp"
#include "structure/structure_model.hpp"

namespace {

void expect_structure_agrees(std::uint64_t nodes, std::uint64_t seed, std::uint32_t steps, const structure::parameters& p) {
  const structure::mesh m = structure::make_mesh(nodes, seed, p);
  shoal::runtime<structure::Mesh> rt(std::size_t{16} << 20);
  structure::populate(rt, m, p);
  structure_baseline::mesh_arrays base(m, p);
  shoal::sim::phase_timer timer(false);
  for (std::uint32_t s = 0; s < steps; ++s) {
    structure::step(rt, p, timer);
    base.step();
  }
  rt.synchronize();
  shoal::sim::sums scratch{5};
  const structure::totals a = structure::measure(rt, scratch), b = base.measure(scratch);
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.pulls, b.pulls);
  EXPECT_EQ(a.anchors, b.anchors);
  EXPECT_EQ(a.springs, b.springs);
  EXPECT_EQ(a.state_hash, b.state_hash);
  ASSERT_LT(a.springs, m.springs()) << "springs broke: the test covers the deletes";

  // Object by object: the app's live springs are the baseline's, its live nodes too, same state.
  const std::size_t n = m.nodes();
  const std::vector<std::uint8_t> node_state = base.node_states(), spring_state = base.spring_states();
  const std::vector<float> f = base.node_columns();
  const auto springs = rt.download<structure::Spring>();
  std::vector<bool> app_spring(m.springs(), false);
  for (std::size_t i = 0; i < springs.size(); ++i) app_spring[springs.get<&structure::Spring::id>()[i]] = true;
  for (std::uint32_t j = 0; j < m.springs(); ++j)
    ASSERT_EQ(app_spring[j], spring_state[j] == structure_baseline::live) << "spring " << j;
  const auto all = rt.download<structure::NodeBase>();
  std::vector<bool> app_node(n, false);
  for (std::size_t r = 0; r < all.size(); ++r) {
    const std::uint32_t i = all.get<&structure::NodeBase::id>()[r];
    app_node[i] = true;
    ASSERT_EQ(node_state[i], structure_baseline::live) << "node " << i;
    EXPECT_EQ(all.get<&structure::NodeBase::x>()[r], f[i]) << "node " << i;
    EXPECT_EQ(all.get<&structure::NodeBase::y>()[r], f[n + i]) << "node " << i;
  }
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(app_node[i], node_state[i] == structure_baseline::live) << "node " << i;
}

TEST(StructureBaseline, AgreesWithTheAppBitForBit) {
  structure::parameters p;
  expect_structure_agrees(3000, 4, 25, p);
  // Fewer rounds, damping, a lighter mass and weaker springs: free nodes move and break too.
  p.iterations = 7, p.damping = 0.01f, p.mass = 5.0f, p.max_force = 0.3f;
  expect_structure_agrees(2000, 11, 40, p);
}

}  // namespace
