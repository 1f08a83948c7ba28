#pragma once
/// @file
/// Reading greyscale PGM images (netpbm: "P2" plain text, "P5" binary) as untrusted input, for
/// models that start from a picture: DynaSOAr's Game of Life datasets are P2 files in which a
/// black pixel (0) is a live cell.
///
///   const io::pgm_image img = io::read_pgm("tm.pgm", std::uint64_t{1} << 28);
///   for (std::uint64_t i : io::pixels_equal_to(img, 0)) ...   // cell i % width, i / width
///
/// Every problem is an io::pgm_error whose message is one line naming the file and what is wrong
/// (a bad header, a sample out of range, a file that ends early or holds more than one image, a
/// size over the caller's limit), thrown before anything of that size is allocated.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace shoal::io {

/// A PGM file that cannot be read: the message names the file and the problem.
class pgm_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A greyscale image: `pixels` row by row from the top, each in [0, maxval].
struct pgm_image {
  std::uint32_t width = 0;   ///< pixels per row, at least 1
  std::uint32_t height = 0;  ///< rows, at least 1
  std::uint32_t maxval = 0;  ///< the largest sample value the file allows, 1 to 65535
  std::vector<std::uint16_t> pixels;  ///< width × height samples, row y at y × width
  /// The sample at column x of row y (0, 0 is the top left).
  std::uint16_t at(std::uint32_t x, std::uint32_t y) const { return pixels[std::size_t{y} * width + x]; }
};

namespace detail {

class pgm_parser {
 public:
  pgm_parser(std::string_view bytes, std::string name) : s_(bytes), name_(std::move(name)) {}

  pgm_image parse(std::uint64_t max_pixels) {
    if (s_.size() < 2 || s_[0] != 'P' || (s_[1] != '2' && s_[1] != '5'))
      fail("not a PGM file (it must start with P2 or P5)");
    const bool plain = s_[1] == '2';
    at_ = 2;
    if (at_ < s_.size() && !space(s_[at_]) && s_[at_] != '#') fail("no whitespace after the magic number");
    pgm_image img;
    const std::uint64_t w = header_number("width"), h = header_number("height");
    if (w == 0 || h == 0) fail("empty image (" + std::to_string(w) + "x" + std::to_string(h) + ")");
    // Both fit in 32 bits (header_number's bound), so the product cannot overflow.
    if (w * h > max_pixels)
      fail("image of " + std::to_string(w) + "x" + std::to_string(h) + " pixels, more than the " +
           std::to_string(max_pixels) + " allowed");
    const std::uint64_t maxval = header_number("maxval");
    if (maxval == 0 || maxval > 65535) fail("maxval " + std::to_string(maxval) + " (must be 1 to 65535)");
    img.width = static_cast<std::uint32_t>(w), img.height = static_cast<std::uint32_t>(h);
    img.maxval = static_cast<std::uint32_t>(maxval);
    const std::uint64_t n = w * h;
    if (plain) {
      // Each plain sample takes at least two bytes (a digit and a separator, but the last):
      // a file too short for the raster is refused before the raster is allocated.
      if (s_.size() - at_ + 1 < 2 * n) short_file(0, n);
      img.pixels.resize(n);
      for (std::uint64_t i = 0; i < n; ++i) {
        skip_space_and_comments();
        if (at_ >= s_.size()) short_file(i, n);
        const std::uint64_t v = number("pixel " + std::to_string(i));
        if (v > maxval) fail("pixel " + std::to_string(i) + " is " + std::to_string(v) + ", above maxval " + std::to_string(maxval));
        img.pixels[i] = static_cast<std::uint16_t>(v);
      }
      skip_space_and_comments();
      if (at_ != s_.size()) fail("data after the last pixel (one image per file)");
      return img;
    }
    // Binary: exactly one whitespace byte after maxval, then the raster.
    if (at_ >= s_.size() || !space(s_[at_])) fail("no whitespace after maxval");
    ++at_;
    const std::uint64_t bytes = maxval < 256 ? 1 : 2;
    const std::uint64_t have = s_.size() - at_;
    if (have < n * bytes) short_file(have / bytes, n);
    if (have > n * bytes) fail("data after the last pixel (one image per file)");
    img.pixels.resize(n);
    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint64_t v = static_cast<unsigned char>(s_[at_ + i * bytes]);
      if (bytes == 2) v = v << 8 | static_cast<unsigned char>(s_[at_ + i * bytes + 1]);
      if (v > maxval) fail("pixel " + std::to_string(i) + " is " + std::to_string(v) + ", above maxval " + std::to_string(maxval));
      img.pixels[i] = static_cast<std::uint16_t>(v);
    }
    return img;
  }

