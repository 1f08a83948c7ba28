#pragma once
/// @file
/// The Game of Life as a program (sim::run_model, shoal/viz/driver.hpp): its flags (the grid, the
/// variant, the start), the heap and grid of the chosen variant, the CSV row (live, candidates,
/// state_hash), the summary, checkpoints and the picture. The rules and variants are in
/// game_of_life_model.hpp; the steps, checks and picture are the generation model's.
///
/// The variant is chosen on the command line, so the app holds a board of either kind and hands
/// whichever it has to the model's templates (with_world).

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "game_of_life_model.hpp"
#include "generation/generation_resume.hpp"
#include "generation/generation_view.hpp"
#include "shoal/viz/driver.hpp"

namespace game_of_life {

/// Transform of --variant: a name, or the number a checkpoint saved; rewritten to the number.
inline shoal::sim::rule variant_names() {
  return {[](std::string& text) -> std::string {
            if (text == "cells" || text == "0") text = "0";
            else if (text == "no-cell" || text == "1") text = "1";
            else return "must be cells (DynaSOAr's dynasoar variant) or no-cell (its no_cell), got '" + text + "'";
            return {};
          },
          "cells|no-cell", "variant_names"};
}

class app {
 public:
  static constexpr const char* name = "game_of_life";
  static constexpr const char* description =
      "Conway's Game of Life on a bounded grid, DynaSOAr's two variants: live cells and their dead\n"
      "neighbours are objects born and deleted every generation, each grid cell one more object\n"
      "(--variant cells) or not (--variant no-cell). Starts from a PGM (--pattern, DynaSOAr's\n"
      "datasets), or gliders and a random soup. Same seed and flags: same CSV and checksum, on every\n"
      "run and on both backends.";
  /// 300 steps as DynaSOAr runs; a 2500 x 2500 soup (DynaSOAr's own runs are its datasets,
  /// 1714 x 1647 and 12699 x 12652: --pattern).
  static constexpr shoal::sim::run_options defaults{.steps = 300, .heap_mb = 256};  // the cells variant needs 229
  static constexpr const char* sized_by = "--heap-mb / --width / --height";
  using flags = model_flags;
  static constexpr const char* saved_flags = "game_of_life.model";
  static constexpr bool defragmentable = true;  // the grid's cells are its only pointers outside the heap

  static void add_flags(shoal::sim::flag_table<model_flags>& t, model_flags& f) {
    namespace sim = shoal::sim;
    t.add("--width", f.width, "grid width in cells (with --pattern: the image's)")->check(sim::whole_number(1, 65536));
    t.add("--height", f.height, "grid height in cells (with --pattern: the image's)")->check(sim::whole_number(1, 65536));
    t.add("--variant", f.variant, "cells: every grid cell an object too (DynaSOAr's dynasoar); no-cell: not (its no_cell)")
        ->transform(variant_names())
        ->default_str("cells");
    t.add("--density", f.density, "chance that a cell starts live (a random soup; not with --pattern)")
        ->check(sim::decimal(0.0, 1.0));
    t.add("--gliders", f.gliders, "gliders at the start, heading down and right (not with --pattern)")
        ->check(sim::whole_number(0, 1u << 24));
    // Not a saved flag: a file that only a fresh run reads.
    t.app()
        .add_option_function(
            "--pattern",
            [&f](const std::string& path) -> std::string {
              if (path.empty() || path.size() >= sizeof f.pattern)
                return "needs a file name of 1 to " + std::to_string(sizeof f.pattern - 1) + " bytes";
              std::memcpy(f.pattern, path.c_str(), path.size() + 1);
              return {};
            },
            "start from a PGM image (DynaSOAr's datasets: black pixels are live); the grid is its size")
        ->type_name("FILE");
  }

