// The distributed layer (shoal/dist/) under mpiexec with 1 to 4 ranks (ctest dist_np1..4): every
// rank runs every test; a test's checks are made on every rank, and the binary fails if any rank
// failed. Collective calls are never skipped by a failing check (EXPECT, not ASSERT), so that a
// failure on one rank cannot leave the others waiting.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "shoal/dist/band.hpp"
#include "shoal/dist/census.hpp"
#include "shoal/dist/checkpoint.hpp"
#include "shoal/dist/context.hpp"
#include "shoal/dist/migrate.hpp"
#include "shoal/dist/neighbour_link.hpp"
#include "shoal/shoal.hpp"
#include "shoal/sim/rng.hpp"

namespace shoal::test {

dist::context* ctx = nullptr;

class Walker;
class Rock;
class Strider;
using Field = shoal::heap<Walker, Rock, Strider>;

/// Moves between ranks: `home` is the rank it belongs to.
class Walker : public object<Field, Walker> {
 public:
  SHOAL_FIELDS(Walker, (unsigned long long, id), (int, home), (float, weight))
};
/// Never moves: another class in the same heap, left as it was.
class Rock : public object<Field, Rock> {
 public:
  SHOAL_FIELDS(Rock, (unsigned long long, id))
};

/// Walks a torus: each step one cell or none in x and in y, drawn from its own stream (seed, id,
/// step), so where it goes depends on nothing but those.
class Strider : public object<Field, Strider> {
 public:
  SHOAL_FIELDS(Strider, (unsigned long long, id), (std::uint32_t, x), (std::uint32_t, y))
  SHOAL_HD void walk(std::uint32_t step, std::uint32_t width, std::uint32_t height) {
    sim::random r(7, id, step, 0);
    x = (x + width + r.below(3) - 1) % width;
    y = (y + height + r.below(3) - 1) % height;
  }
};

namespace {

using Runtime = runtime<Field>;

std::uint64_t walkers_of(int rank) { return 1000 + 37 * static_cast<std::uint64_t>(rank); }
unsigned long long id_of(int rank, std::uint64_t i) { return static_cast<unsigned long long>(rank) * 1000000ull + i; }
int home_of(unsigned long long id, int ranks) { return static_cast<int>((id * 7 + 3) % static_cast<unsigned long long>(ranks)); }
float weight_of(unsigned long long id) { return static_cast<float>(id % 4096) * 0.5f; }

/// This rank's walkers (ids id_of(rank, i)) and `rocks` rocks, uploaded into `rt`.
void populate(Runtime& rt, int rank, int ranks, std::uint64_t rocks) {
  std::vector<unsigned long long> ids;
  std::vector<int> homes;
  std::vector<float> weights;
  for (std::uint64_t i = 0; i < walkers_of(rank); ++i) {
    ids.push_back(id_of(rank, i));
    homes.push_back(home_of(ids.back(), ranks));
    weights.push_back(weight_of(ids.back()));
  }
  rt.upload(agent_columns<Walker>(ids, homes, weights));
  std::vector<unsigned long long> rock_ids(rocks, 42);
  rt.upload(agent_columns<Rock>(rock_ids));
}

TEST(Context, RanksSumsAndBroadcast) {
  const int n = ctx->size(), me = ctx->rank();
  EXPECT_GE(n, 1);
  EXPECT_TRUE(me >= 0 && me < n);
  EXPECT_EQ(ctx->root(), me == 0);
  EXPECT_EQ(ctx->sum(std::uint64_t{1}), static_cast<std::uint64_t>(n));
  EXPECT_EQ(ctx->sum(static_cast<std::uint64_t>(me)), static_cast<std::uint64_t>(n) * (n - 1) / 2);
  const auto v = ctx->sum(std::vector<std::uint64_t>{1, static_cast<std::uint64_t>(me), 1000});
  EXPECT_EQ(v, (std::vector<std::uint64_t>{static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(n) * (n - 1) / 2,
                                           1000 * static_cast<std::uint64_t>(n)}));
  // One machine runs every rank of the tests.
  EXPECT_EQ(ctx->local_size(), n);
  EXPECT_TRUE(ctx->local_rank() >= 0 && ctx->local_rank() < n);
  EXPECT_EQ(ctx->sum(std::uint64_t{ctx->local_rank() == 0 ? 1u : 0u}), 1u);
  EXPECT_EQ(dist::use_local_device(*ctx), -1) << "the cpu backend has no GPU to choose";
  EXPECT_TRUE(ctx->any(me == n - 1));
  EXPECT_FALSE(ctx->any(false));
  std::vector<std::byte> message;
  const std::string text = "from the root";
  if (ctx->root())
    for (char c : text) message.push_back(static_cast<std::byte>(c));
  ctx->broadcast(message);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(message.data()), message.size()), text);
}

