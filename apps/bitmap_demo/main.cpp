// bitmap_demo: the hierarchical bitmap and its collaborative random walk at work.
//
// Fills a bitmap with a random fraction of set bits (on the device), then launches one thread
// per set bit plus 10% more. Every thread claims one bit with bitmap_ref::claim at the same
// time; the extra threads must come back empty-handed. The host then checks that every set bit
// was claimed exactly once, that exactly the surplus threads got bitmap_npos, and that the
// nested levels of the bitmap are consistent again. Exits 0 when all holds, 1 otherwise (or when
// the backend has no device), 2 on a bad command line.
//
// Device code stays in free functions: nvcc's extended lambdas may not live in private members.

#include <algorithm>
#include <bit>
#include <chrono>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "shoal/shoal.hpp"

namespace bitmap_demo {

constexpr std::uint64_t max_bits = std::uint64_t{1} << 36;  // what hierarchical_bitmap holds

struct options {
  std::uint64_t bits = std::uint64_t{1} << 24;
  double fill_percent = 1.0;
  std::uint64_t seed = 0x5eed;
};

void print_usage() {
  std::printf(
      "usage: bitmap_demo [--bits N] [--fill PCT] [--help]\n"
      "\n"
      "Fills a hierarchical bitmap of N bits with PCT percent of random set bits, then lets one\n"
      "thread per set bit (plus 10%% extra threads, which must fail) claim a bit concurrently with\n"
      "the collaborative random walk, and verifies the outcome on the host.\n"
      "\n"
      "  --bits N     number of bits, 1 .. 2^36; N may be written 2^K (default 2^24)\n"
      "  --fill PCT   percentage of bits initially set, 0 .. 100, may be fractional (default 1)\n"
      "  --help       print this text\n"
      "\n"
      "Exit status: 0 verified, 1 violation or no usable device, 2 bad command line.\n");
}

/// Thrown for a bad command line: one line of text, exit status 2.
struct usage_error {
  std::string what;
};

std::uint64_t parse_bits(std::string_view text) {
  const auto bad = [&] {
    return usage_error{"--bits needs a whole number from 1 to 2^36 (68719476736), got '" +
                       std::string(text) + "'"};
  };
  std::uint64_t value = 0;
  if (text.size() > 2 && text.substr(0, 2) == "2^") {
    unsigned exponent = 0;
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data() + 2, end, exponent);
    if (ec != std::errc{} || ptr != end || exponent > 36) throw bad();
    value = std::uint64_t{1} << exponent;
  } else {
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc{} || ptr != end) throw bad();
  }
  if (value < 1 || value > max_bits) throw bad();
  return value;
}

double parse_percent(std::string_view text) {
  std::string s(text);
  if (!s.empty() && s.back() == '%') s.pop_back();
  char* end = nullptr;
  const double v = s.empty() ? NAN : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < 0.0 || v > 100.0)
    throw usage_error{"--fill needs a percentage from 0 to 100, got '" + std::string(text) + "'"};
  return v;
}

