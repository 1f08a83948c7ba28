#pragma once
// The model of tutorial step 5 (docs/tutorial.md): the rabbits of step 2, as the class that
// sim::run_model runs (step5_app.cpp) and that examples/python_model makes a Python class.
// Each day every rabbit ages by one, leaves at age 5, and on days when its id plus the day is
// even it has a young one.
#include <cstdint>
#include <string>
#include <vector>

#include "shoal/checkpoint/saved_heap.hpp"
#include "shoal/viz/driver.hpp"

namespace sim = shoal::sim;

class Rabbit;
using Meadow = shoal::heap<Rabbit>;

class Rabbit : public shoal::object<Meadow, Rabbit> {
 public:
  SHOAL_FIELDS(Rabbit, (unsigned, id), (int, age))
  SHOAL_HD Rabbit(std::size_t i) { id = static_cast<unsigned>(i); age = 0; }
  SHOAL_HD Rabbit(unsigned parent, unsigned day) { id = parent * 7u + day; age = 0; }
  SHOAL_HD void live(unsigned day) {
    age = age + 1;
    if (age > 4) {
      delete this;
      return;
    }
    if ((id + day) % 2 == 0) new Rabbit(id, day);
  }
  /// Adds the rabbit's digest to the checksum: a sum, so the threads' order does not matter.
  SHOAL_HD void digest(sim::sums::ref sum) { sum.add(0, static_cast<long long>(id * 2654435761u + age)); }
};

/// The program: what run_model needs to know of the model, and nothing of the run's outputs.
struct meadow {
  static constexpr const char* name = "tutorial_step5_app";
  static constexpr const char* description = "Tutorial step 5: the rabbits of step 2 as a complete program.";
  static constexpr sim::run_options defaults{.steps = 20, .heap_mb = 64};
  struct flags { std::uint64_t rabbits = 100; };
  static constexpr const char* saved_flags = "meadow.flags";  // a resumed run takes them from here
  static void add_flags(sim::flag_table<flags>& t, flags& f) {
    t.add("--rabbits", f.rabbits, "rabbits on the first day")->check(sim::whole_number(1, 1'000'000));
  }
  meadow(const flags& f, const sim::run_options& o) : rabbits_(f.rabbits), rt_(o.heap_mb << 20) {}
  shoal::runtime<Meadow>& runtime() { return rt_; }
  sim::fields header() const { return {{"rabbits", std::to_string(rabbits_)}}; }
  static std::vector<std::string> csv_columns() { return {"rabbits"}; }

  void populate() { rt_.parallel_new<Rabbit>(rabbits_); }
  void step(std::uint64_t s, sim::phase_timer& timer) {
    auto phase = timer.phase("live");
    rt_.parallel_do<&Rabbit::live>(static_cast<unsigned>(s));
  }
  std::vector<sim::csv_value> csv_row() { return {census_.of<Rabbit>(census_.count())}; }
  sim::summary result() {
    sum_.zero();
    rt_.parallel_do<&Rabbit::digest>(sum_.device());
    return {.populations = {{"rabbits", census_.of<Rabbit>(census_.count())}},
            .checksum = static_cast<std::uint64_t>(sum_.read()[0])};
  }

  void save(shoal::checkpoint::writer& w) {
    w.value("meadow.flags", flags{rabbits_});
    rt_.save_heap(w);
  }
  /// The file may come from anyone. load_heap checks the heap's structure; the model checks
  /// what only it knows: every age is 0..4, as after any day (no run reaches another, and
  /// `age + 1` overflows at the largest int). Any id is valid. Nothing loads unless all passes.
  void resume(const shoal::checkpoint::reader& r) {
    const shoal::checkpoint::saved_heap<Meadow> saved(r);
    saved.for_each<Rabbit>([&](auto o) {
      if (const int age = saved.read<Rabbit>(o, &Rabbit::age); age < 0 || age > 4)
        throw shoal::checkpoint_error(saved.name() + " is invalid: a rabbit has age " + std::to_string(age));
    });
    rt_.load_heap(r);
  }

 private:
  std::uint64_t rabbits_;
  shoal::runtime<Meadow> rt_;
  sim::census<Meadow> census_{rt_};
  sim::sums sum_{1};
};
