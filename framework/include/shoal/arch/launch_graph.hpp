#pragma once
/// @file
/// Two launches that always run together, as one: for_each_index over n items, then
/// for_each_listed over the list the first one wrote (a do-all's enumeration and visit).
///
/// On cuda the pair is an instantiated CUDA graph, made once per pair of kernels (and variant)
/// and launched with one call. Launching a graph costs the host about what one kernel launch
/// does, and the GPU starts its second kernel sooner than a second launch can reach it: on an
/// H100, two empty kernels took 9–10.5 µs from an idle stream as two launches and 5.0–5.7 µs as
/// one graph (3.2–3.5 against 6.6–7.1 µs back to back). A later call whose arguments differ from
/// those the graph holds updates the graph's nodes first (cudaGraphExecKernelNodeSetParams; it
/// affects later launches only, not those already enqueued). On cpu the two run one after the other.
///
/// A launch_graphs is used from one host thread at a time (as its runtime is).

#include <cstddef>
#include <cstdint>
#include <utility>

#include "shoal/arch/launch.hpp"

#if defined(SHOAL_BACKEND_CUDA)
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>
#include <type_traits>
#include <vector>
#endif

namespace shoal::arch {

#if defined(SHOAL_BACKEND_CUDA)

/// The graphs of one owner (a runtime), destroyed with it.
class launch_graphs {
 public:
  /// One instantiated graph of two kernel nodes, and the arguments each node holds now.
  struct pair {
    cudaGraphExec_t exec = nullptr;
    cudaGraphNode_t first = nullptr, second = nullptr;
    void* first_function = nullptr;  // the kernels the nodes run (as the graph names them)
    void* second_function = nullptr;
    std::vector<std::byte> first_launch, second_launch;  // grid and arguments, as bytes
    bool plain = false;  // the graph could not be made: launch the kernels one by one
  };
  using key = std::tuple<const void*, const void*, int>;  // the two kernels and a variant

  launch_graphs();
  ~launch_graphs();
  launch_graphs(launch_graphs&&) noexcept;
  launch_graphs& operator=(launch_graphs&&) noexcept;
  launch_graphs(const launch_graphs&) = delete;
  launch_graphs& operator=(const launch_graphs&) = delete;

  /// The pair for `k` (empty, exec == nullptr, when it is new).
  pair& at(const key& k);
  /// How many pairs run as graphs, and how many could not be made graphs (launched one by one).
  std::size_t graphs() const;
  std::size_t fallbacks() const;
  /// Makes p's graph from `record(stream)`, which enqueues the two kernels on the stream it is
  /// given, and launches nothing else. Kernels it enqueues are captured, not run. Returns false
  /// (and leaves p.plain set) if the graph could not be made.
  template <class Record>
  bool make(pair& p, Record&& record) {
    begin_capture();
    try {
      std::forward<Record>(record)(capture_stream());
    } catch (...) {
      abandon_capture();
      throw;
    }
    return end_capture(p);
  }

