// nbody: 2-D gravity between every pair of bodies on Shoal (model in nbody_model.hpp).
//
// Reads the command line, creates the bodies with parallel_new, runs the steps with a progress
// bar, writes the CSV time series (step, bodies, kinetic_energy, momentum_x, momentum_y) when
// asked, and prints a run header and a summary line. Exit status: 0 done, 1 run-time failure
// (no device, heap full, I/O), 2 bad command line.

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "nbody_model.hpp"
#include "shoal/sim/sim.hpp"

namespace {

namespace sim = shoal::sim;

/// Heap that n bodies need, with a spare block and room for the heap's own tables.
std::uint64_t heap_bytes_needed(std::uint64_t bodies) {
  const auto g = shoal::detail::compute_geometry<nbody::Space>();
  const std::uint64_t capacity = g.capacity[nbody::Space::type_id<nbody::Body>];
  return ((bodies + capacity - 1) / capacity + 1) * (g.block_bytes + 64) + (std::uint64_t{1} << 20);
}

sim::fixed energy(double v) { return {v, 9}; }

/// The model's flags, saved in checkpoints (explicit padding: the file has no undefined bytes).
struct saved_model {
  std::uint64_t bodies;
  nbody::parameters p;
  std::uint32_t unused = 0;
};

int run(int argc, char** argv) {
  sim::app_cli cli("nbody",
                   "N-body: softened 2-D gravity between all pairs of bodies in the unit box,\n"
                   "bodies bouncing off its walls; all pairs in shared-memory tiles (runtime.all_pairs).",
                   {.steps = 3000, .heap_mb = 64});
  std::uint64_t bodies = 20000;
  nbody::parameters p;
  cli.app().add_option("--bodies", bodies, "number of bodies")->check(sim::whole_number(1, 1u << 24));
  cli.app().add_option("--dt", p.dt, "time step")->check(sim::decimal(1e-9, 1.0));
  cli.app().add_option("--softening", p.softening, "softening length")->check(sim::decimal(1e-6, 1.0));
  cli.app().add_option("--gravity", p.gravity, "gravitational constant G")->check(sim::decimal(0.0, 1.0));
  cli.app().add_option("--max-mass", p.max_mass, "masses are uniform in (0, max]")->check(sim::decimal(1e-6, 1e9));
  cli.app().add_option("--max-speed", p.max_speed, "initial speeds are uniform in [-max, max] per axis")
      ->check(sim::decimal(0.0, 1.0));
  if (const int rc = cli.parse(argc, argv); rc >= 0) return rc;
  const sim::run_options& o = cli.options();
  // A resumed run continues with the saved bodies and parameters.
  if (const shoal::checkpoint::reader* r = cli.resume()) {
    try {
      const auto saved = r->value<saved_model>("nbody.model");
      int rc = cli.adopt("--bodies", bodies, saved.bodies);  // stops at the first difference: one line
      if (rc < 0) rc = cli.adopt("--dt", p.dt, saved.p.dt);
      if (rc < 0) rc = cli.adopt("--softening", p.softening, saved.p.softening);
      if (rc < 0) rc = cli.adopt("--gravity", p.gravity, saved.p.gravity);
      if (rc < 0) rc = cli.adopt("--max-mass", p.max_mass, saved.p.max_mass);
      if (rc < 0) rc = cli.adopt("--max-speed", p.max_speed, saved.p.max_speed);
      if (rc >= 0) return rc;
    } catch (const shoal::checkpoint_error& e) {
      return cli.fail(std::string("--resume: ") + e.what());
    }
  }

  const std::uint64_t need = heap_bytes_needed(bodies);
  if (o.heap_mb << 20 < need)
    return cli.fail(std::to_string(bodies) + " bodies need --heap-mb " +
                    std::to_string((need + (1 << 20) - 1) >> 20) + " or more (got " + std::to_string(o.heap_mb) + ")");
  std::optional<sim::csv_writer> csv;
  if (!o.csv.empty()) {
    try {
      csv.emplace(o.csv, std::vector<std::string>{"bodies", "kinetic_energy", "momentum_x", "momentum_y"});
    } catch (const sim::csv_error& e) {
      return cli.fail(std::string("--csv: ") + e.what());
    }
  }

  if (!o.quiet)
    std::printf("%s\n", sim::header_line("nbody", o, {{"bodies", std::to_string(bodies)}}).c_str());
  std::fflush(stdout);

  shoal::arch::require_device();
  shoal::runtime<nbody::Space> rt(o.heap_mb << 20);
  sim::sums scratch(4);
  sim::phase_timer timer(o.timing);
  auto write_row = [&](std::uint64_t step) {
    const nbody::totals t = nbody::measure(rt, scratch);
    csv->row(step, {t.bodies, energy(t.kinetic_energy), energy(t.momentum_x), energy(t.momentum_y)});
  };

  const std::uint64_t first = cli.resume_step() + 1;
  if (const shoal::checkpoint::reader* r = cli.resume()) {
    try {
      rt.load_heap(*r);
    } catch (const shoal::checkpoint_error& e) {
      return cli.fail(std::string("--resume: ") + e.what());
    }
  } else {
    auto t = timer.phase("populate");
    nbody::populate(rt, bodies, o.seed, p);
  }
  if (csv && first == 1) write_row(0);

  sim::progress bar(o.steps, !o.quiet);
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t s = first; s <= o.steps; ++s) {
    nbody::step(rt, p, timer);
    if (csv && sim::csv_writer::due(s, o.csv_every, o.steps)) write_row(s);
    if (sim::checkpoint_due(o, s))
      sim::write_checkpoint(o.checkpoint, "nbody", s, o.seed, [&](shoal::checkpoint::writer& w) {
        w.value("nbody.model", saved_model{bodies, p});
        rt.save_heap(w);
      });
    bar.update(s);
  }
  rt.synchronize();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bar.finish();
  if (csv) csv->close();

  const nbody::totals t = nbody::measure(rt, scratch);
  sim::summary sum;
  sum.steps = o.steps - first + 1;  // run by this invocation
  sum.seconds = seconds;
  sum.populations = {{"bodies", t.bodies}};
  // The kinetic energy in 1e-12 units: equal on one backend run to run, close across backends.
  sum.checksum = static_cast<std::uint64_t>(std::llround(t.kinetic_energy * 1e12));
  std::printf("%s\n", sim::summary_line("nbody", sum).c_str());
  if (o.timing) std::fputs(timer.table().c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "nbody: %s\n", e.what());
    return 1;
  }
}
