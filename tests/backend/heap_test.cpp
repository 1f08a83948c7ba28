// The SOA heap: layout, field proxies, make/destroy under contention, exact fill and
// out-of-memory, block reuse across types. Compiled for both backends.
#include <algorithm>
#include <set>

#include "heap_model.hpp"
#include "test_support.hpp"

namespace shoal::test {

using Runtime = runtime<TestHeap>;

TEST(HeapGeometry, SmallestClassGetsSixtyFourSlots) {
  const auto g = detail::compute_geometry<TestHeap>();
  EXPECT_EQ(g.capacity[TestHeap::type_id<Small>], 64u);
  EXPECT_EQ(g.capacity[TestHeap::type_id<Cat>], 64u);
  EXPECT_EQ(g.capacity[TestHeap::type_id<Animal>], 0u) << "abstract classes get no blocks";
  EXPECT_EQ(g.block_bytes, 1024u);  // 64 slots x 16 bytes
  EXPECT_EQ(g.block_bytes % detail::block_alignment, 0u);
  TestHeap::for_each_type([&]<class T>() {
    const auto c = g.capacity[TestHeap::type_id<T>];
    if (c == 0) return;
    EXPECT_LE(detail::object_data_bytes<T>(c), g.block_bytes) << detail::type_name<T>();
    if (c < 64) EXPECT_GT(detail::object_data_bytes<T>(c + 1), g.block_bytes) << detail::type_name<T>();
  });
  // 256 bytes of fields: 3 fit, because the 31-word payload array is padded to 128 bytes.
  EXPECT_EQ(g.capacity[TestHeap::type_id<Large>], 3u);
}

// runtime::bytes_for sizes a heap for given objects: exactly their blocks, and one byte less
// holds fewer blocks. (parallel_new fills blocks in order, so the objects fit exactly.)
TEST(HeapGeometry, BytesForHoldsTheObjectsAsked) {
  SHOAL_REQUIRE_DEVICE();
  const std::size_t bytes = Runtime::bytes_for<Small, Large>(1000, 10);
  Runtime rt(bytes);
  EXPECT_EQ(rt.blocks(), (1000u + 63) / 64 + (10u + 2) / 3);
  EXPECT_LT(Runtime(bytes - 1).blocks(), rt.blocks());
  rt.parallel_new<Small>(1000);
  rt.parallel_new<Large>(10);
  EXPECT_NO_THROW(rt.synchronize());
  EXPECT_EQ(rt.stats().live(), 1010u);
  EXPECT_EQ(Runtime::bytes_for<Small>(0), Runtime::bytes_for<Small>(1)) << "at least one block";
}

struct slot_record {
  std::uint64_t block, slot, owner_addr, check_addr;
};

std::vector<slot_record> make_small_objects(Runtime& rt, std::size_t n) {
  arch::device_buffer<slot_record> out(n);
  slot_record* o = out.data();
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    Small* s = new Small(i);
    const std::uint64_t p = detail::bits_of(s);
    o[i] = {detail::block_address_of(p), detail::slot_of(p),
            reinterpret_cast<std::uintptr_t>(&s->owner.get()),
            reinterpret_cast<std::uintptr_t>(&s->check.get())};
  });
  return out.download();
}

TEST(Heap, FieldArraysAreStructureOfArrays) {
  SHOAL_REQUIRE_DEVICE();
  Runtime rt(1 << 20);
  const auto rec = make_small_objects(rt, 1000);
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
  for (const auto& r : rec) {
    EXPECT_TRUE(seen.insert({r.block, r.slot}).second) << "slot handed out twice";
    // owner[] starts the block, check[] follows after 64 x 8 bytes; consecutive slots are
    // consecutive elements.
    EXPECT_EQ(r.owner_addr, r.block + r.slot * 8);
    EXPECT_EQ(r.check_addr, r.block + 64 * 8 + r.slot * 8);
    EXPECT_EQ(r.block % 256, 0u);
  }
  // Dense: warps racing on an empty heap may each open a block, but never more than one per
  // 32 requests, and spare slots are used before new blocks are opened.
  std::set<std::uint64_t> blocks;
  for (const auto& r : rec) blocks.insert(r.block);
  EXPECT_LE(blocks.size(), (1000u + 31) / 32);
  const auto more = make_small_objects(rt, 64 * blocks.size() - 1000);
  for (const auto& r : more) EXPECT_TRUE(blocks.count(r.block)) << "spare slots used first";
  EXPECT_EQ(rt.stats().free_blocks, rt.blocks() - blocks.size());
  EXPECT_EQ(rt.stats().types[TestHeap::type_id<Small>].live, 64 * blocks.size());
  EXPECT_EQ(rt.verify(), "");
}

