// Checkpoints: CRC-32C, the container (sections, atomic writes), and the heap's save and load:
// every live object equal after a round trip, pointers relocated into a heap at another
// address, statistics and verify() equal; and every damaged or mismatched file rejected with
// one checkpoint_error, leaving the heap it was loaded into untouched.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "checkpoint_model.hpp"
#include "heap_model.hpp"
#include "shoal/checkpoint/crc32c.hpp"
#include "shoal/checkpoint/file.hpp"

namespace shoal::test::ckpt {
namespace other {
// Graph's class names with one field of another type: its checkpoints must not mix with Graph's.
class Link;
class Item;
class Coin;
class Gem;
using Graph = shoal::heap<Link, Item, Coin, Gem>;
class Item : public object<Graph, Item> {
 public:
  SHOAL_ABSTRACT(Item)
  SHOAL_FIELDS(Item, (long long, id), (Item*, twin))
};
class Coin : public object<Graph, Coin, Item> {
 public:
  SHOAL_FIELDS(Coin, (float, weight), (bool, shiny))
};
class Gem : public object<Graph, Gem, Item> {
 public:
  SHOAL_FIELDS(Gem, (rgb, colour), (shape, cut), (std::uint8_t[5], facets))
};
class Link : public object<Graph, Link> {
 public:
  SHOAL_FIELDS(Link, (long long, id), (Link*, next), (Item*[3], items), (std::int16_t, hops))
};
}  // namespace other

namespace {

namespace fs = std::filesystem;

// What can be checkpointed is decided at compile time: the heap test model has a field that
// points to a host struct (Animal::counts), which would dangle after a load.
static_assert(checkpoint::savable<Graph>);
static_assert(!checkpoint::savable<TestHeap>);

std::vector<std::byte> text_bytes(const char* s) {
  return std::vector<std::byte>(reinterpret_cast<const std::byte*>(s), reinterpret_cast<const std::byte*>(s) + std::strlen(s));
}

TEST(Crc32c, KnownAnswersAndChaining) {
  EXPECT_EQ(checkpoint::crc32c(text_bytes("123456789")), 0xE3069283u);  // the published check value
  EXPECT_EQ(checkpoint::crc32c({}), 0u);
  const std::vector<std::byte> zeros(32, std::byte{0});
  EXPECT_EQ(checkpoint::crc32c(zeros), 0x8A9136AAu);  // RFC 3720, B.4
  const std::vector<std::byte> ones(32, std::byte{0xFF});
  EXPECT_EQ(checkpoint::crc32c(ones), 0x62A8AB43u);
  const auto all = text_bytes("The quick brown fox jumps over the lazy dog, 0123456789");
  for (std::size_t cut = 0; cut <= all.size(); ++cut) {
    const std::span<const std::byte> s(all);
    EXPECT_EQ(checkpoint::crc32c(s.subspan(cut), checkpoint::crc32c(s.first(cut))), checkpoint::crc32c(all)) << cut;
  }
}

fs::path temp_dir() {
  const fs::path d = fs::temp_directory_path() / ("shoal_ckpt_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

TEST(CheckpointFile, SectionsRoundTrip) {
  checkpoint::writer w;
  w.value("step", std::uint64_t{12345});
  w.blob("empty", {});
  w.blob("text", text_bytes("hello"));
  EXPECT_THROW(w.blob("text", {}), checkpoint_error);  // names are unique
  EXPECT_THROW(w.blob("", {}), checkpoint_error);
  const checkpoint::reader r(w.bytes(), "memory");
  EXPECT_EQ(r.value<std::uint64_t>("step"), 12345u);
  EXPECT_TRUE(r.blob("empty").empty());
  EXPECT_EQ(std::vector<std::byte>(r.blob("text").begin(), r.blob("text").end()), text_bytes("hello"));
  EXPECT_FALSE(r.has("missing"));
  EXPECT_THROW(r.blob("missing"), checkpoint_error);
  EXPECT_THROW(r.value<std::uint32_t>("step"), checkpoint_error);  // wrong size
  EXPECT_THROW(r.section(checkpoint::section_kind::heap, "step"), checkpoint_error);  // wrong kind
}

TEST(CheckpointFile, CommitReplacesAtomically) {
  const fs::path dir = temp_dir();
  const fs::path path = dir / "atomic.ckpt";
  checkpoint::writer a, b;
  a.value("v", 1);
  b.value("v", 2);
  a.commit(path.string());
  // A reader of the old file keeps reading the old file: commit renames a new file over it
  // instead of rewriting it in place (which a crash could leave half written).
  std::ifstream old(path, std::ios::binary);
  b.commit(path.string());
  std::vector<char> old_bytes((std::istreambuf_iterator<char>(old)), std::istreambuf_iterator<char>());
  std::vector<std::byte> expect = a.bytes();
  ASSERT_EQ(old_bytes.size(), expect.size());
  EXPECT_EQ(std::memcmp(old_bytes.data(), expect.data(), expect.size()), 0);
  EXPECT_EQ(checkpoint::reader(path.string()).value<int>("v"), 2);
  // No temporary file is left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.path().filename().string().rfind("atomic.ckpt", 0) == 0;
  EXPECT_EQ(files, 1);
  // A write that fails (no such directory) throws and leaves nothing.
  EXPECT_THROW(b.commit((dir / "no" / "such" / "dir.ckpt").string()), checkpoint_error);
  fs::remove_all(dir);
}

struct built {
  GraphRuntime rt;
  arch::device_buffer<Link*> roots;
  std::uint64_t n;
};

constexpr std::uint64_t graph_links = 3000;

TEST(Checkpoint, RoundTripKeepsEveryObjectAndRelocatesPointers) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint64_t n = graph_links;
  GraphRuntime rt(4 << 20);
  arch::device_buffer<Link*> roots(n);
  build_graph(rt, roots.data(), n);
  ASSERT_EQ(rt.verify(), "");
  const auto before = dump(rt, n);
  const auto before_roots = root_ids(rt, roots.data(), n);
  const heap_stats stats = rt.stats();
  ASSERT_GT(stats.live(), n);

  const fs::path path = temp_dir() / "graph.ckpt";
  checkpoint::writer w;
  rt.save_heap(w);
  rt.save_pointers(w, "roots", roots.data(), n);
  w.value("links", n);
  w.commit(path.string());

  // Another heap at another address: a buffer allocated first pushes it elsewhere, and the old
  // heap still exists, so no address can be reused by accident.
  arch::device_buffer<std::byte> elsewhere(3 << 20);
  GraphRuntime copy(4 << 20);
  ASSERT_NE(copy.view().data, rt.view().data);
  arch::device_buffer<Link*> copy_roots(n);
  const checkpoint::reader r(path.string());
  copy.load_heap(r);
  copy.load_pointers(r, "roots", copy_roots.data(), n);
  EXPECT_EQ(r.value<std::uint64_t>("links"), n);

  EXPECT_EQ(copy.verify(), "");
  EXPECT_EQ(dump(copy, n), before);
  EXPECT_EQ(root_ids(copy, copy_roots.data(), n), before_roots);
  const heap_stats s = copy.stats();
  EXPECT_EQ(s.blocks, stats.blocks);
  EXPECT_EQ(s.free_blocks, stats.free_blocks);
  EXPECT_EQ(s.fill_histogram, stats.fill_histogram);
  for (std::size_t t = 0; t < s.types.size(); ++t) {
    EXPECT_EQ(s.types[t].live, stats.types[t].live) << t;
    EXPECT_EQ(s.types[t].blocks, stats.types[t].blocks) << t;
  }
  // Every pointer of the copy lies in the copy's heap: relocated, not copied.
  std::vector<Link*> host_roots = copy_roots.download();
  const auto lo = reinterpret_cast<std::uintptr_t>(copy.view().data);
  const auto hi = lo + copy.blocks() * copy.block_bytes();
  for (Link* l : host_roots)
    if (l != nullptr) {
      const auto a = detail::block_address_of(detail::bits_of(l));
      EXPECT_TRUE(a >= lo && a < hi);
    }
  // The loaded heap keeps working: build another graph in it, beside the loaded one.
  arch::device_buffer<Link*> more(n);
  build_graph(copy, more.data(), n);
  EXPECT_EQ(copy.verify(), "");
  EXPECT_EQ(copy.stats().live(), 2 * stats.live());
  fs::remove_all(path.parent_path());
}

// A registered array is saved by save_heap and filled by load_heap, with no call of its own; a
// checkpoint without its section is refused before anything changes.
TEST(Checkpoint, RegisteredPointerArraysTravelWithTheHeap) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint64_t n = graph_links;
  GraphRuntime rt(4 << 20);
  arch::device_buffer<Link*> roots(n);
  build_graph(rt, roots.data(), n);
  rt.register_pointers("roots", roots.data(), n);
  const auto before = dump(rt, n);
  const auto before_roots = root_ids(rt, roots.data(), n);
  checkpoint::writer w;
  rt.save_heap(w);
  const checkpoint::reader r(w.bytes(), "checkpoint 'registered'");

  arch::device_buffer<std::byte> elsewhere(3 << 20);
  GraphRuntime copy(4 << 20);
  arch::device_buffer<Link*> copy_roots(n);
  copy.register_pointers("roots", copy_roots.data(), n);
  copy.load_heap(r);
  EXPECT_EQ(copy.verify(), "");
  EXPECT_EQ(dump(copy, n), before);
  EXPECT_EQ(root_ids(copy, copy_roots.data(), n), before_roots) << "filled by load_heap, relocated";

  // Another registered array the checkpoint lacks: refused, and neither heap nor array changes.
  GraphRuntime empty(4 << 20);
  arch::device_buffer<Link*> a(n), b(4);
  std::vector<Link*> nulls(n, nullptr);
  a.upload(nulls);
  empty.register_pointers("roots", a.data(), n);
  empty.register_pointers("more", b.data(), 4);
  try {
    empty.load_heap(r);
    ADD_FAILURE() << "loaded a checkpoint without the registered section 'more'";
  } catch (const checkpoint_error& e) {
    EXPECT_NE(std::string(e.what()).find("more"), std::string::npos) << e.what();
  }
  EXPECT_EQ(empty.stats().live(), 0u);
  EXPECT_EQ(a.download(), nulls) << "the arrays are filled only once every section passed";
  // A wrong length is refused the same way.
  empty.unregister_pointers(b.data());
  empty.register_pointers("roots", a.data(), n - 1);
  EXPECT_THROW(empty.load_heap(r), checkpoint_error);
  EXPECT_EQ(empty.stats().live(), 0u);
  // One name, one array.
  EXPECT_THROW(empty.register_pointers("roots", b.data(), 4), error);
}

TEST(Checkpoint, RuntimeSaveAndStaticLoadWithUserBlob) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint64_t n = graph_links;
  const fs::path path = temp_dir() / "static.ckpt";
  std::vector<object_state> before;
  const auto user = text_bytes("rng=7 step=42");
  {
    GraphRuntime rt(4 << 20);
    arch::device_buffer<Link*> roots(n);
    build_graph(rt, roots.data(), n);
    before = dump(rt, n);
    rt.save(path.string(), user);
  }
  arch::device_buffer<std::byte> elsewhere(5 << 20);
  std::vector<std::byte> blob;
  GraphRuntime rt = GraphRuntime::load(path.string(), &blob);
  EXPECT_EQ(blob, user);
  EXPECT_EQ(rt.heap_bytes(), std::uint64_t{4} << 20);
  EXPECT_EQ(rt.verify(), "");
  EXPECT_EQ(dump(rt, n), before);
  // A larger heap may be asked for; the objects keep their blocks.
  GraphRuntime big = GraphRuntime::load(path.string(), nullptr, 16 << 20);
  EXPECT_GT(big.blocks(), rt.blocks());
  EXPECT_EQ(dump(big, n), before);
  EXPECT_EQ(big.verify(), "");
  fs::remove_all(path.parent_path());
}

TEST(Checkpoint, HeapTooSmallIsRefusedAndLeftUnchanged) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint64_t n = graph_links;
  GraphRuntime rt(4 << 20);
  arch::device_buffer<Link*> roots(n);
  build_graph(rt, roots.data(), n);
  checkpoint::writer w;
  rt.save_heap(w);
  const checkpoint::reader r(w.bytes(), "memory");

