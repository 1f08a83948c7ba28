#pragma once
/// @file
/// Wa-Tor as a program (sim::run_model, shoal/viz/driver.hpp): its flags (--width, --height),
/// the heap and grid, the CSV row (fish, sharks, state_hash), the summary, checkpoints and the
/// picture. The rules are in wator_model.hpp.
///
/// The step never waits for the device: its four do-alls are enqueued back to back, and the
/// host synchronises only to count populations for a CSV row and at the end.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "shoal/viz/driver.hpp"
#include "wator_model.hpp"
#include "wator_resume.hpp"
#include "wator_view.hpp"

namespace wator {

/// Heap a grid of `cells` needs if every cell held the largest agent, with room for blocks that
/// are only partly full (each block holds one class): 1.5 × the exact fill.
inline std::uint64_t heap_bytes_needed(std::uint64_t cells) {
  const auto g = shoal::detail::compute_geometry<Ocean>();
  const std::uint64_t per_slot =
      std::max(g.block_bytes / g.capacity[Ocean::type_id<Fish>], g.block_bytes / g.capacity[Ocean::type_id<Shark>]) + 1;
  return cells * per_slot * 3 / 2 + (std::uint64_t{1} << 20);
}

class app {
 public:
  static constexpr const char* name = "wator";
  static constexpr const char* description =
      "Wa-Tor: fish and sharks on a toroidal grid (Dewdney's rules; see the README).\n"
      "Same seed and flags: same CSV and checksum, on every run and on both backends.";
  static constexpr shoal::sim::run_options defaults{.steps = 500, .heap_mb = 512};
  static constexpr const char* sized_by = "--heap-mb / --width / --height";
  using flags = grid_size;
  static constexpr const char* saved_flags = "wator.grid";  // save() writes the flags there

  static void add_flags(shoal::sim::flag_table<grid_size>& t, grid_size& grid) {
    namespace sim = shoal::sim;
    t.add("--width", grid.width, "grid width in cells")->check(sim::whole_number(1, 65536));
    t.add("--height", grid.height, "grid height in cells")->check(sim::whole_number(1, 65536));
  }

  /// A resumed run continues the saved grid (its size comes from the checkpoint); the heap must
  /// hold a grid full of the largest agent.
  static int check(const shoal::sim::app_cli& cli, grid_size& grid) {
    const std::uint64_t cells = grid.width * grid.height;
    if (cells > (std::uint64_t{1} << 31))
      return cli.fail("--width " + std::to_string(grid.width) + " --height " + std::to_string(grid.height) +
                      " is more than 2^31 cells");
    return cli.require_heap(heap_bytes_needed(cells),
                            "a " + std::to_string(grid.width) + " x " + std::to_string(grid.height) + " grid needs");
  }

  app(const grid_size& size, const shoal::sim::run_options& o)
      : size_(size),
        rt_(o.heap_mb << 20),
        ocean_(static_cast<std::uint32_t>(size.width), static_cast<std::uint32_t>(size.height), o.seed) {}

  shoal::runtime<Ocean>& runtime() { return rt_; }
  shoal::sim::fields header() const {
    return {{"width", std::to_string(size_.width)}, {"height", std::to_string(size_.height)}};
  }
  static std::vector<std::string> csv_columns() { return {"fish", "sharks", "state_hash"}; }

  void populate() { wator::populate(rt_, cells()); }
  void step(std::uint64_t s, shoal::sim::phase_timer& timer) {
    wator::step(rt_, cells(), static_cast<std::uint32_t>(s), timer);
  }
  std::vector<shoal::sim::csv_value> csv_row() {
    const populations p = wator::count(census_);
    return {p.fish, p.sharks, state_hash(rt_, cells(), hash_sum_)};
  }
  shoal::sim::summary result() {
    const populations p = wator::count(census_);
    shoal::sim::summary s;
    s.populations = {{"fish", p.fish}, {"sharks", p.sharks}};
    s.checksum = p.checksum();
    return s;
  }

  void save(shoal::checkpoint::writer& w) { save_state(w, rt_, cells(), size_); }
  void resume(const shoal::checkpoint::reader& r) { wator::resume(rt_, cells(), size_, r); }

  shoal::viz::scene_spec scene(const shoal::sim::run_options& o) const {
    return view::scene(o, size_.width, size_.height);
  }
  void count(unsigned long long* values) { census_.count_into(values); }
  void paint(shoal::viz::canvas_view c, shoal::viz::rect area) { view::paint(rt_, cells(), c, area); }

 private:
  const grid& cells() const { return ocean_.view(); }

  grid_size size_;
  shoal::runtime<Ocean> rt_;
  ocean ocean_;
  shoal::sim::census<Ocean> census_{rt_};
  shoal::arch::device_buffer<unsigned long long> hash_sum_{1};
};

}  // namespace wator
