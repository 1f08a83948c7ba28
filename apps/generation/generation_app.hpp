#pragma once
/// @file
/// The generation model as a program (sim::run_model, shoal/viz/driver.hpp): its flags (the
/// grid, the rule, the start; DynaSOAr's defaults), the heap and grid, the CSV row (live, dying,
/// candidates, state_hash), the summary, checkpoints and the picture. The rules are in
/// generation_model.hpp.
///
/// The step never waits for the device: its six do-alls are enqueued back to back, and the host
/// synchronises only for a CSV row and at the end.

#include <cstdint>
#include <string>
#include <vector>

#include "generation_model.hpp"
#include "generation_resume.hpp"
#include "generation_view.hpp"
#include "shoal/viz/driver.hpp"

namespace generation {

/// Heap a grid of `cells` needs if every cell held an Alive (the larger class), with room for
/// blocks that are only partly full: 1.5 × the exact fill.
inline std::uint64_t heap_bytes_needed(std::uint64_t cells) {
  return shoal::runtime<Board>::bytes_for<Alive>(cells) * 3 / 2;
}

/// Check and transform of a set of neighbour counts: digits 0..8 in any order, each once
/// (0 only when `zero` allows it), or `none`; rewritten to the flags' form (counts_digits), so
/// that a value read back from a checkpoint passes the same check.
inline shoal::sim::rule neighbour_counts(bool zero) {
  const std::string digits = zero ? "0..8" : "1..8";
  return {[zero, digits](std::string& text) -> std::string {
            const std::string why = "needs neighbour counts " + digits + " as digits, each once (e.g. 3468), or none; got '" + text + "'";
            if (text == "none" || text == std::to_string(no_counts)) {
              text = std::to_string(no_counts);
              return {};
            }
            std::uint32_t mask = 0;
            for (char ch : text) {
              if (ch < (zero ? '0' : '1') || ch > '8' || ((mask >> (ch - '0')) & 1u)) return why;
              mask |= 1u << (ch - '0');
            }
            if (mask == 0) return why;
            text = std::to_string(counts_digits(mask));
            return {};
          },
          "DIGITS", "neighbour_counts"};
}

class app {
 public:
  static constexpr const char* name = "generation";
  static constexpr const char* description =
      "Generations: a cellular automaton whose live cells age through dying states before they are\n"
      "dead (DynaSOAr's generation benchmark: rule S0235678/B3468/C257 from its burst pattern; see the README).\n"
      "Same seed and flags: same CSV and checksum, on every run and on both backends.";
  /// A 2500 x 2500 grid (DynaSOAr's first configuration; 5000 x 5000 in its last, which needs
  /// --heap-mb 601) for 1000 steps (DynaSOAr runs 25,000): well past step 257, where the first
  /// cells to die are dead and their cells watched again.
  static constexpr shoal::sim::run_options defaults{.steps = 1000, .heap_mb = 192};
  static constexpr const char* sized_by = "--heap-mb / --width / --height";
  using flags = model_flags;
  static constexpr const char* saved_flags = "generation.model";  // save() writes the flags there
  static constexpr bool defragmentable = true;  // the grid's cells are its only pointers outside the heap

  static void add_flags(shoal::sim::flag_table<model_flags>& t, model_flags& f) {
    namespace sim = shoal::sim;
    t.add("--width", f.width, "grid width in cells")->check(sim::whole_number(1, 65536));
    t.add("--height", f.height, "grid height in cells")->check(sim::whole_number(1, 65536));
    t.add("--survive", f.survive, "S: live neighbour counts with which a live cell stays live (digits, or none)")
        ->transform(neighbour_counts(true))
        ->default_str(counts_text(counts_mask(f.survive)));
    t.add("--birth", f.birth, "B: live neighbour counts with which a dead cell is born (digits 1..8, or none)")
        ->transform(neighbour_counts(false))
        ->default_str(counts_text(counts_mask(f.birth)));
    t.add("--states", f.states, "C: states of a cell: dead, live and C - 2 dying ones")
        ->check(sim::whole_number(2, 65536));
    t.add("--density", f.density, "chance that a cell starts live (besides the bursts)")->check(sim::decimal(0.0, 1.0));
    t.add("--burst-length", f.burst_length, "arm length of DynaSOAr's burst pattern at the start (0: none)")
        ->check(sim::whole_number(0, 65536));
  }

  /// A resumed run continues the saved grid (its flags come from the checkpoint); the heap must
  /// hold a grid full of the larger class; something must live at the start.
  static int check(const shoal::sim::app_cli& cli, model_flags& f) {
    const std::uint64_t cells = f.width * f.height;
    const std::string grid = std::to_string(f.width) + " x " + std::to_string(f.height) + " grid";
    if (cells > (std::uint64_t{1} << 31))
      return cli.fail("--width " + std::to_string(f.width) + " --height " + std::to_string(f.height) +
                      " is more than 2^31 cells");
    if (f.density == 0 && bursts(f.width, f.height, f.burst_length).count() == 0)
      return cli.fail("nothing would live: a " + grid + " has no room for a burst of --burst-length " +
                      std::to_string(f.burst_length) + " (it needs more than 2 x (length + 10) cells a side) and --density is 0");
    return cli.require_heap(heap_bytes_needed(cells), "a " + grid + " needs");
  }

  app(const model_flags& f, const shoal::sim::run_options& o)
      : flags_(f), seed_(o.seed), rt_(o.heap_mb << 20),
        board_(static_cast<std::uint32_t>(f.width), static_cast<std::uint32_t>(f.height), rule_of(f)) {
    register_cells(rt_, board_.view());
  }

  shoal::runtime<Board>& runtime() { return rt_; }
  shoal::sim::fields header() const {
    return {{"width", std::to_string(flags_.width)},
            {"height", std::to_string(flags_.height)},
            {"rule", rule_text(rule_of(flags_))}};
  }
  static std::vector<std::string> csv_columns() { return {"live", "dying", "candidates", "state_hash"}; }

  void populate() { generation::populate(rt_, w(), start_of(flags_, seed_)); }
  void step(std::uint64_t, shoal::sim::phase_timer& timer) { generation::step(rt_, w(), timer); }
  std::vector<shoal::sim::csv_value> csv_row() {
    const totals t = measure(rt_, w(), sums_);
    return {t.live, t.dying, t.candidates, t.state_hash};
  }
  shoal::sim::summary result() {
    const totals t = measure(rt_, w(), sums_);
    shoal::sim::summary s;
    s.populations = {{"live", t.live}, {"dying", t.dying}, {"candidates", t.candidates}};
    s.checksum = t.state_hash;
    return s;
  }

  void save(shoal::checkpoint::writer& cw) { save_state(cw, rt_, flags_); }
  void resume(const shoal::checkpoint::reader& r) { generation::resume(rt_, flags_, r); }

  shoal::viz::scene_spec scene(const shoal::sim::run_options& o) const {
    return view::scene(o, flags_.width, flags_.height, rule_of(flags_));
  }
  void count(unsigned long long* values) { view::count(rt_, w(), values); }
  void paint(shoal::viz::canvas_view c, shoal::viz::rect area) { view::paint(rt_, w(), c, area); }

 private:
  const world& w() const { return board_.view(); }

  model_flags flags_;
  std::uint64_t seed_;
  shoal::runtime<Board> rt_;
  board board_;
  shoal::sim::sums sums_{4};
};

}  // namespace generation
