// Walkers on a ring: a model of its own, built against an installed Shoal (see CMakeLists.txt).
// Every step each walker moves one position left or right, eats now and then, spends energy,
// splits in two when it has plenty and dies when it has none: births and deaths happen in
// device code, inside one do-all. The same file compiles for the cpu and the cuda backend.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include "shoal/shoal.hpp"
#include "shoal/sim/rng.hpp"

class Walker;
using World = shoal::heap<Walker>;

constexpr std::uint32_t ring = 1000;  // positions 0 .. ring-1, the last next to the first
constexpr std::uint64_t seed = 23;

class Walker : public shoal::object<World, Walker> {
 public:
  SHOAL_FIELDS(Walker, (std::uint64_t, tag), (std::uint32_t, pos), (std::int32_t, energy))
  // parallel_new gives object i the arguments (i, energy).
  SHOAL_HD Walker(std::uint64_t i, std::int32_t e) { tag = i, pos = i % ring, energy = e; }
  SHOAL_HD Walker(std::uint64_t t, std::uint32_t p, std::int32_t e) { tag = t, pos = p, energy = e; }

  // Draws depend only on (seed, tag, step): the same run on any backend and in any thread order.
  SHOAL_HD void live(std::uint32_t step) {
    shoal::sim::random r(seed, tag, step, 0);
    pos = (pos + (r.below(2) == 0 ? 1 : ring - 1)) % ring;
    energy -= 1;
    if (r.chance(shoal::sim::probability(0.5))) energy += 2;
    if (energy <= 0) {
      delete this;  // a death: the slot is free for the next birth
      return;
    }
    if (energy >= 12) {  // a birth: half the energy goes to a child with a tag of its own
      const std::int32_t half = energy / 2;
      energy -= half;
      // nullptr if the heap is full: the do-all then throws shoal::out_of_memory.
      new Walker(tag * 6364136223846793005ull + 1442695040888963407ull, pos, half);
    }
  }
};

int main() try {
  constexpr std::uint64_t walkers = 500;
  constexpr std::uint32_t steps = 200;
  shoal::runtime<World> rt(std::size_t{16} << 20);  // a 16 MiB heap
  rt.parallel_new<Walker>(walkers, std::int32_t{8});
  for (std::uint32_t s = 1; s <= steps; ++s) rt.parallel_do<&Walker::live>(s);
  rt.synchronize();
  const shoal::heap_stats stats = rt.stats();
  const std::string problems = rt.verify();  // "" when every invariant of the heap holds
  std::printf("downstream: backend=%s steps=%u walkers=%llu (from %llu) heap=%s\n", shoal::backend_name,
              steps, static_cast<unsigned long long>(stats.live()),
              static_cast<unsigned long long>(walkers), problems.empty() ? "ok" : problems.c_str());
  return problems.empty() ? 0 : 1;
} catch (const std::exception& e) {  // out of memory, or no usable GPU for a cuda build
  std::fprintf(stderr, "walkers: %s\n", e.what());
  return 1;
}
