#pragma once
/// @file
/// Umbrella include of the simulation toolkit (namespace shoal::sim): the shared command line,
/// run header and summary, progress bar, CSV time series, counter-based random numbers,
/// deterministic claims, grids of agents, device-side counts and sums, per-phase timing.

#include "shoal/sim/census.hpp"
#include "shoal/sim/claim.hpp"
#include "shoal/sim/cli.hpp"
#include "shoal/sim/csv.hpp"
#include "shoal/sim/grid.hpp"
#include "shoal/sim/phase_timer.hpp"
#include "shoal/sim/progress.hpp"
#include "shoal/sim/report.hpp"
#include "shoal/sim/rng.hpp"
#include "shoal/sim/sums.hpp"