 private:
  static bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
  static bool digit(char c) { return c >= '0' && c <= '9'; }

  [[noreturn]] void fail(const std::string& what) const { throw pgm_error(name_ + ": " + what); }
  [[noreturn]] void short_file(std::uint64_t got, std::uint64_t n) const {
    fail("the file ends after " + std::to_string(got) + " of " + std::to_string(n) + " pixels");
  }

  void skip_space_and_comments() {
    while (at_ < s_.size()) {
      if (space(s_[at_])) {
        ++at_;
      } else if (s_[at_] == '#') {
        while (at_ < s_.size() && s_[at_] != '\n' && s_[at_] != '\r') ++at_;
      } else {
        return;
      }
    }
  }
  /// A decimal number of at most 10 digits and below 2^32, followed by whitespace, '#' or the end.
  std::uint64_t number(const std::string& what) {
    if (at_ >= s_.size() || !digit(s_[at_])) fail(what + ": expected a number");
    std::uint64_t v = 0;
    int digits = 0;
    for (; at_ < s_.size() && digit(s_[at_]); ++at_, ++digits) {
      if (digits == 10) fail(what + ": number too long");
      v = v * 10 + static_cast<std::uint64_t>(s_[at_] - '0');
    }
    if (v > 0xFFFFFFFFull) fail(what + ": number too large");
    if (at_ < s_.size() && !space(s_[at_]) && s_[at_] != '#') fail(what + ": expected a number");
    return v;
  }
  std::uint64_t header_number(const char* what) {
    skip_space_and_comments();
    if (at_ >= s_.size()) fail(std::string("the header ends before its ") + what);
    return number(what);
  }

  std::string_view s_;
  std::string name_;
  std::size_t at_ = 0;
};

}  // namespace detail

/// Parses the bytes of a PGM file; `name` heads the error messages. Refuses more than
/// `max_pixels` pixels (width × height) before allocating them.
inline pgm_image parse_pgm(std::string_view bytes, const std::string& name, std::uint64_t max_pixels) {
  return detail::pgm_parser(bytes, name).parse(max_pixels);
}

/// Reads and parses a PGM file (see parse_pgm). A file larger than the largest plain PGM of
/// `max_pixels` pixels could be is refused before it is read, and so is anything that is not a
/// regular file: a FIFO would block the open (and the program) until someone wrote to it, a
/// device such as /dev/zero would be read to the size limit.
inline pgm_image read_pgm(const std::string& path, std::uint64_t max_pixels) {
  // O_NONBLOCK: opening a FIFO returns at once (it changes nothing for a regular file).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw pgm_error(path + ": cannot open the file");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw pgm_error(path + ": not a regular file");
  }
  std::FILE* f = ::fdopen(fd, "rb");
  if (f == nullptr) {
    ::close(fd);
    throw pgm_error(path + ": cannot open the file");
  }
  std::string bytes;
  // A plain sample is at most 5 digits and, with spaces and comments, rarely more than a few
  // bytes; 16 per pixel plus a header and comments of 1 MiB is beyond any real file.
  const std::uint64_t limit = max_pixels < (std::uint64_t{1} << 40) ? max_pixels * 16 + (1u << 20) : ~std::uint64_t{0};
  char buffer[1 << 16];
  for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, f)) > 0;) {
    bytes.append(buffer, got);
    if (bytes.size() > limit) {
      std::fclose(f);
      throw pgm_error(path + ": larger than a PGM of " + std::to_string(max_pixels) + " pixels can be");
    }
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw pgm_error(path + ": read error");
  return parse_pgm(bytes, path, max_pixels);
}

/// Indices (y × width + x) of the pixels equal to `value`, in row order (DynaSOAr's datasets:
/// the live cells are the black pixels, value 0).
inline std::vector<std::uint64_t> pixels_equal_to(const pgm_image& img, std::uint16_t value) {
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < img.pixels.size(); ++i)
    if (img.pixels[i] == value) out.push_back(i);
  return out;
}

}  // namespace shoal::io