TEST(Context, ExchangeDeliversEachMessageToItsRankOnly) {
  const int n = ctx->size(), me = ctx->rank();
  // To rank r: (me + 2r) % 5 bytes, each me * 16 + r (some messages empty, the own one included).
  std::vector<std::vector<std::byte>> to(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) to[r].assign(static_cast<std::size_t>((me + 2 * r) % 5), static_cast<std::byte>(me * 16 + r));
  const auto from = ctx->exchange(to);
  ASSERT_EQ(from.size(), static_cast<std::size_t>(n));  // local: no collective follows
  for (int s = 0; s < n; ++s) {
    EXPECT_EQ(from[s].size(), static_cast<std::size_t>((s + 2 * me) % 5)) << "from rank " << s;
    for (const std::byte b : from[s]) EXPECT_EQ(b, static_cast<std::byte>(s * 16 + me)) << "from rank " << s;
  }
  // A wrong number of messages is refused before any communication, on the rank that made it.
  EXPECT_THROW((void)ctx->exchange(std::vector<std::vector<std::byte>>(static_cast<std::size_t>(n) + 1)), error);
}

TEST(Migrate, ObjectsMoveToTheRankTheirFieldNamesWithEveryField) {
  const int n = ctx->size(), me = ctx->rank();
  Runtime rt(Runtime::bytes_for<Walker, Rock, Strider>(8 * walkers_of(n), 100, 1));
  populate(rt, me, n, 7);
  const dist::migrate_stats moved =
      dist::migrate<Walker>(rt, *ctx, [] SHOAL_DEVICE(Walker* w) { return static_cast<int>(w->home); });
  // What should have moved, from the ids alone.
  std::uint64_t leave = 0, arrive = 0, total = 0;
  for (int r = 0; r < n; ++r)
    for (std::uint64_t i = 0; i < walkers_of(r); ++i) {
      const int home = home_of(id_of(r, i), n);
      ++total;
      if (r == me && home != me) ++leave;
      if (r != me && home == me) ++arrive;
    }
  EXPECT_EQ(moved.sent, leave);
  EXPECT_EQ(moved.received, arrive);
  const auto here = rt.download<Walker>();
  EXPECT_EQ(here.size(), walkers_of(me) - leave + arrive);
  std::set<unsigned long long> ids;
  unsigned long long id_sum = 0;
  for (std::size_t i = 0; i < here.size(); ++i) {
    const unsigned long long id = here.get<&Walker::id>()[i];
    EXPECT_EQ(here.get<&Walker::home>()[i], me) << "walker " << id;
    EXPECT_EQ(here.get<&Walker::weight>()[i], weight_of(id)) << "walker " << id;
    EXPECT_TRUE(ids.insert(id).second) << "walker " << id << " twice";
    id_sum += id;
  }
  // Nothing lost or doubled over all ranks.
  unsigned long long want_sum = 0;
  for (int r = 0; r < n; ++r)
    for (std::uint64_t i = 0; i < walkers_of(r); ++i) want_sum += id_of(r, i);
  EXPECT_EQ(ctx->sum(static_cast<std::uint64_t>(here.size())), total);
  EXPECT_EQ(ctx->sum(static_cast<std::uint64_t>(id_sum)), static_cast<std::uint64_t>(want_sum));
  EXPECT_EQ(rt.download<Rock>().size(), 7u) << "another class moved";
  sim::census<Field> census(rt);
  const auto everywhere = dist::count_everywhere(census, *ctx);
  EXPECT_EQ(sim::census<Field>::of<Walker>(everywhere), total);
  EXPECT_EQ(sim::census<Field>::of<Rock>(everywhere), 7u * static_cast<std::uint64_t>(n));
  EXPECT_EQ(rt.verify(), "");
  // A second migration finds everyone home: nothing moves.
  const auto again = dist::migrate<Walker>(rt, *ctx, [] SHOAL_DEVICE(Walker* w) { return static_cast<int>(w->home); });
  EXPECT_EQ(again.sent, 0u);
  EXPECT_EQ(again.received, 0u);
}

