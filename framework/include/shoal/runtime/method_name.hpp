#pragma once
/// @file
/// The name of a member function given as a template argument, as a person writes it
/// ("Fish::move"): what `--timing` calls a do-all. Read from the compiler's
/// __PRETTY_FUNCTION__ (GCC and Clang, and nvcc with either as host compiler).

#include <string>
#include <string_view>

namespace shoal::detail {

template <auto Method>
std::string_view pretty_function_of() {
  return __PRETTY_FUNCTION__;
}

/// `&ns::Fish::move` → "Fish::move": the class and the method, without namespaces. (GCC names a
/// method template's instance without its arguments: `&Body::show<splat>` is "Body::show".)
template <auto Method>
std::string method_name() {
  const std::string_view pretty = pretty_function_of<Method>();
  const std::string_view marker = "Method = &";
  const std::size_t from = pretty.find(marker);
  if (from == std::string_view::npos) return "do-all";
  std::string_view full = pretty.substr(from + marker.size());
  full = full.substr(0, full.find_first_of(";]"));
  // The last two "::"-separated parts: the class and the method.
  const std::size_t method = full.rfind("::");
  if (method == std::string_view::npos || method == 0) return std::string(full);
  const std::size_t owner = full.rfind("::", method - 1);
  return std::string(owner == std::string_view::npos ? full : full.substr(owner + 2));
}

}  // namespace shoal::detail
