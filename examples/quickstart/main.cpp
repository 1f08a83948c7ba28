#include <cstdio>
#include "shoal/shoal.hpp"

class Cell;                                   // every class is named first: type id = index
using World = shoal::heap<Cell>;

class Cell : public shoal::object<World, Cell> {
 public:
  SHOAL_FIELDS(Cell, (unsigned, id), (int, energy))  // each field an array of its own (SOA)
  SHOAL_HD Cell(std::size_t i, int e) { id = static_cast<unsigned>(i); energy = e; }
  SHOAL_HD void live(unsigned step) {          // run on every Cell by a do-all
    energy = energy - 1;
    if (energy <= 0) { delete this; return; }  // deaths and births inside device code
    if ((id + step) % 4 == 0) new Cell(id * 31u + step, 5);  // nullptr when the heap is full
  }
};

int main() {
  using Runtime = shoal::runtime<World>;
  Runtime rt(Runtime::bytes_for<Cell>(200000) * 2);   // device heap: room for 400,000 cells
  rt.parallel_new<Cell>(100000, 5);                   // Cell(i, 5) for i < 100,000
  for (unsigned step = 1; step <= 10; ++step) rt.parallel_do<&Cell::live>(step);  // no host waits
  rt.synchronize();                                   // throws shoal::out_of_memory naming Cell
  std::printf("cells alive: %llu\n", static_cast<unsigned long long>(rt.stats().live()));
  return rt.verify().empty() ? 0 : 1;
}
