#pragma once
/// @file
/// Little-endian fixed-size encoding for checkpoint files, and a bounds-checked reader of it:
/// every read of a file goes through byte_source, so a truncated or hostile file ends in a
/// checkpoint_error, never in a read past its end.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "shoal/checkpoint/error.hpp"

namespace shoal::checkpoint {

// The file stores integers little-endian and device bytes as they are; both backends run on
// little-endian x86-64 hosts (and GPUs), so a big-endian host would need byte swapping that is
// not written: refuse to build there rather than write files nobody else reads.
static_assert(std::endian::native == std::endian::little, "shoal checkpoints assume a little-endian host");

/// Appends fixed-size little-endian values to a byte vector.
class byte_sink {
 public:
  /// Appends to `out`, which must outlive the sink.
  explicit byte_sink(std::vector<std::byte>& out) : out_(out) {}
  /// An integer in its sizeof(T) bytes.
  template <class T>
    requires std::is_integral_v<T>
  void put(T v) {
    put_bytes(std::as_bytes(std::span(&v, 1)));
  }
  /// Raw bytes, as they are.
  void put_bytes(std::span<const std::byte> b) {
    if (b.empty()) return;
    const std::size_t at = out_.size();
    out_.resize(at + b.size());
    std::memcpy(out_.data() + at, b.data(), b.size());
  }
  /// A string as u32 length + bytes.
  void put_string(std::string_view s) {
    put(static_cast<std::uint32_t>(s.size()));
    put_bytes(std::as_bytes(std::span(s.data(), s.size())));
  }
  /// Zero bytes up to the next multiple of `alignment` (counted from the vector's start).
  void pad_to(std::size_t alignment) {
    while (out_.size() % alignment != 0) out_.push_back(std::byte{0});
  }
  /// Bytes in the vector so far.
  std::size_t size() const { return out_.size(); }

 private:
  std::vector<std::byte>& out_;
};

/// Reads what byte_sink wrote; throws checkpoint_error("<what>: ... truncated") past the end.
class byte_source {
 public:
  /// Reads `in` from its start; `what` names it in error messages (a file, a section).
  byte_source(std::span<const std::byte> in, std::string what) : in_(in), what_(std::move(what)) {}
  /// The next integer of sizeof(T) bytes.
  template <class T>
    requires std::is_integral_v<T>
  T get() {
    T v;
    std::memcpy(&v, take(sizeof(T)).data(), sizeof(T));
    return v;
  }
  /// The next `n` bytes, in place (no copy).
  std::span<const std::byte> take(std::uint64_t n) {
    if (n > in_.size() - pos_) fail("ends early (truncated or corrupt)");
    const auto s = in_.subspan(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return s;
  }
  /// A string written by put_string(); a length over `max_length` is reported as corrupt.
  std::string get_string(std::uint32_t max_length) {
    const auto n = get<std::uint32_t>();
    if (n > max_length) fail("holds a name of " + std::to_string(n) + " bytes (corrupt)");
    const auto b = take(n);
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  }
  /// Skips pad_to()'s zero bytes up to the next multiple of `alignment` (not checked to be zero).
  void skip_padding(std::size_t alignment) {
    const std::size_t pad = (alignment - pos_ % alignment) % alignment;
    take(pad);
  }
  /// Bytes read so far.
  std::size_t position() const { return pos_; }
  /// Bytes not read yet.
  std::size_t left() const { return in_.size() - pos_; }
  /// Throws checkpoint_error("<what> <why>").
  [[noreturn]] void fail(const std::string& why) const { throw checkpoint_error(what_ + " " + why); }

 private:
  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
  std::string what_;
};

}  // namespace shoal::checkpoint
