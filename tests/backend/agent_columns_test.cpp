// Host-side access to agents: upload makes objects from host columns (every kind of field, placed
// as parallel_new places them, constructors not run), download reads every live object of a class
// and its subclasses back as columns in heap order; mismatched columns and a full heap are
// reported. Compiled for both backends; device code lives in free functions.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "heap_model.hpp"
#include "test_support.hpp"

namespace shoal::test {

namespace {

using Runtime = runtime<TestHeap>;
using node_columns = agent_columns<Node>;

static_assert(node_columns::field_count == 6);
static_assert(std::is_same_v<node_columns::column_type<4>, std::vector<std::array<int, 4>>>);
static_assert(std::is_same_v<std::remove_cvref_t<decltype(std::declval<node_columns&>().get<&Node::next>())>,
                             std::vector<Node*>>);
static_assert(std::is_same_v<std::remove_cvref_t<decltype(std::declval<agent_columns<Cat>&>().get<&Animal::legs>())>,
                             std::vector<int>>,
              "a base's field is named through the base");

/// Host columns for n nodes whose fields all differ from what Node's constructor would write.
node_columns some_nodes(std::size_t n) {
  node_columns c(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int v = static_cast<int>(i);
    c.get<&Node::value>()[i] = 1000 + v;
    c.get<&Node::weight>()[i] = 0.25 * v - 3.0;
    c.get<&Node::position>()[i] = vec2{1.5f * v, -2.0f};
    c.get<&Node::history>()[i] = {v, v * 2, v * 3, -v};
    c.get<&Node::tag>()[i] = static_cast<char>('a' + i % 26);
  }
  return c;
}

/// Device check: object i (placed[i]) holds row i of `some_nodes`, read through its fields'
/// proxies; next must equal placed[(i + 1) % n]. Returns the number of objects that differ.
unsigned long long count_wrong_nodes(Runtime& rt, Node** placed, std::size_t n) {
  arch::device_buffer<unsigned long long> wrong(1);
  wrong.zero();
  unsigned long long* w = wrong.data();
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    Node* o = placed[i];
    const int v = static_cast<int>(i);
    const vec2 p = o->position;
    const bool ok = o->value == 1000 + v && o->weight == 0.25 * v - 3.0 && p.x == 1.5f * v && p.y == -2.0f &&
                    o->history[0] == v && o->history[1] == v * 2 && o->history[2] == v * 3 && o->history[3] == -v &&
                    o->tag == static_cast<char>('a' + i % 26) && o->next == placed[(i + 1) % n];
    if (!ok) arch::fetch_add(*w, 1ull);
  });
  return wrong.read(0);
}

/// Cats and dogs made by device code (cat i purrs i / 2, dog i has i bones); then every third
/// one is destroyed again. Returns the pointers (null where destroyed).
std::vector<Animal*> cats_and_dogs(Runtime& rt, std::size_t n, destructor_counts* counts) {
  arch::device_buffer<Animal*> made(n);
  Animal** m = made.data();
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    if (i % 2 == 0) m[i] = new Cat(counts, 0.5f * static_cast<float>(i));
    else m[i] = new Dog(counts, static_cast<long long>(i));
  });
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    if (i % 3 == 0) {
      delete m[i];
      m[i] = nullptr;
    }
  });
  return made.download();
}

std::uint64_t heap_place(const void* p) {
  const std::uint64_t b = detail::bits_of(p);
  return (detail::block_address_of(b) << 6) | detail::slot_of(b);
}

}  // namespace

