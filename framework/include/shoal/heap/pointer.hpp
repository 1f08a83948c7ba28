#pragma once
/// @file
/// Object pointers. A `T*` to a heap object is not the address of a C++ object: it encodes
/// where the object's fields are. Layout of the 64-bit value (see docs/ARCHITECTURE.md):
///
///   bits  0..7   byte offset of a field proxy inside the C++ object (0 in an object pointer)
///   bits  8..46  address of the object's block (blocks are 256-byte aligned)
///   bits 47..52  slot of the object in its block (0..63)
///   bits 53..58  capacity of the block minus one (1..64 slots)
///   bits 59..63  concrete type id (index in the heap's type list, < 32)
///
/// Fields are declared as 1-byte proxies, so `&obj->field` is the object pointer plus the
/// proxy's offset, and the proxy can compute the address of its element in the block's
/// Structure-of-Arrays layout with a few integer operations and no memory access: the
/// capacity fixes where each field array starts, the slot where the element is.

#include <cstdint>

#include "shoal/config.hpp"

namespace shoal::detail {

inline constexpr int proxy_bits = 8;
inline constexpr int address_bits = 47;  // user space on x86-64 Linux, host and CUDA alike
inline constexpr int slot_shift = 47;
inline constexpr int capacity_shift = 53;
inline constexpr int type_shift = 59;
inline constexpr int max_types = 32;
inline constexpr std::uint64_t block_alignment = std::uint64_t{1} << proxy_bits;
inline constexpr std::uint64_t block_address_mask =
    ((std::uint64_t{1} << address_bits) - 1) & ~(block_alignment - 1);

/// The block address is masked although it fits (47 bits, 256-aligned): the compiler then knows
/// every bit above it, so a field access right after (a constructor's) folds the decoded capacity
/// and slot into constants instead of recomputing the field's offset from the pointer.
SHOAL_HD SHOAL_FORCEINLINE std::uint64_t encode_pointer(const void* block, std::uint32_t slot,
                                                       std::uint32_t capacity, std::uint32_t type) {
  return (reinterpret_cast<std::uintptr_t>(block) & block_address_mask) | (std::uint64_t{slot} << slot_shift) |
         (std::uint64_t{capacity - 1} << capacity_shift) | (std::uint64_t{type} << type_shift);
}
SHOAL_HD SHOAL_FORCEINLINE std::uintptr_t block_address_of(std::uint64_t p) {
  return static_cast<std::uintptr_t>(p & block_address_mask);
}
SHOAL_HD SHOAL_FORCEINLINE std::uint32_t slot_of(std::uint64_t p) {
  return static_cast<std::uint32_t>((p >> slot_shift) & 63);
}
SHOAL_HD SHOAL_FORCEINLINE std::uint32_t capacity_of(std::uint64_t p) {
  return static_cast<std::uint32_t>((p >> capacity_shift) & 63) + 1;
}
SHOAL_HD SHOAL_FORCEINLINE std::uint32_t type_of(std::uint64_t p) {
  return static_cast<std::uint32_t>(p >> type_shift);
}
SHOAL_HD SHOAL_FORCEINLINE std::uint32_t proxy_offset_of(std::uint64_t p) {
  return static_cast<std::uint32_t>(p & (block_alignment - 1));
}
template <class T>
SHOAL_HD SHOAL_FORCEINLINE std::uint64_t bits_of(const T* p) {
  return reinterpret_cast<std::uintptr_t>(p);
}

}  // namespace shoal::detail
