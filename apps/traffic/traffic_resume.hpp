#pragma once
/// @file
/// What a traffic checkpoint must hold before simulation::load copies it to the device: the
/// file may come from anyone, and the step code indexes the network with every car's cells. The
/// loader checks the heap's structure and that each cell's occupant is null or a live Car; here,
/// what only the traffic model knows: each car is on exactly one cell, the cell its `position`
/// names (its planned `destination` too, as after every step), and its speeds are ones a street
/// allows (cell::max_limit).

#include <cstdint>
#include <string>
#include <vector>

#include "car.hpp"
#include "cell_info.hpp"
#include "shoal/checkpoint/saved_heap.hpp"

namespace traffic {

/// Throws checkpoint_error (one line, naming the file and the first bad value) unless the
/// checkpoint's cars and occupants are a state the steps can run from on a network of `cells`.
inline void check_saved_state(const shoal::checkpoint::reader& r, std::uint64_t cells) {
  using saved = shoal::checkpoint::saved_heap<TrafficHeap>;
  const saved heap(r);
  const auto occupant = heap.pointers(r, "traffic.occupant", cells);
  std::vector<std::uint8_t> placed(heap.blocks() * 64, 0);
  auto bad = [&](const std::string& why) { throw shoal::checkpoint_error(heap.name() + " is invalid: " + why); };
  for (std::uint64_t c = 0; c < cells; ++c) {
    if (!occupant[c]) continue;
    const saved::object o = *occupant[c];
    const std::string car = "the car on cell " + std::to_string(c);
    if (placed[saved::ordinal(o)]++ != 0) bad("two cells hold the same car (cell " + std::to_string(c) + ")");
    const std::uint32_t position = heap.read<Car>(o, &Car::position), destination = heap.read<Car>(o, &Car::destination);
    const std::uint32_t velocity = heap.read<Car>(o, &Car::velocity), top = heap.read<Car>(o, &Car::max_velocity);
    if (position != c || destination != c)
      bad(car + " says it is on cell " + std::to_string(position) + " going to " + std::to_string(destination));
    if (top > cell::max_limit || velocity > top)
      bad(car + " has speed " + std::to_string(velocity) + " of at most " + std::to_string(top));
  }
  heap.for_each<Car>([&](saved::object o) {
    if (placed[saved::ordinal(o)] == 0) bad("a car is on no cell of the network");
  });
}

}  // namespace traffic