options parse_options(int argc, char** argv) {
  options o;
  for (int k = 1; k < argc; ++k) {
    std::string_view arg = argv[k];
    std::string_view value;
    bool has_value = false;
    if (const auto eq = arg.find('='); arg.substr(0, 2) == "--" && eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    const auto take_value = [&]() -> std::string_view {
      if (has_value) return value;
      if (k + 1 >= argc) throw usage_error{std::string(arg) + " needs a value (see --help)"};
      return argv[++k];
    };
    if (arg == "--help" || arg == "-h") {
      print_usage();
      std::exit(0);
    } else if (arg == "--bits") {
      o.bits = parse_bits(take_value());
    } else if (arg == "--fill") {
      o.fill_percent = parse_percent(take_value());
    } else {
      throw usage_error{"unknown argument '" + std::string(argv[k]) + "' (see --help)"};
    }
  }
  return o;
}

/// Device-side fill: bit i is set when the i-th value of a splitmix64 stream falls below
/// fraction * 2^64, so the fill is random, reproducible and independent of the thread count.
/// Writes the leaf words only; the caller rebuilds the nested levels.
void fill_random(shoal::bitmap_ref bm, double fraction, std::uint64_t seed) {
  std::uint64_t* leaves = bm.level_words(0);
  const std::uint64_t bits = bm.size();
  const bool all = fraction >= 1.0;
  const std::uint64_t threshold =
      all ? 0 : static_cast<std::uint64_t>(std::ldexp(std::max(fraction, 0.0), 64));
  shoal::arch::for_each_index(bm.layout().words[0], [=] SHOAL_DEVICE(std::size_t w) {
    // Word w consumes values w*64+1 .. w*64+64 of the stream started at `seed`.
    shoal::walk_rng rng(seed + w * 64 * 0x9E3779B97F4A7C15ull);
    std::uint64_t v = 0;
    for (int b = 0; b < 64; ++b) {
      if (w * 64 + b >= bits) break;
      if (all || rng.next() < threshold) v |= std::uint64_t{1} << b;
    }
    leaves[w] = v;
  });
  shoal::arch::synchronize();
}

struct claim_run {
  std::vector<std::uint64_t> got;    ///< bit claimed by each thread, or bitmap_npos
  std::vector<std::uint32_t> rounds; ///< walk_probes::rounds of each thread
  double seconds = 0;
};

/// `threads` threads each claim one bit with the collaborative random walk, all at once.
claim_run claim_concurrently(shoal::bitmap_ref bm, std::uint64_t threads) {
  shoal::arch::device_buffer<std::uint64_t> d_got(threads);
  shoal::arch::device_buffer<std::uint32_t> d_rounds(threads);
  std::uint64_t* got = d_got.data();
  std::uint32_t* rounds = d_rounds.data();
  const auto start = std::chrono::steady_clock::now();
  shoal::arch::for_each_index(threads, [=] SHOAL_DEVICE(std::size_t i) {
    shoal::walk_rng rng = shoal::walk_rng::for_this_lane(i);
    shoal::walk_probes probes;
    got[i] = bm.claim(rng, &probes);
    rounds[i] = probes.rounds;
  });
  shoal::arch::synchronize();
  const auto stop = std::chrono::steady_clock::now();
  claim_run r;
  r.seconds = std::chrono::duration<double>(stop - start).count();
  r.got = d_got.download();
  r.rounds = d_rounds.download();
  return r;
}

std::uint64_t popcount_all(const std::vector<std::uint64_t>& words) {
  std::uint64_t n = 0;
  for (std::uint64_t w : words) n += static_cast<std::uint64_t>(std::popcount(w));
  return n;
}

int run(const options& opt) {
  shoal::arch::require_device();  // without a usable device: error line with the reason, exit 1
  const auto& device = shoal::arch::probe_device();
  std::printf("bitmap_demo: backend %s, %s\n", shoal::backend_name, device.description.c_str());

  shoal::hierarchical_bitmap bm(opt.bits);
  const shoal::bitmap_layout& layout = bm.layout();
  fill_random(bm.ref(), opt.fill_percent / 100.0, opt.seed);
  bm.rebuild_levels();

  const std::vector<std::uint64_t> before = bm.leaf_words();
  const std::uint64_t set_bits = popcount_all(before);
  const std::uint64_t extra = set_bits / 10 + (set_bits % 10 != 0) + (set_bits == 0);
  const std::uint64_t threads = set_bits + extra;
  std::printf("bitmap: %llu bits in %d levels (%llu words), %llu set (%.3f%%, asked %g%%)\n",
              static_cast<unsigned long long>(opt.bits), layout.levels,
              static_cast<unsigned long long>(layout.total_words),
              static_cast<unsigned long long>(set_bits),
              100.0 * static_cast<double>(set_bits) / static_cast<double>(opt.bits),
              opt.fill_percent);

  int violations = 0;
  const auto violation = [&](const std::string& what) {
    if (++violations <= 10) std::printf("VIOLATION: %s\n", what.c_str());
  };
  if (const std::uint64_t device_count = bm.count(); device_count != set_bits)
    violation("device count " + std::to_string(device_count) + " != host count " +
              std::to_string(set_bits) + " after the fill");
  if (const std::string c = bm.check_consistency(); !c.empty())
    violation("after rebuild_levels(): " + c);

  const claim_run r = claim_concurrently(bm.ref(), threads);

  // Host verification: claimed bits are in range, were set, and were handed out once each.
  std::vector<std::uint64_t> claimed(before.size(), 0);
  std::uint64_t ok = 0, empty_handed = 0, rounds_sum = 0;
  std::uint32_t rounds_max = 0;
  for (std::uint64_t t = 0; t < threads; ++t) {
    const std::uint64_t g = r.got[t];
    if (g == shoal::bitmap_npos) {
      ++empty_handed;
      continue;
    }
    const std::uint64_t bit = std::uint64_t{1} << (g % 64);
    if (g >= opt.bits) {
      violation("thread " + std::to_string(t) + " claimed bit " + std::to_string(g) +
                " past the end");
    } else if (!(before[g / 64] & bit)) {
      violation("thread " + std::to_string(t) + " claimed bit " + std::to_string(g) +
                " that was not set");
    } else if (claimed[g / 64] & bit) {
      violation("bit " + std::to_string(g) + " was claimed twice (again by thread " +
                std::to_string(t) + ")");
    } else {
      claimed[g / 64] |= bit;
      ++ok;
      rounds_sum += r.rounds[t];
      if (r.rounds[t] > rounds_max) rounds_max = r.rounds[t];
    }
  }
  if (ok != set_bits)
    violation(std::to_string(set_bits - ok) + " of " + std::to_string(set_bits) +
              " set bits were never claimed");
  if (empty_handed != extra)
    violation(std::to_string(empty_handed) + " threads got bitmap_npos, expected exactly the " +
              std::to_string(extra) + " extra threads");
  if (const std::uint64_t left = bm.count(); left != 0)
    violation(std::to_string(left) + " bits are still set after the claims");
  if (const std::string c = bm.check_consistency(); !c.empty())
    violation("after the claims: " + c);

  const double rate = r.seconds > 0 ? static_cast<double>(ok) / r.seconds : 0.0;
  const double mean_rounds = ok ? static_cast<double>(rounds_sum) / static_cast<double>(ok) : 0.0;
  std::printf("claim: %llu threads (%llu + %llu extra) in %.3f ms, %.2f M claims/s, "
              "mean %.2f probe rounds (max %u)\n",
              static_cast<unsigned long long>(threads), static_cast<unsigned long long>(set_bits),
              static_cast<unsigned long long>(extra), r.seconds * 1e3, rate / 1e6, mean_rounds,
              rounds_max);
  if (violations) {
    std::printf("FAILED: %d violation%s\n", violations, violations == 1 ? "" : "s");
    return 1;
  }
  std::printf("verified: each of the %llu set bits claimed exactly once, the %llu extra threads "
              "got bitmap_npos, levels consistent\n",
              static_cast<unsigned long long>(set_bits), static_cast<unsigned long long>(extra));
  return 0;
}

}  // namespace bitmap_demo

int main(int argc, char** argv) {
  bitmap_demo::options opt;
  try {
    opt = bitmap_demo::parse_options(argc, argv);
  } catch (const bitmap_demo::usage_error& e) {
    std::fprintf(stderr, "bitmap_demo: %s\n", e.what.c_str());
    return 2;
  }
  try {
    return bitmap_demo::run(opt);
  } catch (const shoal::error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: out of host memory (try fewer --bits or a lower --fill)\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  return 1;
}