TEST(AgentColumns, UploadMakesObjectsWithEveryFieldAsGivenWhereParallelNewWould) {
  SHOAL_REQUIRE_DEVICE();
  const std::size_t n = 3000;
  Runtime rt(std::size_t{4} << 20), twin(std::size_t{4} << 20);
  arch::device_buffer<Node*> placed(n);
  // Pointer fields: first upload without them, then link each node to the next one's pointer.
  node_columns c = some_nodes(n);
  rt.upload(c, placed.data());
  const std::vector<Node*> p = placed.download();
  for (std::size_t i = 0; i < n; ++i) c.get<&Node::next>()[i] = p[(i + 1) % n];
  rt.clear();
  rt.upload(c, placed.data());
  EXPECT_EQ(placed.download(), p) << "a cleared heap gets the same places again";
  EXPECT_EQ(count_wrong_nodes(rt, placed.data(), n), 0u);
  EXPECT_EQ(rt.stats().types[TestHeap::type_id<Node>].live, n);
  EXPECT_EQ(rt.verify(), "");
  // parallel_new puts its object i where upload put row i.
  twin.parallel_new<Node>(n);
  const auto made = twin.download<Node>();
  ASSERT_EQ(made.size(), n);
  const auto base = [](const Runtime& r) { return reinterpret_cast<std::uint64_t>(r.view().data) << 6; };
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(heap_place(made.objects()[i]) - base(twin), heap_place(p[i]) - base(rt)) << "object " << i;
  EXPECT_EQ(made.get<&Node::value>()[n - 1], static_cast<int>(n - 1)) << "parallel_new ran Node(i)";
}

TEST(AgentColumns, DownloadGivesBackWhatUploadMade) {
  SHOAL_REQUIRE_DEVICE();
  Runtime rt(std::size_t{4} << 20);
  // Other classes' blocks in between: placement skips them, download's heap order keeps the rows.
  rt.parallel_new<Small>(100);
  node_columns c = some_nodes(700);
  rt.upload(c);
  rt.parallel_new<Small>(100);
  rt.upload<Node>(std::vector<int>{7, 8}, std::vector<double>{0.5, 1.5}, std::vector<vec2>{{1, 2}, {3, 4}},
                  std::vector<Node*>{nullptr, nullptr}, std::vector<std::array<int, 4>>{{1, 2, 3, 4}, {5, 6, 7, 8}},
                  std::vector<char>{'x', 'y'});
  const node_columns back = rt.download<Node>();
  ASSERT_EQ(back.size(), 702u);
  ASSERT_EQ(back.objects().size(), 702u);
  EXPECT_TRUE(std::is_sorted(back.objects().begin(), back.objects().end(),
                             [](const Node* a, const Node* b) { return heap_place(a) < heap_place(b); }))
      << "heap order: block, then slot";
  for (std::size_t i = 0; i < 700; ++i) {
    ASSERT_EQ(back.get<&Node::value>()[i], c.get<&Node::value>()[i]) << i;
    ASSERT_EQ(back.get<&Node::weight>()[i], c.get<&Node::weight>()[i]) << i;
    ASSERT_EQ(back.get<&Node::position>()[i].x, c.get<&Node::position>()[i].x) << i;
    ASSERT_EQ(back.get<&Node::history>()[i], c.get<&Node::history>()[i]) << i;
    ASSERT_EQ(back.column<5>()[i], c.column<5>()[i]) << i;
  }
  EXPECT_EQ(back.get<&Node::value>()[701], 8);
  EXPECT_EQ(back.get<&Node::history>()[700], (std::array<int, 4>{1, 2, 3, 4}));
  EXPECT_EQ(back.get<&Node::tag>()[701], 'y');
  EXPECT_EQ(rt.verify(), "");
}

