#pragma once
/// @file
/// Umbrella include of the Shoal framework.

#include "shoal/config.hpp"
#include "shoal/arch/atomic.hpp"
#include "shoal/arch/error.hpp"
#include "shoal/arch/lanes.hpp"
#include "shoal/arch/launch.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/bitmap/hierarchical_bitmap.hpp"
