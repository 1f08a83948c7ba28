#pragma once
/// @file
/// What a car needs to know about a street cell, packed into one 32-bit word so that planning a
/// path reads one word per cell besides the cell's occupant:
///
///   bits  0..3   speed limit of the street (cells per step)
///   bit   4      target: a car that arrives here leaves the simulation
///   bit   5      end of a street: the cell before an intersection, where its traffic light is
///   bits  6..7   (end cells) which incoming street of the intersection this is (light slot)
///   bits  8..9   (end cells) number of incoming streets of the intersection - 1
///   bits 10..11  (end cells) number of outgoing streets of the intersection - 1
///   bits 12..31  (end cells) the intersection
///
/// A cell that is not an end cell continues into the next cell index (streets are contiguous).

#include <cstdint>

#include "shoal/config.hpp"

namespace traffic::cell {

inline constexpr std::uint32_t max_degree = 4;          // streets in or out of an intersection
inline constexpr std::uint32_t max_limit = 15;          // what fits in 4 bits
inline constexpr std::uint32_t intersection_bits = 20;
inline constexpr std::uint32_t max_intersections = std::uint32_t{1} << intersection_bits;

SHOAL_HD constexpr std::uint32_t street_cell(std::uint32_t limit, bool target) {
  return (limit & 15u) | (target ? 16u : 0u);
}
SHOAL_HD constexpr std::uint32_t end_cell(std::uint32_t limit, bool target, std::uint32_t slot,
                                          std::uint32_t num_in, std::uint32_t num_out,
                                          std::uint32_t intersection) {
  return street_cell(limit, target) | 32u | (slot << 6) | ((num_in - 1) << 8) |
         ((num_out - 1) << 10) | (intersection << 12);
}

SHOAL_HD constexpr std::uint32_t limit(std::uint32_t info) { return info & 15u; }
SHOAL_HD constexpr bool is_target(std::uint32_t info) { return (info & 16u) != 0; }
SHOAL_HD constexpr bool is_end(std::uint32_t info) { return (info & 32u) != 0; }
SHOAL_HD constexpr std::uint32_t slot(std::uint32_t info) { return (info >> 6) & 3u; }
SHOAL_HD constexpr std::uint32_t num_in(std::uint32_t info) { return ((info >> 8) & 3u) + 1; }
SHOAL_HD constexpr std::uint32_t num_out(std::uint32_t info) { return ((info >> 10) & 3u) + 1; }
SHOAL_HD constexpr std::uint32_t intersection(std::uint32_t info) { return info >> 12; }

/// The traffic lights: every `period` steps each intersection gives green to its next incoming
/// street, all intersections in phase (as in DynaSOAr, whose lights all start together). A pure
/// function of the step, so no light state has to be stepped or stored.
SHOAL_HD constexpr bool green(std::uint32_t info, std::uint32_t step, std::uint32_t period) {
  return (step / period) % num_in(info) == slot(info);
}

/// How fast a car may enter (or leave) this cell at `step`: the street's limit, 0 at a red light.
SHOAL_HD constexpr std::uint32_t limit_at(std::uint32_t info, std::uint32_t step,
                                          std::uint32_t period) {
  return is_end(info) && !green(info, step, period) ? 0u : limit(info);
}

}  // namespace traffic::cell
