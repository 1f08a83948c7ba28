// The fast PNG encoder of builds with zlib (see png.hpp). Deflate's time goes mostly into the
// symbols it emits, so what makes it fast is fewer bytes to compress and long matches:
// - an indexed-colour image when the frame has at most 256 colours (simulation frames have a
//   few dozen): a byte per pixel instead of four, and fewer still (4, 2 or 1 bits) with at most
//   16, 4 or 2 colours, packed as PNG allows;
// - zlib level 1 with Z_RLE on indices: only runs of the previous byte are matched, no hash
//   chains to keep, and the file is smaller than with level 1's usual matching;
// - frames with more colours (n-body's glow) as RGB when all is opaque, else RGBA, with level 1's
//   usual matching: a run of pixels repeats 3 or 4 bytes back, which Z_RLE cannot see;
// - no row filter (type 0): palette indices do not predict from their neighbours, and on RGB
//   frames of a dark sky with stars, Sub and Up made the file 28% and 49% larger.
// The numbers behind these choices: BENCHMARKS.md, "Viewer frames".

#include <zlib.h>

#include <cstring>
#include <string>

#include "png_palette.hpp"
#include "shoal/viz/png.hpp"

namespace shoal::viz {

namespace {

/// One deflate stream per thread, reset for each frame (initialising one allocates its window
/// and tables, a few hundred kB).
class deflater {
 public:
  deflater() {
    if (deflateInit2(&z_, level, Z_DEFLATED, 15, 8, strategy_) != Z_OK)
      throw write_error("zlib: cannot start a deflate stream");
  }
  ~deflater() { deflateEnd(&z_); }
  deflater(const deflater&) = delete;
  deflater& operator=(const deflater&) = delete;

  /// Appends raw, compressed as one zlib stream, to out; returns the compressed size.
  std::size_t compress(const std::vector<std::uint8_t>& raw, int strategy, std::vector<std::uint8_t>& out) {
    deflateReset(&z_);
    // After a reset, before any input, changing parameters flushes nothing.
    if (strategy != strategy_ && deflateParams(&z_, level, strategy) != Z_OK)
      throw write_error("zlib: cannot set the strategy");
    strategy_ = strategy;
    // Room for the worst case, so that one call compresses it all straight into out.
    const std::size_t at = out.size(), room = deflateBound(&z_, static_cast<uLong>(raw.size()));
    out.resize(at + room);
    z_.next_in = const_cast<std::uint8_t*>(raw.data());  // zlib's interface predates const
    z_.avail_in = static_cast<uInt>(raw.size());
    z_.next_out = out.data() + at;
    z_.avail_out = static_cast<uInt>(room);
    if (deflate(&z_, Z_FINISH) != Z_STREAM_END) throw write_error("zlib: deflate failed");
    out.resize(at + z_.total_out);
    return z_.total_out;
  }

