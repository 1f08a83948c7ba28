#pragma once
/// @file
/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of checkpoint files.
/// Why CRC-32C: it detects every burst error up to 32 bits and every odd number of bit flips,
/// and it is the checksum of iSCSI, ext4 and Btrfs, so other tools can check a file. Software
/// "slicing by 8" (eight 256-entry tables built at compile time, eight bytes per step), so it
/// needs no package and runs the same on every host; about 1-2 GB/s, well above disk speed.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace shoal::checkpoint {

namespace detail {
inline constexpr std::uint32_t crc32c_polynomial = 0x82F63B78u;

constexpr std::array<std::array<std::uint32_t, 256>, 8> make_crc32c_tables() {
  std::array<std::array<std::uint32_t, 256>, 8> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ crc32c_polynomial : c >> 1;
    t[0][i] = c;
  }
  // t[k][i]: the CRC of byte i followed by k zero bytes, so eight bytes fold in one step.
  for (std::uint32_t i = 0; i < 256; ++i)
    for (int k = 1; k < 8; ++k) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFFu];
  return t;
}
inline constexpr auto crc32c_tables = make_crc32c_tables();
}  // namespace detail

/// Continues a CRC-32C: crc32c(b, crc32c(a)) == crc32c(a then b). Start with 0.
inline std::uint32_t crc32c(std::span<const std::byte> data, std::uint32_t crc = 0) {
  const auto& t = detail::crc32c_tables;
  std::uint32_t c = ~crc;
  const std::byte* p = data.data();
  std::size_t n = data.size();
  while (n >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);  // little-endian hosts only (checked where files are read)
    word ^= c;
    c = t[7][word & 0xFF] ^ t[6][(word >> 8) & 0xFF] ^ t[5][(word >> 16) & 0xFF] ^
        t[4][(word >> 24) & 0xFF] ^ t[3][(word >> 32) & 0xFF] ^ t[2][(word >> 40) & 0xFF] ^
        t[1][(word >> 48) & 0xFF] ^ t[0][word >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = (c >> 8) ^ t[0][(c ^ std::to_integer<std::uint32_t>(*p++)) & 0xFFu];
  return ~c;
}

}  // namespace shoal::checkpoint
