#pragma once
/// @file
/// N-body as a program over MPI ranks (shoal::dist::run_model, `nbody_mpi`): nbody's command line
/// and CSV columns, the bodies shared out over the ranks (nbody_ranks.hpp). Its numbers agree with
/// nbody's to within rounding (partners are summed in another order). `--checkpoint` writes one
/// part per rank, its bodies; resumed with as many ranks, a run ends as the same run without a
/// stop does, bit for bit (the heap keeps its bodies' order). No viewer yet.

#include <cstdint>
#include <string>
#include <vector>

#include "nbody_app.hpp"
#include "nbody_ranks.hpp"
#include "shoal/viz/dist_driver.hpp"

namespace nbody {

class ranks_app {
 public:
  static constexpr const char* name = app::name;
  static constexpr const char* description =
      "N-body over MPI ranks (run it with mpirun -np N): the bodies shared out over the ranks, every\n"
      "position and mass gathered each step. Agrees with nbody to within rounding.";
  static constexpr shoal::sim::run_options defaults = app::defaults;
  using flags = model_flags;
  static constexpr const char* saved_flags = app::saved_flags;  // save() writes the flags there

  static void add_flags(shoal::sim::flag_table<model_flags>& t, model_flags& m) { app::add_flags(t, m); }
  static int check(const shoal::sim::app_cli& cli, model_flags& m) { return app::check(cli, m); }

  ranks_app(const model_flags& m, const shoal::sim::run_options& o, const shoal::dist::context& ctx)
      : flags_(m), ranks_(ctx.size()), rt_(o.heap_mb << 20), bodies_(rt_, ctx, m.bodies, o.seed, m.p) {}

  shoal::runtime<Space>& runtime() { return rt_; }
  shoal::sim::fields header() const {
    return {{"bodies", std::to_string(flags_.bodies)}, {"ranks", std::to_string(ranks_)}};
  }
  static std::vector<std::string> csv_columns() { return app::csv_columns(); }

  void populate() { bodies_.populate(); }
  void step(std::uint64_t, shoal::sim::phase_timer& timer) {
    {
      auto t = timer.phase("forces (gathered)");
      bodies_.forces();
    }
    auto t = timer.phase("advance (do-all)");
    rt_.parallel_do<&Body::advance>(flags_.p.dt);
  }
  /// This rank's part of a checkpoint (dist::run_model writes one file per rank): the flags and
  /// its bodies, as nbody saves them.
  void save(shoal::checkpoint::writer& w) { save_state(w, rt_, flags_); }
  /// Checks this rank's part (its share of the bodies, each valid), then loads it. Throws
  /// checkpoint_error, having changed nothing, for a part that does not pass.
  void resume(const shoal::checkpoint::reader& r) { nbody::resume(rt_, flags_, r, bodies_.share()); }

  std::vector<shoal::sim::csv_value> csv_row() {
    const totals t = bodies_.measure(scratch_);
    return {t.bodies, energy(t.kinetic_energy), energy(t.momentum_x), energy(t.momentum_y)};
  }
  shoal::sim::summary result() {
    const totals t = bodies_.measure(scratch_);
    shoal::sim::summary s;
    s.populations = {{"bodies", t.bodies}};
    s.checksum = shoal::sim::real_checksum(t.kinetic_energy, 1e12);
    return s;
  }

 private:
  static shoal::sim::fixed energy(double v) { return {v, 9}; }
  model_flags flags_;
  int ranks_;
  shoal::runtime<Space> rt_;
  ranked_bodies bodies_;
  shoal::sim::sums scratch_{4};
};

}  // namespace nbody
