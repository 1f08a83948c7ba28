// Structure's rules on tiny hand-made meshes (a spring that breaks exactly at its threshold and
// not below it, a node deleted with its last spring, anchors that do not move, a free node's move
// to the bit), the generated mesh's shape, reproducibility, and checkpoints (resumed equals
// uninterrupted; a mesh whose pointers disagree is refused).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

#include "shoal/sim/checkpoints.hpp"
#include "shoal/sim/phase_timer.hpp"
#include "structure_model.hpp"
#include "structure_resume.hpp"

namespace {

using namespace structure;

/// A hand-made mesh: nodes added in id order (free nodes first, then pulls, then anchors).
struct builder {
  mesh m;
  std::vector<std::uint32_t> degree;
  void node(kind k, float x, float y, float vx = 0.0f, float vy = 0.0f) {
    (k == kind::free ? m.free : k == kind::pull ? m.pulls : m.anchors) += 1;
    m.x.push_back(x), m.y.push_back(y), m.vx.push_back(vx), m.vy.push_back(vy);
    degree.push_back(0);
    m.slots.resize(m.slots.size() + max_degree, -1);
  }
  void spring(std::uint32_t a, std::uint32_t b, float k) {
    const auto j = static_cast<std::int32_t>(m.p1.size());
    m.p1.push_back(a), m.p2.push_back(b), m.stiffness.push_back(k);
    m.slots[a * max_degree + degree[a]++] = j;
    m.slots[b * max_degree + degree[b]++] = j;
  }
};

/// A node's state after a run, by id.
struct node_state {
  float x, y;
  std::uint32_t degree;
};

struct world {
  shoal::runtime<Mesh> rt{std::size_t{4} << 20};
  parameters p;
  shoal::sim::phase_timer timer{false};

  void steps(int n) {
    for (int i = 0; i < n; ++i) step(rt, p, timer);
    rt.synchronize();
  }
  std::map<std::uint32_t, node_state> nodes() {
    const auto all = rt.download<NodeBase>();
    std::map<std::uint32_t, node_state> out;
    for (std::size_t i = 0; i < all.size(); ++i)
      out[all.get<&NodeBase::id>()[i]] = {all.get<&NodeBase::x>()[i], all.get<&NodeBase::y>()[i], all.get<&NodeBase::degree>()[i]};
    return out;
  }
  std::size_t springs() { return rt.download<Spring>().size(); }
};

/// Anchor (id 1) at x = 0.25 and a pull (id 0) at x = 0.5 dragged right by 0.125 · 0.25, the
/// spring between them of stiffness 4: after the drag it is stretched by 0.03125 and pulls with
/// 4 · 0.03125 = 0.125, all exact in binary.
void two_nodes(world& w) {
  builder b;
  b.node(kind::pull, 0.5f, 0.5f, 0.125f, 0.0f);
  b.node(kind::anchor, 0.25f, 0.5f);
  b.spring(0, 1, 4.0f);
  w.p.dt = 0.25f, w.p.iterations = 1;
  populate(w.rt, b.m, w.p);
}

TEST(StructureRules, SpringBreaksExactlyAtItsThresholdAndItsNodesGoWithIt) {
  world w;
  w.p.max_force = 0.125f;
  two_nodes(w);
  ASSERT_EQ(w.springs(), 1u);
  w.steps(1);
  EXPECT_EQ(w.springs(), 0u) << "force 0.125 = max_force: the spring breaks";
  EXPECT_TRUE(w.nodes().empty()) << "both nodes lost their last spring";
  EXPECT_EQ(w.rt.verify(), "");
}

TEST(StructureRules, SpringJustBelowItsThresholdHolds) {
  world w;
  w.p.max_force = std::nextafter(0.125f, 1.0f);
  two_nodes(w);
  w.steps(1);
  EXPECT_EQ(w.springs(), 1u);
  const auto n = w.nodes();
  ASSERT_EQ(n.size(), 2u);
  EXPECT_EQ(n.at(0).x, 0.53125f) << "the pull moved by its velocity x dt";
  EXPECT_EQ(n.at(1).x, 0.25f) << "the anchor did not move";
  EXPECT_EQ(n.at(1).y, 0.5f);
}

/// Free node 0 at 0.5 between anchor 2 at 0.25 (slack spring) and pull 1 at 0.75 dragged right.
void chain(world& w, float max_force) {
  builder b;
  b.node(kind::free, 0.5f, 0.5f);
  b.node(kind::pull, 0.75f, 0.5f, 0.125f, 0.0f);
  b.node(kind::anchor, 0.25f, 0.5f);
  b.spring(2, 0, 4.0f);  // anchor - node
  b.spring(0, 1, 4.0f);  // node - pull
  w.p.dt = 0.25f, w.p.iterations = 1, w.p.mass = 1.0f, w.p.max_force = max_force;
  populate(w.rt, b.m, w.p);
}

TEST(StructureRules, FreeNodeMovesByTheRuleAndAnchorsStay) {
  world w;
  chain(w, 1.0f);
  w.steps(1);
  const auto n = w.nodes();
  ASSERT_EQ(n.size(), 3u);
  // Pulled right with 0.125: vx = 0.125 · 0.25 / 1, x = 0.5 + vx · 0.25 (exact in binary).
  EXPECT_EQ(n.at(0).x, 0.5078125f);
  EXPECT_EQ(n.at(0).y, 0.5f);
  EXPECT_EQ(n.at(1).x, 0.78125f);
  EXPECT_EQ(n.at(2).x, 0.25f) << "the anchor is pulled too but does not move";
  // Many steps on: the anchor is where it started, the free node has followed the pull.
  w.steps(5);
  const auto later = w.nodes();
  ASSERT_TRUE(later.count(2));
  EXPECT_EQ(later.at(2).x, 0.25f);
  EXPECT_EQ(later.at(2).y, 0.5f);
}

TEST(StructureRules, NodeThatLosesItsLastSpringIsDeletedOthersKeepTheirs) {
  world w;
  chain(w, 0.125f);  // node - pull breaks at once; anchor - node is slack
  w.steps(1);
  const auto n = w.nodes();
  EXPECT_EQ(w.springs(), 1u);
  ASSERT_EQ(n.size(), 2u) << "the pull lost its only spring";
  EXPECT_FALSE(n.count(1));
  EXPECT_EQ(n.at(0).degree, 1u) << "the free node let go of the broken spring";
  EXPECT_EQ(n.at(2).degree, 1u);
  EXPECT_EQ(n.at(0).x, 0.5f) << "a broken spring pulls no more";
  EXPECT_EQ(w.rt.verify(), "");
}

TEST(StructureMesh, ShapeOfTheGeneratedMesh) {
  parameters p;
  const mesh m = make_mesh(1000, 3, p);
  EXPECT_EQ(m.nodes(), 1000u);
  EXPECT_EQ(m.pulls, 250u);
  EXPECT_EQ(m.anchors, 100u);
  EXPECT_EQ(m.springs(), springs_wanted(1000, p));
  std::vector<int> degree(m.nodes(), 0);
  for (std::uint32_t j = 0; j < m.springs(); ++j) {
    EXPECT_NE(m.p1[j], m.p2[j]);
    ++degree[m.p1[j]], ++degree[m.p2[j]];
    EXPECT_GE(m.stiffness[j], p.spring_min);
    EXPECT_LT(m.stiffness[j], p.spring_max);
  }
  for (std::uint32_t i = 0; i < m.nodes(); ++i) {
    EXPECT_LE(degree[i], max_degree);
    EXPECT_GE(m.x[i], p.margin);
    EXPECT_LE(m.x[i], 1.0f - p.margin);
    int filled = 0;
    for (int k = 0; k < max_degree; ++k) filled += m.slots[i * max_degree + k] >= 0;
    EXPECT_EQ(filled, degree[i]);
  }
  // Too small for its springs: stops instead of looping.
  p.spring_fill = 1.0f;
  EXPECT_LE(make_mesh(3, 1, p).springs(), springs_wanted(3, p));
}

totals run(std::uint64_t nodes, std::uint64_t seed, int n_steps) {
  world w;
  populate(w.rt, make_mesh(nodes, seed, w.p), w.p);
  w.steps(n_steps);
  shoal::sim::sums s{5};
  return measure(w.rt, s);
}

TEST(StructureRuns, ReproducibleAndSpringsBreak) {
  const totals a = run(2000, 5, 30), b = run(2000, 5, 30), c = run(2000, 6, 30);
  EXPECT_EQ(a.state_hash, b.state_hash);
  EXPECT_EQ(a.springs, b.springs);
  EXPECT_NE(a.state_hash, c.state_hash);
  EXPECT_LT(a.springs, springs_wanted(2000, parameters{})) << "pulls broke springs in 30 steps";
  EXPECT_LT(a.nodes + a.pulls + a.anchors, 2000u) << "some nodes lost all their springs";
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("structure_" + name + "_" + std::to_string(::getpid()) + ".ckpt")).string();
}

