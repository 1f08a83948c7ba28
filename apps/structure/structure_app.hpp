#pragma once
/// @file
/// Structure as a program (sim::run_model, shoal/viz/driver.hpp): its flags (--nodes and
/// DynaSOAr's constants, its values the defaults), the heap, the CSV row (nodes, pulls, anchors,
/// springs, state_hash), the summary, checkpoints and the picture. The rules are in
/// structure_model.hpp, the starting mesh in structure_mesh.hpp.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shoal/viz/driver.hpp"
#include "structure_model.hpp"
#include "structure_resume.hpp"
#include "structure_view.hpp"

namespace structure {

class app {
 public:
  static constexpr const char* name = "structure";
  static constexpr const char* description =
      "Structure: a mesh of nodes joined by springs, dragged by pulling anchors; a spring stretched\n"
      "until its force reaches --max-force breaks (is deleted), and a node that loses its last spring\n"
      "is deleted (DynaSOAr's structure benchmark). Same seed and flags: same CSV and checksum.";
  /// DynaSOAr's run: 500 steps of 1,500,000 nodes (kMaxNodes) and 2,625,000 springs.
  static constexpr shoal::sim::run_options defaults{.steps = 500, .heap_mb = 320};
  static constexpr const char* sized_by = "--heap-mb / --nodes";
  using flags = model_flags;
  static constexpr const char* saved_flags = "structure.model";

  static void add_flags(shoal::sim::flag_table<model_flags>& t, model_flags& m) {
    namespace sim = shoal::sim;
    parameters& p = m.p;
    t.add("--nodes", m.nodes, "nodes at the start (DynaSOAr's kMaxNodes)")->check(sim::whole_number(2, 1u << 25));
    t.add("--iterations", p.iterations, "force-and-move rounds per step")->check(sim::whole_number(1, 10000));
    t.add("--dt", p.dt, "time step of a round")->check(sim::decimal<float>(1e-9, 100.0));
    t.add("--damping", p.damping, "share of a free node's velocity lost per round")->check(sim::decimal<float>(0.0, 1.0));
    t.add("--max-force", p.max_force, "a spring breaks when its force reaches this")->check(sim::decimal<float>(1e-9, 1e9));
    t.add("--spring-min", p.spring_min, "stiffness is uniform in [min, max)")->check(sim::decimal<float>(0.0, 1e9));
    t.add("--spring-max", p.spring_max, "see --spring-min")->check(sim::decimal<float>(0.0, 1e9));
    t.add("--mass", p.mass, "mass of every free node")->check(sim::decimal<float>(1e-9, 1e9));
    t.add("--pull-speed", p.pull_speed, "pulling anchors' velocity is uniform in [-s, s) per axis")
        ->check(sim::decimal<float>(0.0, 1.0));
    t.add("--margin", p.margin, "nodes start in [margin, 1 - margin]^2")->check(sim::decimal<float>(0.0, 0.49));
    t.add("--pull-share", p.pull_share, "share of the nodes that are pulling anchors")->check(sim::decimal<float>(0.0, 1.0));
    t.add("--anchor-share", p.anchor_share, "share of the nodes that are fixed anchors")->check(sim::decimal<float>(0.0, 1.0));
    t.add("--spring-fill", p.spring_fill, "springs = fill x nodes x 5 / 2 (5 springs a node at most)")
        ->check(sim::decimal<float>(0.0, 1.0));
  }

  /// Checks across flags, and that the heap holds the mesh (it never grows).
  static int check(const shoal::sim::app_cli& cli, model_flags& m) {
    const parameters& p = m.p;
    if (p.spring_min > p.spring_max) return cli.fail("--spring-min must not be above --spring-max");
    if (static_cast<double>(p.pull_share) + p.anchor_share > 1.0)
      return cli.fail("--pull-share and --anchor-share add up to more than 1");
    return cli.require_heap(heap_bytes_needed(m), std::to_string(m.nodes) + " nodes and their springs need");
  }
  static std::uint64_t heap_bytes_needed(const model_flags& m) {
    const node_counts c = counts_of(m.nodes, m.p);
    return shoal::runtime<Mesh>::bytes_for<Node, Pull, Anchor, Spring>(c.free, c.pulls, c.anchors, springs_wanted(m.nodes, m.p));
  }

  app(const model_flags& m, const shoal::sim::run_options& o) : flags_(m), seed_(o.seed), rt_(o.heap_mb << 20) {}

  shoal::runtime<Mesh>& runtime() { return rt_; }
  shoal::sim::fields header() const {
    return {{"nodes", std::to_string(flags_.nodes)}, {"iterations", std::to_string(flags_.p.iterations)}};
  }
  static std::vector<std::string> csv_columns() { return {"nodes", "pulls", "anchors", "springs", "state_hash"}; }

  void populate() { structure::populate(rt_, make_mesh(flags_.nodes, seed_, flags_.p), flags_.p); }
  void step(std::uint64_t, shoal::sim::phase_timer& timer) { structure::step(rt_, flags_.p, timer); }
  std::vector<shoal::sim::csv_value> csv_row() {
    const totals t = measure(rt_, scratch_);
    return {t.nodes, t.pulls, t.anchors, t.springs, t.state_hash};
  }
  shoal::sim::summary result() {
    const totals t = measure(rt_, scratch_);
    shoal::sim::summary s;
    s.populations = {{"nodes", t.nodes + t.pulls + t.anchors}, {"springs", t.springs}};
    s.checksum = t.state_hash;
    return s;
  }

  void save(shoal::checkpoint::writer& w) { save_state(w, rt_, flags_); }
  void resume(const shoal::checkpoint::reader& r) { structure::resume(rt_, flags_, r); }

  shoal::viz::scene_spec scene(const shoal::sim::run_options& o) const { return view::scene(o); }
  void show_in(shoal::viz::rect area) { painter_.emplace(area, flags_.p.max_force); }
  void count(unsigned long long* values) { census_.count_into(values); }
  void paint(shoal::viz::canvas_view c, shoal::viz::rect) { painter_->paint(rt_, c); }

 private:
  model_flags flags_;
  std::uint64_t seed_;
  shoal::runtime<Mesh> rt_;
  shoal::sim::sums scratch_{5};
  shoal::sim::census<Mesh> census_{rt_};
  std::optional<view::painter> painter_;  // made by show_in, for the viewer's scene
};

}  // namespace structure
