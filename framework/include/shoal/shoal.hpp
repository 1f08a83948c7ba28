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
#include "shoal/dsl/field.hpp"
#include "shoal/dsl/object.hpp"
#include "shoal/heap/heap.hpp"
#include "shoal/runtime/runtime.hpp"