TEST(StructureCheckpoints, ResumedEqualsUninterrupted) {
  model_flags f;
  f.nodes = 1500;
  const std::string path = temp_path("resume");
  world first;
  populate(first.rt, make_mesh(f.nodes, 9, f.p), f.p);
  first.steps(12);
  shoal::sim::write_checkpoint(path, "structure", 12, 9, [&](shoal::checkpoint::writer& w) { save_state(w, first.rt, f); });
  first.steps(12);
  world second;
  resume(second.rt, f, shoal::checkpoint::reader(path));
  second.steps(12);
  shoal::sim::sums s{5};
  const totals a = measure(first.rt, s), b = measure(second.rt, s);
  EXPECT_EQ(a.state_hash, b.state_hash);
  EXPECT_EQ(a.springs, b.springs);
  EXPECT_LT(a.springs, springs_wanted(f.nodes, f.p)) << "springs broke in the run";
  std::filesystem::remove(path);
}

TEST(StructureCheckpoints, RefusedWhenFlagsDoNotFitTheMesh) {
  model_flags f;
  f.nodes = 200;
  const std::string path = temp_path("refused");
  world w;
  populate(w.rt, make_mesh(f.nodes, 2, f.p), f.p);
  shoal::sim::write_checkpoint(path, "structure", 1, 2, [&](shoal::checkpoint::writer& cw) { save_state(cw, w.rt, f); });
  model_flags fewer = f;
  fewer.nodes = 100;  // ids and spring ids out of range
  EXPECT_THROW(check_saved_state(shoal::checkpoint::reader(path), fewer), shoal::checkpoint_error);
  model_flags heavier = f;
  heavier.p.mass = 2.0f * f.p.mass;
  EXPECT_THROW(check_saved_state(shoal::checkpoint::reader(path), heavier), shoal::checkpoint_error);
  EXPECT_NO_THROW(check_saved_state(shoal::checkpoint::reader(path), f));
  std::filesystem::remove(path);
}

}  // namespace
