#pragma once
/// @file
/// Host-side errors raised by the runtime.

#include <string>

#include "shoal/arch/error.hpp"

namespace shoal {

/// Allocations failed because the heap was full. what() names the class and the heap size.
class out_of_memory : public error {
 public:
  /// `type_name`: the first class (by type id) whose allocations failed; `failed`: how many.
  out_of_memory(const std::string& what, std::string type_name, unsigned long long failed)
      : error(what), type_name_(std::move(type_name)), failed_(failed) {}
  /// The first class (by type id) whose allocations failed.
  const std::string& type_name() const { return type_name_; }
  /// The number of that class's allocations that failed.
  unsigned long long failed() const { return failed_; }

 private:
  std::string type_name_;
  unsigned long long failed_;
};

/// Checked mode found a destroy() of something that is not a live heap object.
class invalid_destroy : public error {
 public:
  using error::error;
};

}  // namespace shoal