 private:
  z_stream z_{};
  static constexpr int level = 1;  // the fastest that still matches (0 stores)
  int strategy_ = Z_DEFAULT_STRATEGY;
};

void put32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  const std::uint8_t b[4] = {static_cast<std::uint8_t>(v >> 24), static_cast<std::uint8_t>(v >> 16),
                             static_cast<std::uint8_t>(v >> 8), static_cast<std::uint8_t>(v)};
  out.insert(out.end(), b, b + 4);
}

/// Starts a chunk: its length and type. Returns where the type begins (the CRC covers type and data).
std::size_t begin_chunk(std::vector<std::uint8_t>& out, std::size_t length, const char* type) {
  put32(out, static_cast<std::uint32_t>(length));
  const std::size_t at = out.size();
  out.insert(out.end(), type, type + 4);
  return at;
}
void end_chunk(std::vector<std::uint8_t>& out, std::size_t type_at) {
  put32(out, static_cast<std::uint32_t>(crc32(0, out.data() + type_at, static_cast<uInt>(out.size() - type_at))));
}
void put_chunk(std::vector<std::uint8_t>& out, const char* type, const std::uint8_t* data, std::size_t n) {
  const std::size_t at = begin_chunk(out, n, type);
  out.insert(out.end(), data, data + n);
  end_chunk(out, at);
}

/// Packs w indices of `Bits` bits into bytes, the leftmost pixel in the most significant bits;
/// a short last byte is padded with zero bits.
template <int Bits>
void pack_row(const std::uint8_t* src, std::size_t w, std::uint8_t* dst) {
  constexpr std::size_t per_byte = 8 / Bits;
  const std::size_t whole = w / per_byte;
  for (std::size_t k = 0; k < whole; ++k, src += per_byte) {
    unsigned v = 0;
    for (std::size_t j = 0; j < per_byte; ++j) v = (v << Bits) | src[j];
    dst[k] = static_cast<std::uint8_t>(v);
  }
  if (const std::size_t left = w % per_byte; left != 0) {
    unsigned v = 0;
    for (std::size_t j = 0; j < per_byte; ++j) v = (v << Bits) | (j < left ? src[j] : 0u);
    dst[whole] = static_cast<std::uint8_t>(v);
  }
}

/// The image as PNG rows (a filter byte, 0, before each) of palette indices, `bits` per pixel.
/// False when it has more than 256 colours.
bool indexed_rows(const image_view& img, detail::palette_builder& pal, std::vector<std::uint8_t>& raw, int& bits) {
  const std::size_t w = img.width, stride = w + 1;
  raw.resize(stride * img.height);
  for (std::size_t y = 0; y < img.height; ++y) {
    raw[y * stride] = 0;
    if (!pal.index_row(img.pixels + y * w, img.width, raw.data() + y * stride + 1)) return false;
  }
  bits = pal.size() <= 2 ? 1 : pal.size() <= 4 ? 2 : pal.size() <= 16 ? 4 : 8;
  if (bits == 8) return true;
  const std::size_t packed = (w * static_cast<std::size_t>(bits) + 7) / 8;
  for (std::size_t y = 0; y < img.height; ++y) {
    // In place: packed row y starts no later than byte row y did, and within a row byte x
    // is read before packed byte x * bits / 8 <= x is written.
    const std::uint8_t* src = raw.data() + y * stride + 1;
    std::uint8_t* dst = raw.data() + y * (packed + 1);
    dst[0] = 0;
    if (bits == 4) pack_row<4>(src, w, dst + 1);
    else if (bits == 2) pack_row<2>(src, w, dst + 1);
    else pack_row<1>(src, w, dst + 1);
  }
  raw.resize((packed + 1) * img.height);
  return true;
}

/// True when every pixel is opaque (alpha 255): the image can be written without alpha.
bool opaque(const image_view& img) {
  const std::size_t n = std::size_t{img.width} * img.height;
  pixel all = ~pixel{0};
  for (std::size_t k = 0; k < n; ++k) all &= img.pixels[k];  // vectorises; no early exit needed
  return (all >> 24) == 255;
}

/// The image as PNG rows of RGB (alpha false) or RGBA bytes (the pixel words are R, G, B, A in memory).
void truecolour_rows(const image_view& img, bool alpha, std::vector<std::uint8_t>& raw) {
  const std::size_t w = img.width, channels = alpha ? 4 : 3, stride = w * channels + 1;
  raw.resize(stride * img.height);
  for (std::size_t y = 0; y < img.height; ++y) {
    std::uint8_t* dst = raw.data() + y * stride;
    *dst++ = 0;
    const pixel* src = img.pixels + y * w;
    if (alpha) {
      std::memcpy(dst, src, w * sizeof(pixel));
    } else {
      for (std::size_t x = 0; x < w; ++x, dst += 3) {
        dst[0] = static_cast<std::uint8_t>(red(src[x]));
        dst[1] = static_cast<std::uint8_t>(green(src[x]));
        dst[2] = static_cast<std::uint8_t>(blue(src[x]));
      }
    }
  }
}

void put_header(std::vector<std::uint8_t>& out, const image_view& img, int bits, int colour_type) {
  static const std::uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  out.insert(out.end(), signature, signature + 8);
  const std::size_t at = begin_chunk(out, 13, "IHDR");
  put32(out, img.width);
  put32(out, img.height);
  // Bit depth, colour type, then compression (deflate), filter method (adaptive), no interlace.
  const std::uint8_t rest[5] = {static_cast<std::uint8_t>(bits), static_cast<std::uint8_t>(colour_type), 0, 0, 0};
  out.insert(out.end(), rest, rest + 5);
  end_chunk(out, at);
}

/// PLTE, and tRNS when a colour is not opaque (entries after the last such one may be left out).
void put_palette(std::vector<std::uint8_t>& out, const detail::palette_builder& pal) {
  std::uint8_t rgb[3 * detail::palette_builder::max_colours], alpha[detail::palette_builder::max_colours];
  std::size_t alphas = 0;
  for (std::size_t k = 0; k < pal.size(); ++k) {
    const pixel p = pal.colour(k);
    rgb[3 * k] = static_cast<std::uint8_t>(red(p));
    rgb[3 * k + 1] = static_cast<std::uint8_t>(green(p));
    rgb[3 * k + 2] = static_cast<std::uint8_t>(blue(p));
    alpha[k] = static_cast<std::uint8_t>(p >> 24);
    if (alpha[k] != 255) alphas = k + 1;
  }
  put_chunk(out, "PLTE", rgb, 3 * pal.size());
  if (alphas > 0) put_chunk(out, "tRNS", alpha, alphas);
}

/// IDAT: the raw rows deflated straight into `out` (no copy), then the chunk's length and CRC.
void put_data(std::vector<std::uint8_t>& out, const std::vector<std::uint8_t>& raw, int strategy) {
  thread_local deflater z;
  const std::size_t at = begin_chunk(out, 0, "IDAT");
  const std::size_t n = z.compress(raw, strategy, out);
  for (int k = 0; k < 4; ++k) out[at - 4 + k] = static_cast<std::uint8_t>(n >> (24 - 8 * k));
  end_chunk(out, at);
}

}  // namespace

void encode_png(const image_view& img, std::vector<std::uint8_t>& out) {
  thread_local std::vector<std::uint8_t> raw;  // the filtered rows, kept from frame to frame
  out.clear();
  detail::palette_builder pal;
  int bits = 8;
  const bool indexed = indexed_rows(img, pal, raw, bits);
  const bool alpha = !indexed && !opaque(img);
  if (!indexed) truecolour_rows(img, alpha, raw);
  put_header(out, img, bits, indexed ? 3 : alpha ? 6 : 2);
  if (indexed) put_palette(out, pal);
  put_data(out, raw, indexed ? Z_RLE : Z_DEFAULT_STRATEGY);
  static const std::uint8_t none[1] = {0};
  put_chunk(out, "IEND", none, 0);
}

const char* png_encoder() { return "zlib"; }

}  // namespace shoal::viz