enum proxy_check : int {
  value_after_ops, weight_scaled, position_x, position_y_after_assign, history_two,
  history_one_written, history_zero_incremented, neighbour_value, tag_char,
  cat_is_cat, cat_is_not_dog, cast_to_dog_null, cast_to_cat_ok, base_field_legs, dog_bones,
  cat_type_id, dog_via_base_legs, proxy_checks
};

std::vector<double> run_proxy_checks(Runtime& rt, destructor_counts* counts) {
  arch::device_buffer<double> out(proxy_checks);
  double* r = out.data();
  rt.launch(1, [=] SHOAL_DEVICE(std::size_t) {
    Node* a = make<Node>(3);
    Node* b = make<Node>(10);
    a->next = b;
    a->value += 5;
    a->value++;
    ++a->value;  // 10
    a->value -= 1;  // 9
    a->weight *= 4.0;  // 6
    r[value_after_ops] = a->value;
    r[weight_scaled] = a->weight;
    r[position_x] = a->position->x;
    a->position = vec2{7.0f, 8.0f};
    r[position_y_after_assign] = a->position.get().y;
    r[history_two] = a->history[2];
    a->history[1] = 42;
    a->history[0] += 1;
    r[history_one_written] = a->history[1];
    r[history_zero_incremented] = a->history[0];
    r[neighbour_value] = a->neighbour()->value + a->next->value;  // 10 + 10
    r[tag_char] = a->tag;

    Animal* cat = new Cat(counts, 1.5f);
    Animal* dog = new Dog(counts, 7);
    r[cat_is_cat] = is<Cat>(cat) && is<Animal>(cat);
    r[cat_is_not_dog] = !is<Dog>(cat);
    r[cast_to_dog_null] = cast<Dog>(cat) == nullptr;
    r[cast_to_cat_ok] = cast<Cat>(cat) != nullptr && cast<Cat>(cat)->purr == 1.5f;
    r[base_field_legs] = cat->legs;
    r[dog_bones] = cast<Dog>(dog)->bones;
    r[cat_type_id] = cat->type_id() == TestHeap::type_id<Cat>;
    r[dog_via_base_legs] = dog->legs;
    delete cat;  // through the base pointer: must run ~Cat
    delete dog;
    destroy(a);
    destroy(b);
  });
  return out.download();
}

TEST(Heap, ProxiesBehaveLikeMembers) {
  SHOAL_REQUIRE_DEVICE();
  Runtime rt(1 << 20);
  arch::device_buffer<destructor_counts> counts(1);
  counts.zero();
  const auto r = run_proxy_checks(rt, counts.data());
  EXPECT_EQ(r[value_after_ops], 9);
  EXPECT_EQ(r[weight_scaled], 6.0);
  EXPECT_EQ(r[position_x], 3.0);
  EXPECT_EQ(r[position_y_after_assign], 8.0);
  EXPECT_EQ(r[history_two], 5);
  EXPECT_EQ(r[history_one_written], 42);
  EXPECT_EQ(r[history_zero_incremented], 4);
  EXPECT_EQ(r[neighbour_value], 20);
  EXPECT_EQ(r[tag_char], 'n');
  EXPECT_EQ(r[cat_is_cat], 1);
  EXPECT_EQ(r[cat_is_not_dog], 1);
  EXPECT_EQ(r[cast_to_dog_null], 1);
  EXPECT_EQ(r[cast_to_cat_ok], 1);
  EXPECT_EQ(r[base_field_legs], 4);
  EXPECT_EQ(r[dog_bones], 7);
  EXPECT_EQ(r[cat_type_id], 1);
  EXPECT_EQ(r[dog_via_base_legs], 3);
  const destructor_counts c = counts.read(0);
  EXPECT_EQ(c.cats, 1u) << "delete through Animal* ran ~Cat";
  EXPECT_EQ(c.dogs, 1u) << "delete through Animal* ran ~Dog";
  EXPECT_EQ(rt.stats().live(), 0u);
  EXPECT_EQ(rt.stats().free_blocks, rt.blocks()) << "every emptied block went back";
  EXPECT_EQ(rt.verify(), "");
}

struct churn_result {
  unsigned long long violations, made[3], destroyed[3];
};

