#pragma once
/// @file
/// The one exception of checkpointing: a file that cannot be written, or that cannot be read
/// back as a checkpoint of this program (missing, truncated, corrupt, another format version,
/// other heap classes, a heap too small for it). what() is one line that names the file.

#include <string>

#include "shoal/arch/error.hpp"

namespace shoal {

class checkpoint_error : public error {
 public:
  using error::error;
};

}  // namespace shoal