TEST(Migrate, ARankOutOfRangeOnOneRankStopsEveryRankBeforeAnythingMoves) {
  const int n = ctx->size(), me = ctx->rank();
  Runtime rt(Runtime::bytes_for<Walker, Rock, Strider>(8 * walkers_of(n), 100, 1));
  populate(rt, me, n, 0);
  // The last rank's rule sends its first walker to a rank that does not exist.
  const unsigned long long first = id_of(me, 0);
  const auto rule = [n, me, first] SHOAL_DEVICE(Walker* w) {
    return me == n - 1 && w->id == first ? n : static_cast<int>(w->home);
  };
  try {
    (void)dist::migrate<Walker>(rt, *ctx, rule);
    ADD_FAILURE() << "rank " << me << ": no error";
  } catch (const error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("migrate<"), std::string::npos) << what;
    if (me == n - 1) EXPECT_NE(what.find("destination " + std::to_string(n)), std::string::npos) << what;
  }
  EXPECT_EQ(rt.download<Walker>().size(), walkers_of(me)) << "objects moved or were destroyed";
  EXPECT_EQ(rt.verify(), "");
}

/// A fresh directory that every rank names the same (rank 0's process id), made by rank 0.
std::filesystem::path shared_directory(const std::string& name) {
  std::vector<std::byte> pid(sizeof(int));
  const int mine = static_cast<int>(::getpid());
  if (ctx->root()) std::memcpy(pid.data(), &mine, sizeof mine);
  ctx->broadcast(pid);
  int root_pid = 0;
  std::memcpy(&root_pid, pid.data(), sizeof root_pid);
  const auto dir = std::filesystem::temp_directory_path() / ("shoal_dist_" + name + "_" + std::to_string(root_pid));
  if (ctx->root()) std::filesystem::create_directories(dir);
  ctx->barrier();
  return dir;
}