/// One churn step on a thread's object of class T: check that it still holds what its creator
/// wrote, destroy it, create a new one.
template <class T>
SHOAL_DEVICE void churn_step(T*& object, unsigned long long& object_id, unsigned long long id,
                             unsigned long long* made, unsigned long long* destroyed,
                             unsigned long long* violations) {
  if (object) {
    if (!object->intact(object_id)) arch::fetch_add(*violations, 1ull);
    destroy(object);
    arch::fetch_add(*destroyed, 1ull);
  }
  object = make<T>(id);
  object_id = id;
  if (object) arch::fetch_add(*made, 1ull);
}

/// Every thread creates and destroys objects of three sizes; each object stores its creator's
/// id, checked before destroy, so a slot handed out twice shows up as a violation.
churn_result churn(Runtime& rt, std::uint64_t threads, int rounds) {
  arch::device_buffer<churn_result> out(1);
  out.zero();
  churn_result* r = out.data();
  rt.launch(threads, [=] SHOAL_DEVICE(std::size_t t) {
    walk_rng rng(t * 7919 + 17);
    Small* s = nullptr;
    Medium* m = nullptr;
    Large* l = nullptr;
    unsigned long long sid = 0, mid = 0, lid = 0;
    for (int k = 0; k < rounds; ++k) {
      const unsigned long long id = (static_cast<unsigned long long>(t) << 20) | k;
      const std::uint64_t dice = rng.below(10);
      if (dice < 6) churn_step(s, sid, id, &r->made[0], &r->destroyed[0], &r->violations);
      else if (dice < 9) churn_step(m, mid, id, &r->made[1], &r->destroyed[1], &r->violations);
      else churn_step(l, lid, id, &r->made[2], &r->destroyed[2], &r->violations);
    }
    // Leave every second thread's objects alive: the heap ends partly full.
    if (t % 2 == 0) {
      if (s) destroy(s), arch::fetch_add(r->destroyed[0], 1ull);
      if (m) destroy(m), arch::fetch_add(r->destroyed[1], 1ull);
      if (l) destroy(l), arch::fetch_add(r->destroyed[2], 1ull);
    }
  });
  return out.read(0);
}

TEST(Heap, ConcurrentChurnNeverSharesASlot) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
#if defined(SHOAL_BACKEND_CUDA)
  const std::uint64_t n = contended(1 << 20, 1024);
  const int rounds = 6;
#else
  const std::uint64_t n = contended(1 << 16, 1024);
  const int rounds = 8;
#endif
  Runtime rt(std::size_t{1} << 30 >> scale_shift());
  const churn_result r = churn(rt, n, rounds);
  unsigned long long ops = 0;
  for (int i = 0; i < 3; ++i) ops += r.made[i] + r.destroyed[i];
  EXPECT_GE(ops, n * rounds);
#if defined(SHOAL_BACKEND_CUDA)
  if (test_scale() == 1) EXPECT_GE(ops, 10'000'000ull);
#endif
  EXPECT_EQ(r.violations, 0u);
  const auto s = rt.stats();
  EXPECT_EQ(s.types[TestHeap::type_id<Small>].live, r.made[0] - r.destroyed[0]);
  EXPECT_EQ(s.types[TestHeap::type_id<Medium>].live, r.made[1] - r.destroyed[1]);
  EXPECT_EQ(s.types[TestHeap::type_id<Large>].live, r.made[2] - r.destroyed[2]);
  EXPECT_EQ(rt.verify(), "");
}

/// Creates `n` objects of T in one launch; returns how many were made. Writes the pointers.
template <class T>
std::uint64_t make_many(Runtime& rt, std::uint64_t n, arch::device_buffer<T*>& ptrs) {
  ptrs = arch::device_buffer<T*>(n);
  arch::device_buffer<unsigned long long> made(1);
  made.zero();
  T** p = ptrs.data();
  unsigned long long* m = made.data();
  rt.launch_async(n, [=] SHOAL_DEVICE(std::size_t i) {
    p[i] = make<T>(i);
    if (p[i]) arch::fetch_add(*m, 1ull);
  });
  arch::synchronize();
  return made.read(0);
}

template <class T>
void destroy_every(Runtime& rt, arch::device_buffer<T*>& ptrs, std::uint64_t stride) {
  T** p = ptrs.data();
  rt.launch(ptrs.size(), [=] SHOAL_DEVICE(std::size_t i) {
    if (i % stride == 0 && p[i]) {
      destroy(p[i]);
      p[i] = nullptr;
    }
  });
}

void make_one_with_launch(Runtime& rt) {
  rt.launch(1, [=] SHOAL_DEVICE(std::size_t i) { make<Small>(i); });
}

