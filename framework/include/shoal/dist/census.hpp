#pragma once
/// @file
/// The live objects of every class over all ranks: each rank counts its own heap on the device
/// (sim::census), one reduction sums the counts. For the run's CSV rows and summary, which rank 0
/// writes.
///
///   shoal::sim::census<Ocean> census(rt);
///   const auto all = shoal::dist::count_everywhere(census, ctx);   // the same on every rank
///   std::uint64_t fish = shoal::sim::census<Ocean>::of<Fish>(all);

#include <cstdint>
#include <vector>

#include "shoal/dist/context.hpp"
#include "shoal/sim/census.hpp"

namespace shoal::dist {

/// Live objects of every class of the heap, indexed by type id, summed over every rank (a
/// collective call; waits for this rank's device work, as census::count() does).
template <class Heap>
std::vector<std::uint64_t> count_everywhere(sim::census<Heap>& census, const context& ctx) {
  return ctx.sum(census.count());
}

}  // namespace shoal::dist
