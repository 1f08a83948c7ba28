#pragma once
/// @file
/// The overlay: a few lines of text (step, populations, steps/s) in a dark box at the top left
/// of a frame, drawn on the host copy with the built-in 5 x 7 font. It costs a few thousand
/// pixel writes, done by the thread that encodes or presents the frame, never by the step loop.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shoal/viz/font.hpp"
#include "shoal/viz/image.hpp"

namespace shoal::viz {

/// Writes `text` with its top-left corner at (x, y), each font pixel a scale x scale square.
inline void draw_text(image_view img, long long x, long long y, std::string_view text, pixel colour, int scale = 1) {
  for (std::size_t k = 0; k < text.size(); ++k) {
    const long long left = x + static_cast<long long>(k) * font::cell_width * scale;
    for (int gy = 0; gy < font::glyph_height; ++gy)
      for (int gx = 0; gx < font::glyph_width; ++gx)
        if (font::lit(text[k], gx, gy))
          for (int sy = 0; sy < scale; ++sy)
            for (int sx = 0; sx < scale; ++sx) img.put(left + gx * scale + sx, y + gy * scale + sy, colour);
  }
}

/// Darkens the pixels of a rectangle to a quarter of their brightness (the text stays legible
/// on any scene, and the scene still shows through).
inline void shade(image_view img, long long x, long long y, long long w, long long h) {
  const long long x1 = std::min<long long>(x + w, img.width), y1 = std::min<long long>(y + h, img.height);
  for (long long py = std::max(0ll, y); py < y1; ++py)
    for (long long px = std::max(0ll, x); px < x1; ++px) {
      pixel& p = img.at(static_cast<std::uint32_t>(px), static_cast<std::uint32_t>(py));
      p = rgba(red(p) / 4, green(p) / 4, blue(p) / 4);
    }
}

/// Text scale for an image: 2 on frames at least 480 pixels wide, else 1.
inline int overlay_scale(const image_view& img) { return img.width >= 480 ? 2 : 1; }

/// Draws the lines in a shaded box at the top left.
inline void draw_overlay(image_view img, const std::vector<std::string>& lines, pixel colour = rgba(240, 240, 240)) {
  if (lines.empty()) return;
  const int s = overlay_scale(img), pad = 2 * s;
  int w = 0;
  for (const auto& l : lines) w = std::max(w, font::text_width(l, s));
  const int h = static_cast<int>(lines.size()) * font::cell_height * s - s;
  shade(img, 0, 0, w + 2 * pad, h + 2 * pad);
  for (std::size_t k = 0; k < lines.size(); ++k)
    draw_text(img, pad, pad + static_cast<long long>(k) * font::cell_height * s, lines[k], colour, s);
}

/// "1234567" as "1 234 567": populations of millions stay readable.
inline std::string grouped(std::uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t k = 0; k < digits.size(); ++k) {
    if (k > 0 && (digits.size() - k) % 3 == 0) out += ' ';
    out += digits[k];
  }
  return out;
}

}  // namespace shoal::viz
