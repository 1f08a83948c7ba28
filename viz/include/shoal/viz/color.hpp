#pragma once
/// @file
/// RGBA8 pixels packed in a 32-bit word so that the bytes in memory are R, G, B, A (the order
/// PNG files and SDL's RGBA32 textures expect) on the little-endian machines Shoal runs on.

#include <cstdint>

#include "shoal/config.hpp"

namespace shoal::viz {

/// One RGBA8 pixel: R in the low byte, A in the high one.
using pixel = std::uint32_t;

/// The pixel of channels r, g, b, a (0..255 each; higher bits are dropped); opaque by default.
SHOAL_HD constexpr pixel rgba(std::uint32_t r, std::uint32_t g, std::uint32_t b, std::uint32_t a = 255) {
  return (r & 255u) | ((g & 255u) << 8) | ((b & 255u) << 16) | ((a & 255u) << 24);
}
/// The red channel of p (0..255).
SHOAL_HD constexpr std::uint32_t red(pixel p) { return p & 255u; }
/// The green channel of p (0..255).
SHOAL_HD constexpr std::uint32_t green(pixel p) { return (p >> 8) & 255u; }
/// The blue channel of p (0..255).
SHOAL_HD constexpr std::uint32_t blue(pixel p) { return (p >> 16) & 255u; }

/// a + (b - a) * t / 255 per channel, in integers (same result on every backend).
SHOAL_HD constexpr std::uint32_t mix_channel(std::uint32_t x, std::uint32_t y, std::uint32_t t) {
  return (x * (255u - t) + y * t + 127u) / 255u;
}
/// a blended towards b by t / 255 (0: a, 255: b), channel by channel; the result is opaque.
SHOAL_HD constexpr pixel mix(pixel a, pixel b, std::uint32_t t) {
  return rgba(mix_channel(red(a), red(b), t), mix_channel(green(a), green(b), t), mix_channel(blue(a), blue(b), t));
}

}  // namespace shoal::viz