  GraphRuntime tiny(std::size_t{256} << 10);  // holds a block on both backends (cuda counters are larger), but fewer blocks than the checkpoint has in use: no packing helps
  arch::device_buffer<Link*> few(10);
  build_graph(tiny, few.data(), 10);
  const auto tiny_before = dump(tiny, 10);
  try {
    tiny.load_heap(r);
    FAIL() << "a heap too small for the checkpoint was accepted";
  } catch (const checkpoint_error& e) {
    EXPECT_NE(std::string(e.what()).find("needs a heap of at least"), std::string::npos) << e.what();
  }
  EXPECT_EQ(tiny.verify(), "");
  EXPECT_EQ(dump(tiny, 10), tiny_before);
}

TEST(Checkpoint, FewerBlocksThanTheHighestUsedOnePacksThemInOrder) {
  // Blocks are opened at random, so a heap's blocks in use spread over all of it; the other
  // backend's larger bookkeeping leaves fewer blocks in the same bytes. Such a load packs the
  // blocks into the lowest ones, in their order, and relocates pointers to where they went.
  SHOAL_REQUIRE_DEVICE();
  const std::uint64_t n = graph_links;
  GraphRuntime rt(4 << 20);
  arch::device_buffer<Link*> roots(n);
  build_graph(rt, roots.data(), n);
  const auto before = dump(rt, n);
  const auto before_roots = root_ids(rt, roots.data(), n);
  checkpoint::writer w;
  rt.save_heap(w);
  rt.save_pointers(w, "roots", roots.data(), n);
  const checkpoint::reader r(w.bytes(), "memory");
  const auto img = checkpoint::detail::parse_heap<Graph>(r.section(checkpoint::section_kind::heap, "heap"), "x");

  GraphRuntime small(std::size_t{3} << 20);
  ASSERT_GT(img.info.blocks_needed, small.blocks()) << "the saved blocks did not spread: nothing to pack";
  ASSERT_LE(img.index.size(), small.blocks());
  arch::device_buffer<Link*> small_roots(n);
  small.load_heap(r);
  small.load_pointers(r, "roots", small_roots.data(), n);
  EXPECT_EQ(small.verify(), "");
  EXPECT_EQ(dump(small, n), before);
  EXPECT_EQ(root_ids(small, small_roots.data(), n), before_roots);
  EXPECT_EQ(small.stats().blocks - small.stats().free_blocks, img.index.size());
  // Packed in order: the i-th block in use is block i.
  const std::vector<Link*> placed = small_roots.download();
  const auto first = reinterpret_cast<std::uintptr_t>(small.view().data);
  for (Link* l : placed)
    if (l != nullptr) EXPECT_LT((detail::block_address_of(detail::bits_of(l)) - first) / small.block_bytes(), img.index.size());
}

