// Fuzzing the checkpoint loader: thousands of random mutations of a valid checkpoint (bit flips,
// overwritten and random bytes, cuts, insertions, deletions, interesting integers at aligned
// offsets). Each file must either load, or throw checkpoint_error, never anything else and never
// undefined behaviour (the test also runs under ASan/UBSan). Half of the mutated files get their
// checksums recomputed, so that the parser and the checks behind the checksums are reached too;
// a file that still loads must give a consistent heap (verify() == ""), and an unmutated one the
// same objects as the original.
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "checkpoint_model.hpp"
#include "shoal/checkpoint/crc32c.hpp"
#include "shoal/checkpoint/file.hpp"

namespace shoal::test::ckpt {
namespace {

/// Recomputes the header and whole-file checksums after an edit (when the file is long enough
/// to have them), so that the checks after them are reached.
void reseal(std::vector<std::byte>& f) {
  if (f.size() < checkpoint::header_bytes + checkpoint::trailer_bytes) return;
  const std::uint64_t size = f.size();
  std::memcpy(f.data() + 16, &size, 8);  // the size field too: a cut file is then "whole" again
  const std::uint32_t head = checkpoint::crc32c(std::span(f).first(28));
  std::memcpy(f.data() + 28, &head, 4);
  const std::uint32_t all = checkpoint::crc32c(std::span(f).first(f.size() - 8));
  std::memcpy(f.data() + f.size() - 8, &all, 4);
}

void mutate(std::mt19937_64& rng, std::vector<std::byte>& f) {
  auto at = [&] { return f.empty() ? std::size_t{0} : static_cast<std::size_t>(rng() % f.size()); };
  const int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 7) {
      case 0:  // a few bit flips
        for (int k = 1 + static_cast<int>(rng() % 8); k > 0 && !f.empty(); --k)
          f[at()] ^= std::byte{static_cast<unsigned char>(1u << (rng() % 8))};
        break;
      case 1: {  // a run of random bytes
        const std::size_t p = at(), n = std::min<std::size_t>(f.size() - p, 1 + rng() % 64);
        for (std::size_t i = 0; i < n; ++i) f[p + i] = std::byte{static_cast<unsigned char>(rng())};
        break;
      }
      case 2:  // cut
        f.resize(at());
        break;
      case 3: {  // insert bytes
        const std::size_t p = at();
        f.insert(f.begin() + static_cast<std::ptrdiff_t>(p), 1 + rng() % 16, std::byte{static_cast<unsigned char>(rng())});
        break;
      }
      case 4: {  // delete bytes
        const std::size_t p = at(), n = std::min<std::size_t>(f.size() - p, 1 + rng() % 32);
        f.erase(f.begin() + static_cast<std::ptrdiff_t>(p), f.begin() + static_cast<std::ptrdiff_t>(p + n));
        break;
      }
      default: {  // an interesting integer at an aligned offset: lengths, counts, indices, pointers
        static constexpr std::uint64_t values[] = {0, 1, 2, 7, 0xFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
                                                   0x100000000, ~0ull, ~0ull >> 1, 1ull << 47, 1ull << 59};
        const std::uint64_t v = values[rng() % std::size(values)];
        const std::size_t width = rng() % 2 ? 4 : 8;
        if (f.size() < width) break;
        const std::size_t p = at() / width * width;
        if (p + width <= f.size()) std::memcpy(f.data() + p, &v, width);
        break;
      }
    }
  }
}

TEST(CheckpointFuzz, EveryMutationLoadsConsistentlyOrThrowsCheckpointError) {
  SHOAL_REQUIRE_DEVICE();
  constexpr std::uint64_t n = 60;
  std::vector<std::byte> good;
  std::vector<object_state> expected;
  {
    GraphRuntime rt(256 << 10);
    arch::device_buffer<Link*> roots(n);
    build_graph(rt, roots.data(), n);
    expected = dump(rt, n);
    checkpoint::writer w;
    rt.save_heap(w);
    rt.save_pointers(w, "roots", roots.data(), n);
    w.value("step", std::uint64_t{99});
    good = w.bytes();
  }
  GraphRuntime rt(256 << 10);
  arch::device_buffer<Link*> roots(n);
  std::mt19937_64 rng(8);
  constexpr int mutations = 3000;
  int rejected = 0, loaded = 0, unchanged = 0;
  for (int i = 0; i < mutations; ++i) {
    std::vector<std::byte> f = good;
    mutate(rng, f);
    const bool resealed = i % 2 == 1;
    if (resealed) reseal(f);
    try {
      const checkpoint::reader r(f, "checkpoint 'fuzz'");
      rt.load_heap(r);
      rt.load_pointers(r, "roots", roots.data(), n);
      (void)r.value<std::uint64_t>("step");
      ++loaded;
      ASSERT_EQ(rt.verify(), "") << "mutation " << i;
      if (f == good) {
        ++unchanged;
        ASSERT_EQ(dump(rt, n), expected) << "mutation " << i;
      } else {
        // A mutation that survives the checksum is a 2^-32 event: only resealed files may load.
        ASSERT_TRUE(resealed) << "mutation " << i << " passed the checksum";
      }
    } catch (const checkpoint_error& e) {
      ++rejected;
      ASSERT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
  std::printf("checkpoint fuzz: %d mutated files: %d rejected with checkpoint_error, %d loaded (%d unchanged, "
              "%d resealed with valid structure), verify() clean after every load\n",
              mutations, rejected, loaded, unchanged, loaded - unchanged);
  EXPECT_GT(rejected, mutations / 2);
  // The loaded heap still works after thousands of loads and refusals.
  rt.clear();
  build_graph(rt, roots.data(), n);
  EXPECT_EQ(dump(rt, n), expected);
  EXPECT_EQ(rt.verify(), "");
}

}  // namespace
}  // namespace shoal::test::ckpt
