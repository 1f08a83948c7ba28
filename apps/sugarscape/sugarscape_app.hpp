#pragma once
/// @file
/// Sugarscape as a program (sim::run_model, shoal/viz/driver.hpp): its flags (DynaSOAr's
/// defaults), the heap and grid, the CSV row (males, females, grid_sugar, agent_sugar,
/// state_hash), the summary, checkpoints and the picture. The rules are in sugarscape_model.hpp.
///
/// The step never waits for the device: its two launches and six do-alls are enqueued back to
/// back, and the host synchronises only for a CSV row and at the end.

#include <cstdint>
#include <string>
#include <vector>

#include "shoal/viz/driver.hpp"
#include "sugarscape_model.hpp"
#include "sugarscape_resume.hpp"
#include "sugarscape_view.hpp"

namespace sugarscape {

/// Largest --max-age, --sugar-capacity and --max-diffusion: an agent holds at most its endowment
/// plus max_age harvests of capacity + max_diffusion, which must fit an int32 (resume checks it).
inline constexpr std::uint64_t max_age_limit = 1000, sugar_limit = 1000000;

/// The most sugar an agent can hold after a step, given the flags (see max_age_limit).
inline std::int64_t max_agent_sugar(const model_flags& f) {
  return static_cast<std::int64_t>(f.max_endowment + f.max_age * (f.sugar_capacity + f.max_diffusion));
}

class app {
 public:
  static constexpr const char* name = "sugarscape";
  static constexpr const char* description =
      "Sugarscape: male and female agents on a grid of sugar that grows back (Epstein and Axtell's\n"
      "rules as DynaSOAr's benchmark runs them; see the README): they move, harvest, age, starve and mate.\n"
      "Same seed and flags: same CSV and checksum, on every run and on both backends.";
  /// 1000 steps: well past the first generation's die-off into the steady births and deaths
  /// (DynaSOAr runs 10,000).
  static constexpr shoal::sim::run_options defaults{.steps = 1000, .seed = 42, .heap_mb = 256};
  static constexpr const char* sized_by = "--heap-mb / --width / --height";
  using flags = model_flags;
  static constexpr const char* saved_flags = "sugarscape.model";  // save() writes the flags there

  static void add_flags(shoal::sim::flag_table<model_flags>& t, model_flags& f) {
    namespace sim = shoal::sim;
    t.add("--width", f.width, "grid width in cells")->check(sim::whole_number(1, 65536));
    t.add("--height", f.height, "grid height in cells")->check(sim::whole_number(1, 65536));
    t.add("--male-probability", f.male_probability, "chance that a cell starts with a male")
        ->check(sim::decimal(0.0, 1.0));
    t.add("--female-probability", f.female_probability, "chance that a cell starts with a female")
        ->check(sim::decimal(0.0, 1.0));
    t.add("--max-vision", f.max_vision, "agents see 1..N cells along the four axes")
        ->check(sim::whole_number(1, 64));
    t.add("--max-age", f.max_age, "agents die past an age in [2/3, 1] x N")
        ->check(sim::whole_number(1, max_age_limit));
    t.add("--max-endowment", f.max_endowment, "initial sugar in [1/4, 1] x N")
        ->check(sim::whole_number(1, sugar_limit));
    t.add("--max-metabolism", f.max_metabolism, "sugar burnt a step, in [1/3, 1] x N")
        ->check(sim::whole_number(1, sugar_limit));
    t.add("--sugar-capacity", f.sugar_capacity, "most sugar a cell grows to")
        ->check(sim::whole_number(1, sugar_limit));
    t.add("--max-grow-rate", f.max_grow_rate, "sugar grown a step on the richest cells (2%; N/2 on 2%, N/4 on 4%)")
        ->check(sim::whole_number(0, sugar_limit));
    t.add("--max-diffusion", f.max_diffusion, "most sugar a cell gives its neighbours a step")
        ->check(sim::whole_number(0, sugar_limit));
    t.add("--min-mating-age", f.min_mating_age, "agents mate from this age")
        ->check(sim::whole_number(0, max_age_limit));
    t.add("--max-children", f.max_children, "a female has at most [1/4, 1] x N children")
        ->check(sim::whole_number(0, 1000));
  }

  /// A resumed run continues the saved world (its flags come from the checkpoint); the heap must
  /// hold a grid full of the largest agent.
  static int check(const shoal::sim::app_cli& cli, model_flags& f) {
    if (f.male_probability + f.female_probability > 1.0)
      return cli.fail("--male-probability and --female-probability add up to more than 1");
    const std::uint64_t cells = f.width * f.height;
    if (cells > (std::uint64_t{1} << 31))
      return cli.fail("--width " + std::to_string(f.width) + " --height " + std::to_string(f.height) +
                      " is more than 2^31 cells");
    return cli.require_heap(heap_bytes_needed(cells),
                            "a " + std::to_string(f.width) + " x " + std::to_string(f.height) + " grid needs");
  }

  app(const model_flags& f, const shoal::sim::run_options& o) : flags_(f), rt_(o.heap_mb << 20), scape_(f, o.seed) {}

  shoal::runtime<Scape>& runtime() { return rt_; }
  shoal::sim::fields header() const {
    return {{"width", std::to_string(flags_.width)}, {"height", std::to_string(flags_.height)}};
  }
  static std::vector<std::string> csv_columns() {
    return {"males", "females", "grid_sugar", "agent_sugar", "state_hash"};
  }

  void populate() { sugarscape::populate(rt_, w(), flags_); }
  void step(std::uint64_t s, shoal::sim::phase_timer& timer) {
    sugarscape::step(rt_, w(), static_cast<std::uint32_t>(s), timer);
  }
  std::vector<shoal::sim::csv_value> csv_row() {
    const totals t = sugarscape::measure(rt_, w(), sums_);
    return {t.males, t.females, t.grid_sugar, t.agent_sugar, t.state_hash};
  }
  shoal::sim::summary result() {
    const totals t = sugarscape::measure(rt_, w(), sums_);
    shoal::sim::summary s;
    s.populations = {{"males", t.males}, {"females", t.females}};
    s.checksum = t.state_hash;
    return s;
  }

  void save(shoal::checkpoint::writer& cw) { save_state(cw, rt_, w(), flags_); }
  void resume(const shoal::checkpoint::reader& r) { sugarscape::resume(rt_, w(), flags_, r); }

  shoal::viz::scene_spec scene(const shoal::sim::run_options& o) const {
    return view::scene(o, flags_.width, flags_.height);
  }
  void count(unsigned long long* values) { census_.count_into(values); }
  void paint(shoal::viz::canvas_view c, shoal::viz::rect area) { view::paint(rt_, w(), c, area); }

 private:
  const world& w() const { return scape_.view(); }

  model_flags flags_;
  shoal::runtime<Scape> rt_;
  scape scape_;
  shoal::sim::census<Scape> census_{rt_};
  shoal::sim::sums sums_{5};
};

}  // namespace sugarscape