 private:
  struct state;
  void begin_capture();
  cudaStream_t capture_stream();
  bool end_capture(pair& p);
  void abandon_capture();
  std::unique_ptr<state> state_;
};

namespace detail {

/// The bytes of a launch (grid, then each argument), to tell whether a graph node holds it.
template <class... Params>
std::array<std::byte, sizeof(unsigned) + (sizeof(Params) + ... + 0)> launch_bytes(unsigned grid,
                                                                                const Params&... args) {
  std::array<std::byte, sizeof(unsigned) + (sizeof(Params) + ... + 0)> bytes;
  std::size_t at = 0;
  auto put = [&](const void* p, std::size_t n) {
    std::memcpy(bytes.data() + at, p, n);
    at += n;
  };
  put(&grid, sizeof grid);
  (put(&args, sizeof(Params)), ...);
  return bytes;
}

/// Sets graph node `node` of `exec`, which runs `function` (a kernel of type void(Params...)), to
/// function<<<grid, launch_block_size>>>(args...) unless it holds exactly that launch already
/// (`held`: its bytes).
template <class... Params>
void update_node(cudaGraphExec_t exec, cudaGraphNode_t node, void* function, std::vector<std::byte>& held,
                 void (*)(Params...), unsigned grid, const std::type_identity_t<Params>&... args) {
  const auto bytes = launch_bytes<Params...>(grid, args...);
  if (held.size() == bytes.size() && std::memcmp(held.data(), bytes.data(), bytes.size()) == 0) return;
  void* pointers[] = {const_cast<void*>(static_cast<const void*>(&args))...};
  cudaKernelNodeParams p{};
  p.func = function;
  p.gridDim = dim3(grid);
  p.blockDim = dim3(launch_block_size);
  p.sharedMemBytes = 0;
  p.kernelParams = pointers;
  SHOAL_CUDA_CHECK(cudaGraphExecKernelNodeSetParams(exec, node, &p));
  held.assign(bytes.begin(), bytes.end());
}

}  // namespace detail

/// for_each_index(n, first, context), then for_each_listed<Per>(list, count, max_entries, second,
/// peek, context, reset), enqueued on the default stream as one graph launch. `variant` tells
/// apart graphs of the same kernels whose arguments alternate (a do-all's two counters), so that
/// each keeps its arguments and needs no update.
template <std::uint32_t Per, class First, class Second, class Peek>
void for_each_index_then_listed(launch_graphs& graphs, int variant, std::size_t n, First first,
                                const std::uint32_t* list, const unsigned long long* count,
                                std::size_t max_entries, Second second, Peek peek, const void* context,
                                unsigned long long* reset) {
  require_device();
  void (*first_kernel)(const void*, std::size_t, First) = detail::for_each_index_kernel<First>;
  void (*second_kernel)(const void*, const std::uint32_t*, const unsigned long long*, unsigned long long*, Second,
                        Peek) = detail::for_each_listed_kernel<Per, Second, Peek>;
  auto one_by_one = [&](cudaStream_t stream) {
    for_each_index(n, first, context, stream);
    for_each_listed<Per>(list, count, max_entries, second, peek, context, reset, stream);
  };
  // An empty launch is no kernel (and for_each_listed then resets with a memset): no graph.
  if (n == 0 || max_entries == 0) return one_by_one(nullptr);
  const unsigned first_grid = launch_grid_size(n);
  const unsigned second_grid = resident_grid_size(max_entries * Per);
  launch_graphs::pair& p = graphs.at({reinterpret_cast<const void*>(first_kernel),
                                      reinterpret_cast<const void*>(second_kernel), variant});
  if (p.plain) return one_by_one(nullptr);
  if (p.exec == nullptr) {
    if (!graphs.make(p, one_by_one)) return one_by_one(nullptr);
    const auto first_bytes = detail::launch_bytes(first_grid, context, n, first);
    const auto second_bytes = detail::launch_bytes(second_grid, context, list, count, reset, second, peek);
    p.first_launch.assign(first_bytes.begin(), first_bytes.end());
    p.second_launch.assign(second_bytes.begin(), second_bytes.end());
  } else {
    detail::update_node(p.exec, p.first, p.first_function, p.first_launch, first_kernel, first_grid, context, n,
                        first);
    detail::update_node(p.exec, p.second, p.second_function, p.second_launch, second_kernel, second_grid, context,
                        list, count, reset, second, peek);
  }
  SHOAL_CUDA_CHECK(cudaGraphLaunch(p.exec, nullptr));
}

#else

/// Nothing to keep on cpu: the two launches run one after the other.
class launch_graphs {};

/// for_each_index, then for_each_listed (see the cuda version).
template <std::uint32_t Per, class First, class Second, class Peek>
void for_each_index_then_listed(launch_graphs&, int, std::size_t n, First first, const std::uint32_t* list,
                                const unsigned long long* count, std::size_t max_entries, Second second, Peek peek,
                                const void* context, unsigned long long* reset) {
  for_each_index(n, first, context);
  for_each_listed<Per>(list, count, max_entries, second, peek, context, reset);
}

#endif

}  // namespace shoal::arch