std::vector<unsigned long long> sorted_ids(Runtime& rt) {
  auto ids = rt.download<Walker>().get<&Walker::id>();
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST(Migrate, AFullReceivingHeapStopsEveryRank) {
  const int n = ctx->size(), me = ctx->rank();
  if (n == 1) GTEST_SKIP() << "one rank: nothing arrives";  // the same on every rank
  // Rank 0's heap holds its own walkers and little more; everyone's go to it.
  const std::uint64_t room = me == 0 ? walkers_of(0) + 64 : 8 * walkers_of(n);
  Runtime rt(Runtime::bytes_for<Walker, Rock, Strider>(room, 1, 1));
  populate(rt, me, n, 0);
  try {
    (void)dist::migrate<Walker>(rt, *ctx, [] SHOAL_DEVICE(Walker*) { return 0; });
    ADD_FAILURE() << "rank " << me << ": no error";
  } catch (const out_of_memory& e) {
    EXPECT_EQ(me, 0) << e.what();
    EXPECT_NE(std::string(e.what()).find("Walker"), std::string::npos) << e.what();
  } catch (const error& e) {
    EXPECT_NE(me, 0) << e.what();
    EXPECT_NE(std::string(e.what()).find("another rank could not make"), std::string::npos) << e.what();
  }
  ctx->barrier();  // every rank got here: none was left waiting
}

TEST(DistBand, StridersThatCrossBandsEndWhereOneRankWouldPutThem) {
  const int n = ctx->size(), me = ctx->rank();
  const std::uint32_t width = 40, height = 4 * static_cast<std::uint32_t>(n) + 5, steps = 30;
  const auto b = dist::band::of(*ctx, width, height, 1, true);
  const std::uint64_t striders = 3000;
  // The same striders whatever the rank count: stride i starts at cell i % cells; each rank makes
  // those that start in its band.
  std::vector<unsigned long long> ids;
  std::vector<std::uint32_t> xs, ys;
  for (std::uint64_t i = 0; i < striders; ++i) {
    const auto y = static_cast<std::uint32_t>(i * 7 % height);
    if (b.rank_of_row(y) != me) continue;
    ids.push_back(i), xs.push_back(static_cast<std::uint32_t>(i % width)), ys.push_back(y);
  }
  Runtime rt(Runtime::bytes_for<Walker, Rock, Strider>(1, 1, 2 * striders));
  rt.upload(agent_columns<Strider>(ids, xs, ys));
  std::uint64_t moved = 0;
  for (std::uint32_t step = 0; step < steps; ++step) {
    rt.parallel_do<&Strider::walk>(step, width, height);
    moved += dist::migrate<Strider>(rt, *ctx, [b] SHOAL_DEVICE(Strider* s) { return b.rank_of_row(s->y); }).sent;
  }
  // One rank's answer, on the host: every strider's walk from the same streams.
  std::uint64_t want_here = 0, want_hash = 0;
  for (std::uint64_t i = 0; i < striders; ++i) {
    std::uint32_t x = static_cast<std::uint32_t>(i % width), y = static_cast<std::uint32_t>(i * 7 % height);
    for (std::uint32_t step = 0; step < steps; ++step) {
      sim::random r(7, i, step, 0);
      x = (x + width + r.below(3) - 1) % width;
      y = (y + height + r.below(3) - 1) % height;
    }
    want_hash += (i + 1) * 1000003 ^ (std::uint64_t{y} * width + x);
    if (b.rank_of_row(y) == me) ++want_here;
  }
  const auto here = rt.download<Strider>();
  EXPECT_EQ(here.size(), want_here);
  std::uint64_t hash = 0;
  for (std::size_t i = 0; i < here.size(); ++i) {
    const std::uint32_t x = here.get<&Strider::x>()[i], y = here.get<&Strider::y>()[i];
    EXPECT_EQ(b.rank_of_row(y), me) << "strider " << here.get<&Strider::id>()[i] << " outside its band";
    hash += (here.get<&Strider::id>()[i] + 1) * 1000003 ^ (std::uint64_t{y} * width + x);
  }
  EXPECT_EQ(ctx->sum(hash), want_hash);
  EXPECT_EQ(ctx->sum(static_cast<std::uint64_t>(here.size())), striders);
  if (n > 1) EXPECT_GT(ctx->sum(moved), 0u) << "no strider crossed a band: the test proves nothing";
  EXPECT_EQ(rt.verify(), "");
}

TEST(DistCheckpoint, EveryRankResumesItsOwnPart) {
  const int n = ctx->size(), me = ctx->rank();
  const auto dir = shared_directory("resume");
  const std::string path = (dir / "run.ckpt").string();
  Runtime rt(Runtime::bytes_for<Walker, Rock, Strider>(8 * walkers_of(n), 100, 1));
  populate(rt, me, n, 3);
  const std::string note = "rank " + std::to_string(me);
  std::vector<std::byte> blob(note.size());
  std::memcpy(blob.data(), note.data(), note.size());
  dist::save(rt, *ctx, path, blob);
  EXPECT_TRUE(std::filesystem::exists(dist::rank_path(path, me, n)));
  std::vector<std::byte> back;
  Runtime again = dist::load<Field>(*ctx, path, &back);
  EXPECT_EQ(sorted_ids(again), sorted_ids(rt));
  EXPECT_EQ(again.download<Rock>().size(), 3u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(back.data()), back.size()), note);
  ctx->barrier();
  if (ctx->root()) std::filesystem::remove_all(dir);
}

