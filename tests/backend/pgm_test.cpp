// PGM reading (shoal/io/pgm.hpp): plain and binary images, DynaSOAr's dataset layout, and every
// kind of damage a file can carry ending in one pgm_error line naming the file, never a crash,
// another exception or an allocation of the size a damaged header claims. Host code only.
#include "shoal/io/pgm.hpp"

#include <sys/stat.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace shoal::test {
namespace {

namespace fs = std::filesystem;
using io::parse_pgm;
using io::pgm_error;

constexpr std::uint64_t lots = std::uint64_t{1} << 24;

/// The message of the pgm_error that parsing `bytes` throws ("" if it parses).
std::string error_of(const std::string& bytes, std::uint64_t max_pixels = lots) {
  try {
    (void)parse_pgm(bytes, "f.pgm", max_pixels);
  } catch (const pgm_error& e) {
    return e.what();
  }
  return "";
}

TEST(Pgm, PlainImageWithCommentsAsDynasoarWritesThem) {
  // DynaSOAr's datasets: magic, a comment line, size, maxval, then rows; black (0) is alive.
  const auto img = parse_pgm("P2\n# made by hand\n4 3\n# a comment in the header\n255\n"
                             "255 0 255 255\n0 0 255 255 # and one at a row's end\n255 255 255 7\n",
                             "f.pgm", lots);
  ASSERT_EQ(img.width, 4u);
  ASSERT_EQ(img.height, 3u);
  EXPECT_EQ(img.maxval, 255u);
  ASSERT_EQ(img.pixels.size(), 12u);
  EXPECT_EQ(img.at(1, 0), 0u);
  EXPECT_EQ(img.at(3, 2), 7u);
  EXPECT_EQ(io::pixels_equal_to(img, 0), (std::vector<std::uint64_t>{1, 4, 5}));
}

TEST(Pgm, BinaryImagesOfOneAndTwoBytesPerSample) {
  std::string one = "P5 3 2 200\n";
  for (int v : {0, 1, 2, 198, 199, 200}) one += static_cast<char>(v);
  const auto a = parse_pgm(one, "a.pgm", lots);
  EXPECT_EQ(a.width, 3u);
  EXPECT_EQ(a.at(2, 1), 200u);
  EXPECT_EQ(a.at(0, 1), 198u);
  // maxval >= 256: two bytes per sample, most significant first.
  std::string two = "P5\n2 1\n65535\n";
  for (int v : {0x12, 0x34, 0xFF, 0xFE}) two += static_cast<char>(v);
  const auto b = parse_pgm(two, "b.pgm", lots);
  EXPECT_EQ(b.at(0, 0), 0x1234u);
  EXPECT_EQ(b.at(1, 0), 0xFFFEu);
}

TEST(Pgm, DamagedFilesAreOneClearError) {
  const struct {
    std::string bytes, says;
  } cases[] = {
      {"", "must start with P2 or P5"},
      {"P6 1 1 255\n\x01\x02\x03", "must start with P2 or P5"},
      {"P2", "header ends before its width"},
      {"P2x 1 1 1\n0", "no whitespace after the magic"},
      {"P2 4", "header ends before its height"},
      {"P2 4 4", "header ends before its maxval"},
      {"P2 a 4 1\n", "width: expected a number"},
      {"P2 4x 4 1\n", "width: expected a number"},
      {"P2 0 4 1\n", "empty image"},
      {"P2 4 4 0\n", "maxval 0"},
      {"P2 1 1 65536\n0", "maxval 65536"},
      {"P2 99999999999 1 1\n", "number too long"},
      {"P2 4294967296 1 1\n", "number too large"},
      {"P2 100000 100000 1\n0 0", "more than the 16777216 allowed"},
      {"P2 2 2 1\n0 1 1", "ends after 0 of 4 pixels"},  // refused before the raster is read
      {"P2 3 1 1\n0  1 ", "ends after 2 of 3 pixels"},
      {"P2 2 1 9\n3 10", "pixel 1 is 10, above maxval 9"},
      {"P2 2 1 9\n3 -1", "pixel 1: expected a number"},
      {"P2 2 1 9\n3 4 5", "data after the last pixel"},
      {"P5 2 1 9", "no whitespace after maxval"},
      {"P5 2 2 9\n\x01\x02", "ends after 2 of 4 pixels"},
      {"P5 1 1 9\n\x01\x02", "data after the last pixel"},
      {"P5 1 1 9\n\x0a", "pixel 0 is 10, above maxval 9"},
  };
  for (const auto& c : cases) {
    const std::string e = error_of(c.bytes);
    EXPECT_NE(e.find(c.says), std::string::npos) << "file <" << c.bytes << ">: got \"" << e << "\"";
    EXPECT_EQ(e.rfind("f.pgm: ", 0), 0u) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

TEST(Pgm, EveryMutationOfAFileParsesConsistentlyOrIsOneError) {
  std::mt19937_64 rng(2026);
  std::string plain = "P2\n# glider\n7 5\n255\n";
  std::string binary = "P5\n7 5\n255\n";
  for (int i = 0; i < 35; ++i) {
    const int v = (i == 8 || i == 16 || i == 22 || i == 23 || i == 24) ? 0 : 255;
    plain += std::to_string(v) + (i % 7 == 6 ? "\n" : " ");
    binary += static_cast<char>(v);
  }
  const char alphabet[] = "P25 0123456789#\n\t-x\xff";
  int parsed = 0, refused = 0;
  for (int k = 0; k < 6000; ++k) {
    std::string s = k % 2 ? plain : binary;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const std::size_t at = rng() % s.size();
      switch (rng() % 4) {
        case 0: s[at] = alphabet[rng() % (sizeof alphabet - 1)]; break;
        case 1: s.erase(at, 1 + rng() % 3); break;
        case 2: s.insert(at, 1, alphabet[rng() % (sizeof alphabet - 1)]); break;
        default: s.resize(at); break;  // cut short
      }
    }
    try {
      const auto img = parse_pgm(s, "f.pgm", 1000);
      ++parsed;
      ASSERT_EQ(img.pixels.size(), std::uint64_t{img.width} * img.height) << s;
      ASSERT_GE(img.maxval, 1u);
      for (const auto p : img.pixels) ASSERT_LE(p, img.maxval) << s;
    } catch (const pgm_error& e) {
      ++refused;
      const std::string m = e.what();
      ASSERT_EQ(m.rfind("f.pgm: ", 0), 0u) << m;
      ASSERT_EQ(m.find('\n'), std::string::npos) << m;
    }
  }
  // Both outcomes occur, or the mutations tested one path only.
  EXPECT_GT(parsed, 100);
  EXPECT_GT(refused, 1000);
}

TEST(Pgm, ReadsAFileAndRefusesMissingOrOversizedOnes) {
  const fs::path dir = fs::temp_directory_path() / ("shoal_pgm_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path good = dir / "blinker.pgm";
  std::ofstream(good) << "P2\n# blinker\n3 3\n1\n1 0 1\n1 0 1\n1 0 1\n";
  const auto img = io::read_pgm(good.string(), 9);
  EXPECT_EQ(io::pixels_equal_to(img, 0), (std::vector<std::uint64_t>{1, 4, 7}));
  try {
    (void)io::read_pgm(good.string(), 8);
    ADD_FAILURE() << "9 pixels read with a limit of 8";
  } catch (const pgm_error& e) {
    EXPECT_NE(std::string(e.what()).find("more than the 8 allowed"), std::string::npos) << e.what();
  }
  // A file far larger than any PGM of the allowed size is refused without being parsed.
  const fs::path big = dir / "big.pgm";
  std::ofstream(big) << "P2 1 1 1\n0\n" << std::string((1u << 20) + 64, ' ');
  try {
    (void)io::read_pgm(big.string(), 1);
    ADD_FAILURE() << "an oversized file was read";
  } catch (const pgm_error& e) {
    EXPECT_NE(std::string(e.what()).find("larger than a PGM of 1 pixels can be"), std::string::npos) << e.what();
  }
  try {
    (void)io::read_pgm((dir / "missing.pgm").string(), 9);
    ADD_FAILURE() << "a missing file was read";
  } catch (const pgm_error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.pgm: cannot open the file"), std::string::npos) << e.what();
  }
  // Not regular files: a FIFO (whose open would wait for a writer forever) and a directory.
  const fs::path fifo = dir / "fifo.pgm";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  for (const fs::path& odd : {fifo, dir}) {
    try {
      (void)io::read_pgm(odd.string(), 9);
      ADD_FAILURE() << odd << " was read";
    } catch (const pgm_error& e) {
      EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace shoal::test