TEST(AgentColumns, DownloadOfABaseClassReadsEveryLiveObjectOfItsSubclasses) {
  SHOAL_REQUIRE_DEVICE();
  oversubscribe threads(8);
  Runtime rt(std::size_t{4} << 20);
  arch::device_buffer<destructor_counts> counts(1);
  counts.zero();
  const std::size_t n = 2000;
  const std::vector<Animal*> alive = cats_and_dogs(rt, n, counts.data());
  std::vector<Animal*> want;
  for (Animal* a : alive)
    if (a != nullptr) want.push_back(a);
  std::sort(want.begin(), want.end(), [](const Animal* a, const Animal* b) { return heap_place(a) < heap_place(b); });

  const agent_columns<Animal> animals = rt.download<Animal>();
  ASSERT_EQ(animals.objects(), want) << "every live cat and dog once, in heap order";
  for (std::size_t i = 0; i < animals.size(); ++i)
    ASSERT_EQ(animals.get<&Animal::legs>()[i], is<Cat>(animals.objects()[i]) ? 4 : 3) << i;

  const agent_columns<Cat> cats = rt.download<Cat>();
  const agent_columns<Dog> dogs = rt.download<Dog>();
  EXPECT_EQ(cats.size() + dogs.size(), want.size());
  EXPECT_EQ(cats.size(), static_cast<std::size_t>(std::count_if(want.begin(), want.end(), [](Animal* a) { return is<Cat>(a); })));
  for (std::size_t i = 0; i < cats.size(); ++i) {
    const std::size_t made_as = std::find(alive.begin(), alive.end(), cats.objects()[i]) - alive.begin();
    ASSERT_EQ(cats.get<&Cat::purr>()[i], 0.5f * static_cast<float>(made_as)) << i;
    ASSERT_EQ(cats.get<&Animal::counts>()[i], counts.data()) << "a pointer field comes back as stored";
  }
  for (std::size_t i = 0; i < dogs.size(); ++i) {
    const std::size_t made_as = std::find(alive.begin(), alive.end(), dogs.objects()[i]) - alive.begin();
    ASSERT_EQ(dogs.get<&Dog::bones>()[i], static_cast<long long>(made_as)) << i;
  }
  EXPECT_EQ(rt.download<Medium>().size(), 0u);
}

TEST(AgentColumns, MismatchedColumnsAreRefusedBeforeAnythingIsMade) {
  SHOAL_REQUIRE_DEVICE();
  Runtime rt(std::size_t{1} << 20);
  node_columns c = some_nodes(10);
  c.get<&Node::tag>().pop_back();
  try {
    rt.upload(c);
    ADD_FAILURE() << "uploaded";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("column 5 (of 6, bases' fields first) has 9 rows, column 0 has 10"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(node_columns(std::vector<int>{1}, std::vector<double>{}, std::vector<vec2>{}, std::vector<Node*>{},
                            std::vector<std::array<int, 4>>{}, std::vector<char>{}),
               error);
  EXPECT_EQ(rt.stats().live(), 0u);
}

TEST(AgentColumns, AnUploadLargerThanTheHeapReportsOutOfMemory) {
  SHOAL_REQUIRE_DEVICE();
  Runtime rt(Runtime::bytes_for<Small>(64));  // one block
  agent_columns<Small> c(65);
  try {
    rt.upload(c);
    ADD_FAILURE() << "65 objects in a heap of 64";
  } catch (const out_of_memory& e) {
    EXPECT_NE(e.type_name().find("Small"), std::string::npos) << e.type_name();
  }
}

TEST(AgentColumns, FieldNamesAreAsSpelledInTheFieldListBasesFirst) {
  using shoal::detail::field_name;
  EXPECT_STREQ(field_name<Node>(0), "value");
  EXPECT_STREQ(field_name<Node>(4), "history");
  EXPECT_STREQ(field_name<Node>(5), "tag");
  EXPECT_STREQ(field_name<Animal>(1), "counts");
  EXPECT_STREQ(field_name<Dog>(0), "legs");    // Animal's, first
  EXPECT_STREQ(field_name<Dog>(2), "bark");    // then Dog's own
  EXPECT_STREQ(field_name<Dog>(3), "bones");
  EXPECT_STREQ(field_name<Cat>(2), "purr");
  static_assert(std::string_view(field_name<Dog>(3)) == "bones");  // known at compile time
}

}  // namespace shoal::test
