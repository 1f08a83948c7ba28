// Tutorial step 3: saving a run and going on from the file (docs/tutorial.md).
#include <cstdio>
#include <cstring>
#include <span>
#include <vector>

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
    if (age > 4) {
      delete this;
      return;
    }
    if ((id + day) % 2 == 0) new Rabbit(id, day);
  }
};
using Runtime = shoal::runtime<Meadow>;

void days(Runtime& rt, unsigned from, unsigned to) {
  for (unsigned day = from; day <= to; ++day) rt.parallel_do<&Rabbit::live>(day);
  rt.synchronize();
}

int main(int argc, char** argv) {
  const char* file = argc > 1 ? argv[1] : "meadow.ckpt";
  Runtime whole(Runtime::bytes_for<Rabbit>(100000));
  whole.parallel_new<Rabbit>(100);
  days(whole, 1, 6);

  Runtime first(Runtime::bytes_for<Rabbit>(100000));
  first.parallel_new<Rabbit>(100);
  days(first, 1, 3);
  const unsigned saved_day = 3;  // what the run needs besides the heap goes in the user blob
  std::vector<std::byte> blob(sizeof saved_day);
  std::memcpy(blob.data(), &saved_day, sizeof saved_day);
  first.save(file, blob);        // written beside the file, then renamed: never half a file

  std::vector<std::byte> got;
  Runtime resumed = Runtime::load(file, &got);  // any address, either backend
  unsigned day = 0;
  std::memcpy(&day, got.data(), sizeof day);
  days(resumed, day + 1, 6);
  std::printf("6 days in one run: %llu rabbits; 3 days, saved, loaded, 3 more: %llu rabbits\n",
              static_cast<unsigned long long>(whole.stats().live()),
              static_cast<unsigned long long>(resumed.stats().live()));
  return whole.stats().live() == resumed.stats().live() ? 0 : 1;
}
