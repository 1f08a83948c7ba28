// Tiled all-pairs interactions: every ordered pair of distinct live objects interacts exactly
// once (checked with exact integer sums, also across the GPU's partner slices and with holes
// left by destroyed objects), forces agree with a host reference, runs are reproducible, and an
// empty class is a no-op. Compiled for both backends.
#include <cmath>

#include "test_support.hpp"

namespace shoal::test {

class Point;
using PairHeap = shoal::heap<Point>;

class Point : public object<PairHeap, Point> {
 public:
  SHOAL_FIELDS(Point, (unsigned long long, id), (float, x), (float, y), (float, mass),
               (unsigned long long, partners), (unsigned long long, partner_ids), (float, fx),
               (float, fy))
  SHOAL_HD explicit Point(unsigned long long i) {
    id = i;
    // A fixed scatter over the unit square, a function of the id only.
    x = static_cast<float>((i * 7919u) % 1009u) / 1009.0f;
    y = static_cast<float>((i * 104729u) % 997u) / 997.0f;
    mass = 1.0f + static_cast<float>(i % 5);
    partners = 0, partner_ids = 0, fx = 0.0f, fy = 0.0f;
  }
  SHOAL_HD void die_if_multiple_of(unsigned long long k) {
    if (id % k == 0) delete this;
  }
};

/// Counts partners and sums their ids: exact, so a missed or doubled pair shows.
struct count_partners {
  using value = unsigned long long;
  struct accumulator {
    unsigned long long count, ids;
  };
  SHOAL_HD value project(Point* p) const { return p->id; }
  SHOAL_HD void interact(const value&, const value& other, accumulator& a) const {
    a.count += 1;
    a.ids += other;
  }
  SHOAL_HD void combine(accumulator& a, const accumulator& part) const {
    a.count += part.count;
    a.ids += part.ids;
  }
  SHOAL_HD void apply(Point* p, const accumulator& a) const {
    p->partners = a.count;
    p->partner_ids = a.ids;
  }
};

/// The same without combine(): the partner range is never sliced.
struct count_partners_unsliced {
  using value = unsigned long long;
  using accumulator = count_partners::accumulator;
  SHOAL_HD value project(Point* p) const { return p->id; }
  SHOAL_HD void interact(const value& s, const value& o, accumulator& a) const {
    count_partners{}.interact(s, o, a);
  }
  SHOAL_HD void apply(Point* p, const accumulator& a) const { count_partners{}.apply(p, a); }
};
static_assert(combinable_interaction<count_partners>);
static_assert(!combinable_interaction<count_partners_unsliced>);

/// Softened 2-D gravity (G = 1), as n-body uses it.
struct gravity {
  struct value {
    float x, y, mass;
  };
  struct accumulator {
    float fx, fy;
  };
  float softening;
  SHOAL_HD value project(Point* p) const { return {p->x, p->y, p->mass}; }
  SHOAL_HD void interact(const value& s, const value& o, accumulator& a) const {
    const float dx = o.x - s.x, dy = o.y - s.y;
    const float r2 = dx * dx + dy * dy + softening * softening;
    const float inv_r = 1.0f / std::sqrt(r2);
    const float f = s.mass * o.mass * inv_r * inv_r * inv_r;
    a.fx += f * dx;
    a.fy += f * dy;
  }
  SHOAL_HD void combine(accumulator& a, const accumulator& part) const {
    a.fx += part.fx;
    a.fy += part.fy;
  }
  SHOAL_HD void apply(Point* p, const accumulator& a) const {
    p->fx = a.fx;
    p->fy = a.fy;
  }
};

struct point_result {
  unsigned long long id, partners, partner_ids;
  float x, y, mass, fx, fy;
};

/// Every live point's fields, indexed by id (id = ~0 where the point is gone).
std::vector<point_result> download_points(runtime<PairHeap>& rt, std::uint64_t n) {
  arch::device_buffer<point_result> out(n);
  std::vector<point_result> none(n, point_result{~0ull, 0, 0, 0, 0, 0, 0, 0});
  out.upload(none);
  point_result* o = out.data();
  rt.launch(1, [=] SHOAL_DEVICE(std::size_t) {
    device_do<Point>([&](Point* p) {
      o[p->id] = {p->id, p->partners, p->partner_ids, p->x, p->y, p->mass, p->fx, p->fy};
    });
  });
  return out.download();
}

TEST(AllPairs, EveryOrderedPairOfLiveObjectsInteractsOnce) {
  SHOAL_REQUIRE_DEVICE();
  // Large enough for many partner slices on the GPU; a third of the points destroyed leaves
  // holes in every block.
  const std::uint64_t n = 6000 / (scale_down > 1 ? 3 : 1) + 1;
  runtime<PairHeap> rt(std::size_t{16} << 20);
  rt.parallel_new<Point>(n);
  rt.parallel_do<&Point::die_if_multiple_of>(3ull);
  rt.synchronize();
  std::uint64_t live = 0, id_sum = 0;
  for (std::uint64_t i = 1; i < n; ++i)
    if (i % 3 != 0) ++live, id_sum += i;

  for (int sliced = 0; sliced < 2; ++sliced) {
    if (sliced) rt.all_pairs<Point>(count_partners{});
    else rt.all_pairs<Point>(count_partners_unsliced{});
    rt.synchronize();
    std::uint64_t seen = 0;
    for (const point_result& p : download_points(rt, n)) {
      if (p.id == ~0ull) continue;
      ++seen;
      ASSERT_EQ(p.partners, live - 1) << "point " << p.id << (sliced ? " (sliced)" : "");
      ASSERT_EQ(p.partner_ids, id_sum - p.id) << "point " << p.id << (sliced ? " (sliced)" : "");
    }
    EXPECT_EQ(seen, live);
  }
}

/// all_pairs(op, share): partners from outside the heap (other ranks' objects in nbody_mpi), the
/// heap's own among them at an offset that is no multiple of the GPU's tile, so an object's own
/// value falls in a different tile from its neighbours': each object meets every partner but
/// itself, sliced and unsliced.
TEST(AllPairs, PartnersFromOutsideTheHeapAreEveryOneButTheObjectItself) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint64_t n = 2000 / (scale_down > 1 ? 4 : 1), before = 77, after = 3001 / (scale_down > 1 ? 4 : 1);
  runtime<PairHeap> rt(std::size_t{16} << 20);
  rt.parallel_new<Point>(n);
  rt.synchronize();
  std::vector<unsigned long long> all(before + n + after);
  for (std::uint64_t j = 0; j < all.size(); ++j) all[j] = 1000000 + j;  // the others' ids
  arch::device_buffer<unsigned long long> partners(all.size());
  partners.upload(all);
  unsigned long long total = 0;
  for (std::uint64_t j = 0; j < before; ++j) total += all[j];
  for (std::uint64_t j = before + n; j < all.size(); ++j) total += all[j];
  for (std::uint64_t i = 0; i < n; ++i) total += i;  // the heap's own, ids 0..n-1
  for (int sliced = 0; sliced < 2; ++sliced) {
    std::uint64_t shared = 0;
    const auto share = [&](unsigned long long* mine, std::uint64_t count) {
      shared = count;
      std::vector<unsigned long long> own(count);
      arch::copy_to_host(own.data(), mine, count * sizeof(unsigned long long));
      for (std::uint64_t k = 0; k < count; ++k) EXPECT_EQ(own[k], k) << "object order";
      arch::copy_on_device(partners.data() + before, mine, count * sizeof(unsigned long long));
      return detail::partner_values<unsigned long long>{partners.data(), all.size(), before};
    };
    if (sliced) rt.all_pairs<Point>(count_partners{}, share);
    else rt.all_pairs<Point>(count_partners_unsliced{}, share);
    rt.synchronize();
    EXPECT_EQ(shared, n);
    for (const point_result& p : download_points(rt, n)) {
      ASSERT_NE(p.id, ~0ull);
      ASSERT_EQ(p.partners, all.size() - 1) << "point " << p.id << (sliced ? " (sliced)" : "");
      ASSERT_EQ(p.partner_ids, total - p.id) << "point " << p.id << (sliced ? " (sliced)" : "");
    }
  }
}