TEST(Heap, ExactFillThenOutOfMemoryThenRecovery) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
  Runtime rt(512 << 10);
  const std::uint64_t slots = rt.blocks() * rt.capacity<Small>();
  arch::device_buffer<Small*> ptrs;
  EXPECT_EQ(make_many(rt, slots, ptrs), slots) << "the heap takes exactly its capacity";
  EXPECT_NO_THROW(rt.check_errors());
  EXPECT_EQ(rt.stats().free_blocks, 0u);

  arch::device_buffer<Small*> more;
  EXPECT_EQ(make_many(rt, 1000, more), 0u) << "a full heap gives nullptr";
  try {
    rt.check_errors();
    ADD_FAILURE() << "no out_of_memory";
  } catch (const out_of_memory& e) {
    EXPECT_NE(std::string(e.what()).find("Small"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(512 << 10)), std::string::npos) << e.what();
    EXPECT_EQ(e.failed(), 1000u);
  }
  EXPECT_NO_THROW(rt.check_errors()) << "the record is reset once reported";

  destroy_every(rt, ptrs, 10);
  const std::uint64_t freed = (slots + 9) / 10;
  EXPECT_EQ(rt.stats().types[TestHeap::type_id<Small>].live, slots - freed);
  EXPECT_EQ(make_many(rt, freed, more), freed) << "frees make room again";
  EXPECT_EQ(rt.verify(), "");
  EXPECT_THROW(make_one_with_launch(rt), out_of_memory) << "launch() reports it by itself";
}

TEST(Heap, LargeExactFillsNeverFailEarly) {
  // Thousands of warps opening blocks at once: "full" must never be decided while a block
  // is being opened (a parity-based sequence lock failed here on the H100).
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
  Runtime rt(std::size_t{256} << 20 >> (scale_down > 1 ? 4 : 0) >> 2 * scale_shift());
  const std::uint64_t slots = rt.blocks() * rt.capacity<Small>();
  arch::device_buffer<Small*> ptrs;
  for (int round = 0; round < static_cast<int>(scaled(5, 2)); ++round) {
    rt.clear();
    ASSERT_EQ(make_many(rt, slots, ptrs), slots) << "round " << round;
    ASSERT_NO_THROW(rt.check_errors());
  }
  EXPECT_EQ(rt.verify(), "");
}

TEST(Heap, BlocksEmptiedByOneTypeAreReusedByAnother) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads;
  Runtime rt(256 << 10);
  arch::device_buffer<Large*> large;
  const std::uint64_t n_large = rt.blocks() * rt.capacity<Large>();
  EXPECT_EQ(make_many(rt, n_large, large), n_large);
  destroy_every(rt, large, 1);
  EXPECT_EQ(rt.stats().free_blocks, rt.blocks());
  EXPECT_EQ(rt.verify(), "");
  arch::device_buffer<Small*> small;
  const std::uint64_t n_small = rt.blocks() * rt.capacity<Small>();
  EXPECT_EQ(make_many(rt, n_small, small), n_small);
  EXPECT_EQ(rt.stats().types[TestHeap::type_id<Small>].blocks, rt.blocks());
  EXPECT_EQ(rt.verify(), "");
}

}  // namespace shoal::test

#if defined(SHOAL_CHECKS)
namespace shoal::test {

void destroy_twice(Runtime& rt) {
  rt.launch(1, [=] SHOAL_DEVICE(std::size_t i) {
    Small* s = make<Small>(i);
    destroy(s);
    destroy(s);
  });
}
void destroy_foreign(Runtime& rt, Small* foreign) {
  rt.launch(1, [=] SHOAL_DEVICE(std::size_t) { destroy(foreign); });
}

TEST(HeapChecks, DoubleAndForeignDestroyAreReported) {
  SHOAL_REQUIRE_DEVICE();
  Runtime rt(1 << 20);
  try {
    destroy_twice(rt);
    ADD_FAILURE() << "double destroy not reported";
  } catch (const invalid_destroy& e) {
    EXPECT_NE(std::string(e.what()).find("Small"), std::string::npos) << e.what();
  }
  EXPECT_EQ(rt.verify(), "") << "the second destroy changed nothing";
  EXPECT_THROW(destroy_foreign(rt, reinterpret_cast<Small*>(std::uintptr_t{0x1000})), invalid_destroy);
  EXPECT_EQ(rt.stats().live(), 0u);
}

}  // namespace shoal::test
#endif
