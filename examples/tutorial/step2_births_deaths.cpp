// Tutorial step 2: births and deaths inside a do-all, and a heap that runs out (docs/tutorial.md).
#include <cstdio>

#include "shoal/shoal.hpp"

class Rabbit;
using Meadow = shoal::heap<Rabbit>;

class Rabbit : public shoal::object<Meadow, Rabbit> {
 public:
  SHOAL_FIELDS(Rabbit, (unsigned, id), (int, age))
  SHOAL_HD Rabbit(std::size_t i) { id = static_cast<unsigned>(i); age = 0; }
  SHOAL_HD Rabbit(unsigned parent, unsigned day) { id = parent * 7u + day; age = 0; }

  SHOAL_HD void live(unsigned day) {
    age = age + 1;
    if (age > 4) {                       // old rabbits leave: the object ends its own life
      delete this;
      return;
    }
    if ((id + day) % 2 == 0) new Rabbit(id, day);  // a birth; nullptr when the heap is full
  }
};

/// Runs `days` days on a heap with room for `capacity` rabbits; returns the rabbits alive.
unsigned long long run(std::size_t capacity, unsigned days) {
  using Runtime = shoal::runtime<Meadow>;
  Runtime rt(Runtime::bytes_for<Rabbit>(capacity));
  rt.parallel_new<Rabbit>(100);
  for (unsigned day = 1; day <= days; ++day) rt.parallel_do<&Rabbit::live>(day);
  rt.synchronize();  // throws shoal::out_of_memory if any `new` returned nullptr
  return rt.stats().live();
}

int main() {
  std::printf("after 6 days: %llu rabbits\n", run(100000, 6));
  try {
    run(200, 6);  // far too small: the births cannot all fit
  } catch (const shoal::out_of_memory& e) {
    std::printf("a small heap: out of memory for %s (%llu births failed)\n", e.type_name().c_str(), e.failed());
  }
  return 0;
}