TEST(DistCheckpoint, AnotherRankCountOrMixedSavesAreRefusedOnEveryRank) {
  const int n = ctx->size(), me = ctx->rank();
  const auto dir = shared_directory("refuse");
  const std::string path = (dir / "run.ckpt").string(), other = (dir / "other.ckpt").string();
  Runtime rt(Runtime::bytes_for<Walker, Rock, Strider>(8 * walkers_of(n), 100, 1));
  populate(rt, me, n, 0);
  dist::save(rt, *ctx, path, {});
  // A checkpoint that looks written by n + 1 ranks: its rank 0 file only.
  if (ctx->root()) std::filesystem::copy_file(dist::rank_path(path, 0, n), dist::rank_path(other, 0, n + 1));
  ctx->barrier();
  try {
    (void)dist::load<Field>(*ctx, other);
    ADD_FAILURE() << "rank " << me << ": resumed a checkpoint of " << n + 1 << " ranks";
  } catch (const checkpoint_error& e) {
    EXPECT_NE(std::string(e.what()).find("written by " + std::to_string(n + 1) + " ranks, and this run has " + std::to_string(n)),
              std::string::npos)
        << e.what();
  }
  ctx->barrier();
  if (ctx->root()) std::filesystem::remove(dist::rank_path(other, 0, n + 1));
  // Parts of two saves: rank 0's file of a second save among the first save's other files.
  dist::save(rt, *ctx, other, {});
  if (ctx->root())
    std::filesystem::copy_file(dist::rank_path(other, 0, n), dist::rank_path(path, 0, n),
                               std::filesystem::copy_options::overwrite_existing);
  ctx->barrier();
  if (n > 1) {
    try {
      (void)dist::load<Field>(*ctx, path);
      ADD_FAILURE() << "rank " << me << ": resumed parts of two saves";
    } catch (const checkpoint_error& e) {
      EXPECT_NE(std::string(e.what()).find("different saves"), std::string::npos) << e.what();
    }
  }
  // A missing part: every rank refuses, the one without its file says which.
  ctx->barrier();
  if (me == n - 1) std::filesystem::remove(dist::rank_path(other, me, n));
  ctx->barrier();
  try {
    (void)dist::load<Field>(*ctx, other);
    ADD_FAILURE() << "rank " << me << ": resumed without a part";
  } catch (const checkpoint_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(me == n - 1 ? "no such checkpoint file" : "another rank could not save or load its part"),
              std::string::npos)
        << what;
  }
  ctx->barrier();
  if (ctx->root()) std::filesystem::remove_all(dir);
}

/// Every local row of a band after fill_halo: own rows and halos hold their grid cells' values
/// (y × width + x), halo rows past a bounded edge the untouched sentinel.
void check_band(bool torus) {
  const int n = ctx->size();
  const std::uint32_t width = 13, height = 5 * static_cast<std::uint32_t>(n) + 3, halo = 2;
  const auto b = dist::band::of(*ctx, width, height, halo, torus);
  EXPECT_EQ(ctx->sum(std::uint64_t{b.rows}), height);
  for (std::uint32_t y = 0; y < height; ++y) {
    const int r = b.rank_of_row(y);
    EXPECT_TRUE(b.start(r) <= y && y < b.start(r + 1)) << "row " << y;
  }
  constexpr unsigned long long sentinel = ~0ull;
  std::vector<unsigned long long> local(b.local_cells(), sentinel);
  for (std::uint32_t y = b.first_row; y < b.first_row + b.rows; ++y)
    for (std::uint32_t x = 0; x < width; ++x) local[b.local_cell(x, y)] = std::uint64_t{y} * width + x;
  arch::device_buffer<unsigned long long> cells(local.size());
  cells.upload(local);
  dist::fill_halo(*ctx, b, cells.data());
  const auto got = cells.download();
  for (std::uint32_t lr = 0; lr < b.rows + 2 * halo; ++lr) {
    std::int64_t gy = static_cast<std::int64_t>(b.first_row) - halo + lr;
    const bool outside = gy < 0 || gy >= static_cast<std::int64_t>(height);
    if (torus) gy = (gy + height) % height;
    for (std::uint32_t x = 0; x < width; ++x) {
      const unsigned long long want = !torus && outside ? sentinel : static_cast<unsigned long long>(gy) * width + x;
      EXPECT_EQ(got[std::size_t{lr} * width + x], want) << (torus ? "torus" : "bounded") << ", local row " << lr << ", x " << x;
    }
  }
}

