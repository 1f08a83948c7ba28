#pragma once
/// @file
/// Sugarscape's command line: the shared options plus the model's flags (DynaSOAr's defaults),
/// parsed and checked as far as that needs no device (main.cpp goes on from there). A header of
/// its own so that the command-line fuzz test (tests/backend/cli_fuzz_test.cpp) can run the very
/// same parser in-process.

#include <algorithm>
#include <cstdint>
#include <string>

#include "shoal/sim/cli.hpp"
#include "sugarscape_model.hpp"

namespace sugarscape {

inline constexpr const char* app_description =
    "Sugarscape: male and female agents on a grid of sugar that grows back (Epstein and Axtell's\n"
    "rules as DynaSOAr's benchmark runs them; see the README): they move, harvest, age, starve and mate.\n"
    "Same seed and flags: same CSV and checksum, on every run and on both backends.";
/// 1000 steps: well past the first generation's die-off into the steady births and deaths
/// (DynaSOAr runs 10,000).
inline constexpr shoal::sim::run_options app_defaults{.steps = 1000, .seed = 42, .heap_mb = 256,
                                                       .features = shoal::sim::app_features::all()};

/// Largest --max-age, --sugar-capacity and --max-diffusion: an agent holds at most its endowment
/// plus max_age harvests of capacity + max_diffusion, which must fit an int32 (resume checks it).
inline constexpr std::uint64_t max_age_limit = 1000, sugar_limit = 1000000;

/// The most sugar an agent can hold after a step, given the flags (see max_age_limit).
inline std::int64_t max_agent_sugar(const model_flags& f) {
  return static_cast<std::int64_t>(f.max_endowment + f.max_age * (f.sugar_capacity + f.max_diffusion));
}

/// Heap a grid of `cells` needs if every cell held the largest agent, with room for blocks that
/// are only partly full (each block holds one class): 1.5 × the exact fill.
inline std::uint64_t heap_bytes_needed(std::uint64_t cells) {
  const auto g = shoal::detail::compute_geometry<Scape>();
  const std::uint64_t per_slot = std::max(g.block_bytes / g.capacity[Scape::type_id<Male>],
                                          g.block_bytes / g.capacity[Scape::type_id<Female>]) + 1;
  return cells * per_slot * 3 / 2 + (std::uint64_t{1} << 20);
}

/// A resumed run takes the saved flags (-1), unless one was given with another value (status 2).
inline int adopt_saved(const shoal::sim::app_cli& cli, model_flags& f, const model_flags& s) {
  int rc = cli.adopt("--width", f.width, s.width);  // stops at the first difference: one line
  if (rc < 0) rc = cli.adopt("--height", f.height, s.height);
  if (rc < 0) rc = cli.adopt("--male-probability", f.male_probability, s.male_probability);
  if (rc < 0) rc = cli.adopt("--female-probability", f.female_probability, s.female_probability);
  if (rc < 0) rc = cli.adopt("--max-vision", f.max_vision, s.max_vision);
  if (rc < 0) rc = cli.adopt("--max-age", f.max_age, s.max_age);
  if (rc < 0) rc = cli.adopt("--max-endowment", f.max_endowment, s.max_endowment);
  if (rc < 0) rc = cli.adopt("--max-metabolism", f.max_metabolism, s.max_metabolism);
  if (rc < 0) rc = cli.adopt("--sugar-capacity", f.sugar_capacity, s.sugar_capacity);
  if (rc < 0) rc = cli.adopt("--max-grow-rate", f.max_grow_rate, s.max_grow_rate);
  if (rc < 0) rc = cli.adopt("--max-diffusion", f.max_diffusion, s.max_diffusion);
  if (rc < 0) rc = cli.adopt("--min-mating-age", f.min_mating_age, s.min_mating_age);
  if (rc < 0) rc = cli.adopt("--max-children", f.max_children, s.max_children);
  return rc;
}

/// Parses and checks the command line of `cli` (made with app_description and app_defaults).
/// Returns -1 when the run should go on, else the exit status (0 after --help, 2 after one line).
inline int parse_command_line(shoal::sim::app_cli& cli, model_flags& f, int argc, const char* const* argv) {
  namespace sim = shoal::sim;
  CLI::App& app = cli.app();
  app.add_option("--width", f.width, "grid width in cells")->check(sim::whole_number(1, 65536));
  app.add_option("--height", f.height, "grid height in cells")->check(sim::whole_number(1, 65536));
  app.add_option("--male-probability", f.male_probability, "chance that a cell starts with a male")
      ->check(sim::decimal(0.0, 1.0));
  app.add_option("--female-probability", f.female_probability, "chance that a cell starts with a female")
      ->check(sim::decimal(0.0, 1.0));
  app.add_option("--max-vision", f.max_vision, "agents see 1..N cells along the four axes")
      ->check(sim::whole_number(1, 64));
  app.add_option("--max-age", f.max_age, "agents die past an age in [2/3, 1] x N")
      ->check(sim::whole_number(1, max_age_limit));
  app.add_option("--max-endowment", f.max_endowment, "initial sugar in [1/4, 1] x N")
      ->check(sim::whole_number(1, sugar_limit));
  app.add_option("--max-metabolism", f.max_metabolism, "sugar burnt a step, in [1/3, 1] x N")
      ->check(sim::whole_number(1, sugar_limit));
  app.add_option("--sugar-capacity", f.sugar_capacity, "most sugar a cell grows to")
      ->check(sim::whole_number(1, sugar_limit));
  app.add_option("--max-grow-rate", f.max_grow_rate, "sugar grown a step on the richest cells (2%; N/2 on 2%, N/4 on 4%)")
      ->check(sim::whole_number(0, sugar_limit));
  app.add_option("--max-diffusion", f.max_diffusion, "most sugar a cell gives its neighbours a step")
      ->check(sim::whole_number(0, sugar_limit));
  app.add_option("--min-mating-age", f.min_mating_age, "agents mate from this age")
      ->check(sim::whole_number(0, max_age_limit));
  app.add_option("--max-children", f.max_children, "a female has at most [1/4, 1] x N children")
      ->check(sim::whole_number(0, 1000));
  if (const int rc = cli.parse(argc, argv); rc >= 0) return rc;
  const sim::run_options& o = cli.options();
  // A resumed run continues the saved world: its flags come from the checkpoint.
  if (const shoal::checkpoint::reader* r = cli.resume()) {
    try {
      if (const int rc = adopt_saved(cli, f, r->value<model_flags>("sugarscape.model")); rc >= 0) return rc;
    } catch (const shoal::checkpoint_error& e) {
      return cli.fail(std::string("--resume: ") + e.what());
    }
  }
  if (f.male_probability + f.female_probability > 1.0)
    return cli.fail("--male-probability and --female-probability add up to more than 1");
  const std::uint64_t cells = f.width * f.height;
  if (cells > (std::uint64_t{1} << 31))
    return cli.fail("--width " + std::to_string(f.width) + " --height " + std::to_string(f.height) +
                    " is more than 2^31 cells");
  const std::uint64_t need = heap_bytes_needed(cells);
  if (o.heap_mb << 20 < need)
    return cli.fail("a " + std::to_string(f.width) + " x " + std::to_string(f.height) + " grid needs --heap-mb " +
                    std::to_string((need + (1 << 20) - 1) >> 20) + " or more (got " + std::to_string(o.heap_mb) + ")");
  return -1;
}

}  // namespace sugarscape
