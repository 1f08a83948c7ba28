// Device code of the checkpoint test model (checkpoint_model.hpp): free functions, because nvcc
// cannot define device lambdas inside gtest bodies.
#include "checkpoint_model.hpp"

namespace shoal::test::ckpt {

void build_graph(GraphRuntime& rt, Link** roots, std::uint64_t n) {
  arch::device_buffer<Item*> items(3 * n);
  Item** it = items.data();
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    const auto id = static_cast<long long>(i);
    Link* l = new Link(id);
    roots[i] = l;
    for (int k = 0; k < 3; ++k) {
      const long long item_id = static_cast<long long>(n) + 3 * id + k;
      Item* x = nullptr;
      if ((i + k) % 4 == 0) x = nullptr;
      else if (k == 1) x = new Gem(item_id, 0.25f * static_cast<float>(i));
      else x = new Coin(item_id, 1.5 * static_cast<double>(i) + k);
      it[3 * i + k] = x;
      l->items[k] = x;
    }
  });
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    const std::uint64_t j = (i * 7 + 3) % n;
    roots[i]->next = (j % 5 == 0) ? nullptr : roots[j];  // never to a link destroyed below
    for (int k = 0; k < 3; ++k)
      if (Item* x = it[3 * i + k]) x->twin = it[(3 * i + k + 5) % (3 * n)];  // may be null
  });
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    if (i % 5 == 0) {  // the link goes; its items stay, reachable through twins or not at all
      delete roots[i];
      roots[i] = nullptr;
    }
  });
}

std::vector<object_state> dump(GraphRuntime& rt, std::uint64_t n) {
  arch::device_buffer<object_state> out(ids_for(n));
  std::vector<object_state> empty(ids_for(n));
  out.upload(empty);
  rt.parallel_do<&Link::dump>(out.data());
  rt.parallel_do<&Coin::dump>(out.data());
  rt.parallel_do<&Gem::dump>(out.data());
  rt.synchronize();
  return out.download();
}

std::vector<long long> root_ids(GraphRuntime& rt, Link** roots, std::uint64_t n) {
  arch::device_buffer<long long> out(n);
  long long* o = out.data();
  rt.launch(n, [=] SHOAL_DEVICE(std::size_t i) {
    Link* l = roots[i];
    o[i] = l ? l->id.get() : -1;
  });
  return out.download();
}

}  // namespace shoal::test::ckpt