TEST(Checkpoint, PointersThatAreNotIntoTheHeapAreNotSaved) {
  SHOAL_REQUIRE_DEVICE();
  GraphRuntime rt(1 << 20);
  arch::device_buffer<Link*> roots(4);
  build_graph(rt, roots.data(), 4);
  std::vector<Link*> bad = roots.download();
  bad[3] = reinterpret_cast<Link*>(std::uintptr_t{0x1000} | (std::uint64_t{63} << detail::capacity_shift));
  roots.upload(bad);
  checkpoint::writer w;
  EXPECT_THROW(rt.save_pointers(w, "roots", roots.data(), 4), checkpoint_error);
  bad[3] = nullptr;
  roots.upload(bad);
  EXPECT_NO_THROW(rt.save_pointers(w, "roots", roots.data(), 4));
  arch::device_buffer<Link*> other(5);
  const checkpoint::reader r = [&] { rt.save_heap(w); return checkpoint::reader(w.bytes(), "memory"); }();
  EXPECT_THROW(rt.load_pointers(r, "roots", other.data(), 5), checkpoint_error);  // count differs
}

/// One bad file: the load throws checkpoint_error (never anything else), whose message names the
/// file and contains `mention`.
void expect_rejected(const std::vector<std::byte>& file, const std::string& mention) {
  try {
    const checkpoint::reader r(file, "checkpoint 'test'");
    GraphRuntime rt(4 << 20);
    rt.load_heap(r);
    FAIL() << "accepted; expected an error mentioning '" << mention << "'";
  } catch (const checkpoint_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("checkpoint 'test'", 0), 0u) << what;
    EXPECT_NE(what.find(mention), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

std::vector<std::byte> saved_graph(std::uint64_t n) {
  GraphRuntime rt(4 << 20);
  arch::device_buffer<Link*> roots(n);
  build_graph(rt, roots.data(), n);
  checkpoint::writer w;
  rt.save_heap(w);
  return w.bytes();
}

/// Recomputes the header and file checksums after an edit, so the check behind them is reached.
void reseal(std::vector<std::byte>& f) {
  const std::uint32_t head = checkpoint::crc32c(std::span(f).first(28));
  std::memcpy(f.data() + 28, &head, 4);
  const std::uint32_t all = checkpoint::crc32c(std::span(f).first(f.size() - 8));
  std::memcpy(f.data() + f.size() - 8, &all, 4);
}

TEST(CheckpointDamage, EveryKindOfDamageIsOneCleanError) {
  SHOAL_REQUIRE_DEVICE();
  const auto good = saved_graph(200);
  {
    const checkpoint::reader r(good, "good");
    GraphRuntime rt(4 << 20);
    EXPECT_NO_THROW(rt.load_heap(r));
  }
  expect_rejected({}, "is empty");
  auto f = good;
  f[0] = std::byte{'X'};
  expect_rejected(f, "not a Shoal checkpoint");
  f = good;
  f[8] = std::byte{2};  // format version 2, with a valid header checksum: told apart from damage
  reseal(f);
  expect_rejected(f, "format version 2; this build reads version 1");
  f = good;
  f[8] = std::byte{2};
  expect_rejected(f, "header checksum");
  f = good;
  f.push_back(std::byte{0});
  expect_rejected(f, "after its end");
  // Truncation anywhere.
  for (std::size_t len = 1; len < good.size(); len += 1 + len / 16) {
    f.assign(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(len));
    expect_rejected(f, len < 8 ? "not a Shoal checkpoint" : (len < 48 ? "truncated" : "truncated"));
  }
  // A flipped bit anywhere: the checksums catch it.
  for (std::size_t bit = 0; bit < good.size() * 8; bit += 1 + bit / 8) {
    f = good;
    f[bit / 8] ^= std::byte{static_cast<unsigned char>(1u << (bit % 8))};
    expect_rejected(f, "checkpoint 'test'");
  }
}

TEST(CheckpointDamage, AHeapTooLargeForThisMachineIsACheckpointError) {
  SHOAL_REQUIRE_DEVICE();
  auto f = saved_graph(50);
  // The heap section's payload follows the 32-byte file header and its 24-byte section header
  // (name "heap"): u32 signature length, the signature, then u64 heap bytes.
  constexpr std::size_t payload = 32 + 24;
  std::uint32_t signature_bytes = 0;
  std::memcpy(&signature_bytes, f.data() + payload, 4);
  const std::uint64_t huge = std::uint64_t{1} << 60;  // 1 EiB: a consistent claim, not corrupt
  std::memcpy(f.data() + payload + 4 + signature_bytes, &huge, 8);
  reseal(f);
  const fs::path path = temp_dir() / "huge.ckpt";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(f.data()), static_cast<std::streamsize>(f.size()));
  }
  try {
    (void)GraphRuntime::load(path.string());
    ADD_FAILURE() << "a checkpoint asking for 1 EiB of heap was loaded";
  } catch (const checkpoint_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be allocated here"), std::string::npos) << e.what();
  }
  fs::remove_all(path.parent_path());
}

TEST(CheckpointDamage, OtherHeapClassesAreNamed) {
  SHOAL_REQUIRE_DEVICE();
  const auto good = saved_graph(50);
  const checkpoint::reader r(good, "checkpoint 'graph'");
  // The same class names, but a Coin's weight is a float here.
  runtime<other::Graph> rt(4 << 20);
  try {
    rt.load_heap(r);
    FAIL() << "a heap of other classes was accepted";
  } catch (const checkpoint_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("does not match"), std::string::npos) << what;
    EXPECT_NE(what.find("'Coin'"), std::string::npos) << what;
  }
  EXPECT_EQ(rt.verify(), "");
  EXPECT_EQ(rt.stats().live(), 0u);
}

}  // namespace
}  // namespace shoal::test::ckpt