TEST(AllPairs, GravityMatchesAHostReferenceAndIsReproducible) {
  SHOAL_REQUIRE_DEVICE();
  const std::uint64_t n = 3000 / scale_down + 7;
  runtime<PairHeap> rt(std::size_t{16} << 20);
  rt.parallel_new<Point>(n);
  const gravity g{0.05f};
  rt.all_pairs<Point>(g);
  rt.synchronize();
  const auto first = download_points(rt, n);
  rt.all_pairs<Point>(g);
  rt.synchronize();
  const auto second = download_points(rt, n);

  for (std::uint64_t i = 0; i < n; ++i) {
    const point_result& p = first[i];
    ASSERT_EQ(p.id, i);
    EXPECT_EQ(p.fx, second[i].fx) << "point " << i << ": not reproducible";
    EXPECT_EQ(p.fy, second[i].fy) << "point " << i << ": not reproducible";
    double fx = 0, fy = 0, scale = 0;
    for (std::uint64_t j = 0; j < n; ++j) {
      if (j == i) continue;
      const point_result& o = first[j];
      const double dx = double(o.x) - p.x, dy = double(o.y) - p.y;
      const double r2 = dx * dx + dy * dy + 0.05 * 0.05;
      const double f = double(p.mass) * o.mass / (r2 * std::sqrt(r2));
      fx += f * dx, fy += f * dy;
      scale += std::abs(f * dx) + std::abs(f * dy);
    }
    // Float sums of n terms: error bounded by a few ulps times the sum of magnitudes.
    EXPECT_NEAR(p.fx, fx, 1e-5 * scale) << "point " << i;
    EXPECT_NEAR(p.fy, fy, 1e-5 * scale) << "point " << i;
  }
}

TEST(AllPairs, NoObjectsIsANoOpAndOneObjectHasNoPartners) {
  SHOAL_REQUIRE_DEVICE();
  runtime<PairHeap> rt(std::size_t{4} << 20);
  rt.all_pairs<Point>(count_partners{});
  rt.synchronize();
  rt.parallel_new<Point>(1);
  rt.all_pairs<Point>(count_partners{});
  rt.synchronize();
  const auto points = download_points(rt, 1);
  EXPECT_EQ(points[0].partners, 0u);
  EXPECT_EQ(rt.verify(), "");
}

}  // namespace shoal::test
