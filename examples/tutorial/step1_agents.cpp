// Tutorial step 1: classes, fields, a heap, agents made in bulk, a do-all (docs/tutorial.md).
#include <cstdio>

#include "shoal/shoal.hpp"

class Rabbit;                          // every class of the heap is named before any is defined
using Meadow = shoal::heap<Rabbit>;    // its type id is its place in this list

class Rabbit : public shoal::object<Meadow, Rabbit> {
 public:
  // Each field is stored as an array of its own inside the heap's blocks (structure of arrays).
  SHOAL_FIELDS(Rabbit, (float, x), (int, age))
  SHOAL_HD Rabbit(std::size_t i, float spacing) { x = spacing * static_cast<float>(i); age = 0; }
  SHOAL_HD void grow_older() { age = age + 1; }  // fields act like members: read, assign
};

int main() {
  using Runtime = shoal::runtime<Meadow>;
  Runtime rt(Runtime::bytes_for<Rabbit>(1000));   // a device heap that holds 1,000 rabbits
  rt.parallel_new<Rabbit>(1000, 0.5f);            // Rabbit(i, 0.5f) for i < 1,000
  for (int day = 0; day < 3; ++day) rt.parallel_do<&Rabbit::grow_older>();  // every rabbit, on the device
  rt.synchronize();                               // the do-alls were queued; wait for them
  std::printf("rabbits: %llu in %llu blocks\n", static_cast<unsigned long long>(rt.stats().live()),
              static_cast<unsigned long long>(rt.stats().types[0].blocks));
  return 0;
}