  /// A fresh run's start is read and checked here (a damaged --pattern is one line, status 2); a
  /// resumed run continues the saved grid. The heap must hold a grid full of Alives (and Cells).
  static int check(const shoal::sim::app_cli& cli, model_flags& f) {
    const auto given = [&](const char* flag) { return cli.given(flag); };
    if (f.pattern[0] != '\0') {
      if (cli.resume() != nullptr) return cli.fail("--pattern: a resumed run continues the checkpoint's grid; leave --pattern out");
      for (const char* flag : {"--width", "--height", "--density", "--gliders"})
        if (given(flag)) return cli.fail(std::string(flag) + ": --pattern gives the grid and the whole start; leave " + flag + " out");
      try {
        const pattern_bits p = read_pattern(f.pattern);
        if (p.live == 0) return cli.fail(std::string("--pattern: ") + f.pattern + " has no black (0) pixel: nothing would live");
        f.width = p.width, f.height = p.height;
      } catch (const shoal::io::pgm_error& e) {
        return cli.fail(std::string("--pattern: ") + e.what());
      }
      f.density = 0, f.gliders = 0;
    }
    const std::uint64_t cells = f.width * f.height;
    const std::string grid = std::to_string(f.width) + " x " + std::to_string(f.height) + " grid";
    if (cells > max_cells)
      return cli.fail("--width " + std::to_string(f.width) + " --height " + std::to_string(f.height) + " is more than 2^31 cells");
    if (!gliders(f.gliders, f.width, f.height).fit())
      return cli.fail("--gliders " + std::to_string(f.gliders) + " do not fit a " + grid + " (each needs 5 x 5 cells)");
    if (cli.resume() == nullptr && f.pattern[0] == '\0' && f.density == 0 && f.gliders == 0)
      return cli.fail("nothing would live: --density is 0, and neither --gliders nor --pattern is given");
    return cli.require_heap(heap_bytes_needed(cells, static_cast<variant>(f.variant)),
                            "a " + grid + " of the " + variant_name(static_cast<variant>(f.variant)) + " variant needs");
  }

  /// Calls f with the grid of the run's variant (a basic_world of Cells or of agents).
  template <class F>
  decltype(auto) with_world(F&& f) const {
    if (boxed_) return f(boxed_->view());
    return f(plain_->view());
  }
  variant kind() const { return static_cast<variant>(flags_.variant); }

  app(const model_flags& f, const shoal::sim::run_options& o) : flags_(f), seed_(o.seed), rt_(o.heap_mb << 20) {
    const auto w = static_cast<std::uint32_t>(f.width), h = static_cast<std::uint32_t>(f.height);
    if (kind() == variant::cells) boxed_.emplace(w, h, life);
    else plain_.emplace(w, h, life);
    with_world([&](const auto& g) { generation::register_cells(rt_, g); });
  }

  shoal::runtime<Board>& runtime() { return rt_; }
  shoal::sim::fields header() const {
    char density[32];
    std::snprintf(density, sizeof density, "%g", flags_.density);
    std::string from = flags_.pattern[0] != '\0' ? std::string("pattern:") + flags_.pattern : std::string("density:") + density;
    if (flags_.gliders != 0) from += "+gliders:" + std::to_string(flags_.gliders);
    return {{"width", std::to_string(flags_.width)},
            {"height", std::to_string(flags_.height)},
            {"variant", variant_name(kind())},
            {"start", from}};
  }
  static std::vector<std::string> csv_columns() { return {"live", "candidates", "state_hash"}; }

  void populate() {
    shoal::arch::device_buffer<std::uint64_t> bits;
    const start s = start_of(flags_, seed_, bits);
    with_world([&](const auto& g) { generation::populate(rt_, g, s); });
    rt_.synchronize();  // `bits` goes with this scope
  }
  void step(std::uint64_t, shoal::sim::phase_timer& timer) {
    with_world([&](const auto& g) { generation::step(rt_, g, timer); });
  }
  std::vector<shoal::sim::csv_value> csv_row() {
    const generation::totals t = measure();
    return {t.live, t.candidates, t.state_hash};
  }
  shoal::sim::summary result() {
    const generation::totals t = measure();
    shoal::sim::summary s;
    s.populations = {{"live", t.live}, {"candidates", t.candidates}};
    s.checksum = t.state_hash;
    return s;
  }

  void save(shoal::checkpoint::writer& cw) {
    cw.value(saved_flags, flags_);
    rt_.save_heap(cw);
  }
  void resume(const shoal::checkpoint::reader& r) {
    const generation::model_flags g = generation_flags(flags_);
    if (kind() == variant::cells) generation::resume<Cell>(rt_, g, r);
    else generation::resume<generation::Agent>(rt_, g, r);
  }

  shoal::viz::scene_spec scene(const shoal::sim::run_options& o) const {
    return generation::view::scene(o, flags_.width, flags_.height, life, name);
  }
  void count(unsigned long long* values) {
    with_world([&](const auto& g) { generation::view::count(rt_, g, values); });
  }
  void paint(shoal::viz::canvas_view c, shoal::viz::rect area) {
    with_world([&](const auto& g) { generation::view::paint(rt_, g, c, area); });
  }

 private:
  generation::totals measure() {
    return with_world([&](const auto& g) { return generation::measure(rt_, g, sums_); });
  }

  model_flags flags_;
  std::uint64_t seed_;
  shoal::runtime<Board> rt_;
  std::optional<generation::basic_board<Cell>> boxed_;
  std::optional<generation::basic_board<generation::Agent>> plain_;
  shoal::sim::sums sums_{4};
};

}  // namespace game_of_life