TEST(DistBand, HalosHoldTheNeighboursRowsOnATorusAndNothingPastABoundedEdge) {
  check_band(true);
  check_band(false);
  // Bands thinner than the halo are refused on every rank (the same sizes give the same answer).
  EXPECT_THROW((void)dist::band::of(*ctx, 4, static_cast<std::uint32_t>(ctx->size()), 2, true), error);
}

TEST(DistLink, TheTransportIsReadFromTheEnvironmentAndAnUnknownOneIsRefused) {
  ASSERT_EQ(::setenv("SHOAL_DIST_TRANSPORT", "host", 1), 0);
  EXPECT_EQ(dist::transport_from_environment(), dist::transport::host);
  ASSERT_EQ(::setenv("SHOAL_DIST_TRANSPORT", "pigeon", 1), 0);
  EXPECT_THROW((void)dist::transport_from_environment(), error);
  ASSERT_EQ(::setenv("SHOAL_DIST_TRANSPORT", "nccl", 1), 0);
  if (dist::nccl_available()) EXPECT_EQ(dist::transport_from_environment(), dist::transport::nccl);
  else EXPECT_THROW((void)dist::transport_from_environment(), error);  // the cpu backend has none
  ASSERT_EQ(::unsetenv("SHOAL_DIST_TRANSPORT"), 0);
  EXPECT_EQ(dist::transport_from_environment(), dist::transport::host);
}

/// A link used again and again with messages of growing size (its staging buffer grows): each
/// swap delivers this round's rows, not an earlier round's.
TEST(DistLink, SwapsOfGrowingSizeDeliverEachRoundsBytes) {
  const auto b = dist::band::of(*ctx, 4, 2 * static_cast<std::uint32_t>(ctx->size()), 1, true);
  dist::neighbour_link link(*ctx, b.above(), b.below(), dist::transport::host);
  for (std::uint32_t round = 1; round <= 5; ++round) {
    const std::size_t n = 16 * round;  // values per message
    std::vector<std::uint32_t> mine(4 * n);
    for (std::size_t i = 0; i < n; ++i) {
      mine[i] = 1000000 * round + 1000 * static_cast<std::uint32_t>(ctx->rank()) + static_cast<std::uint32_t>(i);  // going up
      mine[n + i] = mine[i] + 500;  // going down
    }
    arch::device_buffer<std::uint32_t> d(4 * n);
    d.upload(mine);
    link.swap(d.data(), d.data() + 2 * n, d.data() + n, d.data() + 3 * n, n * sizeof(std::uint32_t));
    const auto got = d.download();
    for (std::size_t i = 0; i < n; ++i) {
      // From above: what the rank above sent down; from below: what the rank below sent up.
      EXPECT_EQ(got[2 * n + i], 1000000 * round + 1000 * static_cast<std::uint32_t>(b.above()) + i + 500) << "round " << round;
      EXPECT_EQ(got[3 * n + i], 1000000 * round + 1000 * static_cast<std::uint32_t>(b.below()) + i) << "round " << round;
    }
  }
}

}  // namespace
}  // namespace shoal::test

int main(int argc, char** argv) {
  shoal::dist::context context(&argc, &argv);
  shoal::test::ctx = &context;
  testing::InitGoogleTest(&argc, argv);
  // Rank 0 prints the results; the others only their failures.
  if (!context.root()) {
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  return context.any(failed != 0) ? 1 : 0;
}
