#pragma once
/// @file
/// Two launches that always run together, as one: for_each_index over n items, then
/// for_each_listed over the list the first one wrote (a do-all's enumeration and visit).
///
/// On cuda the pair is an instantiated CUDA graph, made once per pair of kernels (and variant)
/// and launched with one call. Launching a graph costs the host about what one kernel launch
/// does, and the GPU starts its second kernel sooner than a second launch can reach it: on an
/// H100, two empty kernels took 9–10.5 µs from an idle stream as two launches and 5.0–5.7 µs as
/// one graph (3.2–3.5 against 6.6–7.1 µs back to back).
///
/// A call whose arguments are those the graph holds launches it. A call whose arguments differ
/// but are those of the call before (an argument that changed and stays, like a new time step)
/// first updates the graph's nodes (cudaGraphExecKernelNodeSetParams: later launches only, not
/// those already enqueued). A call whose arguments differ from both (an argument that changes
/// every call, like a step number) launches the two kernels one by one instead: updating the graph
/// for every call made traffic, whose plan do-all takes the step number, 0.75% slower on the H100
/// (2.542 against 2.523 s, three runs each; launching one by one then: 2.523 s, as without graphs).
/// On cpu the two run one after the other.
///
/// A launch_graphs is used from one host thread at a time (as its runtime is).

#include <cstddef>
#include <cstdint>
#include <utility>

#include "shoal/arch/launch.hpp"

#if defined(SHOAL_BACKEND_CUDA)
#include <array>
#include <cstring>
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
    cudaGraphExec_t exec = nullptr;  ///< the instantiated graph (nullptr until made)
    /// The node that runs the first kernel (for_each_index's).
    cudaGraphNode_t first = nullptr, second = nullptr;  ///< the node that runs the second (for_each_listed's)
    void* first_function = nullptr;  ///< the kernels the nodes run (as the graph names them)
    /// The second node's kernel (as the graph names it).
    void* second_function = nullptr;
    /// Grid and arguments the first node holds, as bytes.
    std::vector<std::byte> first_launch, second_launch;  ///< grid and arguments the graph holds, as bytes
    std::vector<std::byte> last_call;                     ///< those of the previous call, both kernels
    bool plain = false;  ///< the graph could not be made: launch the kernels one by one
  };
  using key = std::tuple<const void*, const void*, int>;  ///< the two kernels and a variant

  launch_graphs();
  ~launch_graphs();
  /// Takes over the other owner's graphs.
  launch_graphs(launch_graphs&&) noexcept;
  /// Destroys this owner's graphs and takes over the other's.
  launch_graphs& operator=(launch_graphs&&) noexcept;
  launch_graphs(const launch_graphs&) = delete;
  launch_graphs& operator=(const launch_graphs&) = delete;

  /// The pair for `k` (empty, exec == nullptr, when it is new).
  pair& at(const key& k);
  /// How many pairs run as graphs, and how many could not be made graphs (launched one by one).
  std::size_t graphs() const;
  /// How many pairs could not be made graphs (their kernels are launched one by one).
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

template <std::size_t N>
bool same_bytes(const std::vector<std::byte>& a, const std::array<std::byte, N>& b) {
  return a.size() == N && std::memcmp(a.data(), b.data(), N) == 0;
}

/// Whether `last` holds a's bytes followed by b's.
template <std::size_t N, std::size_t M>
bool same_bytes(const std::vector<std::byte>& last, const std::array<std::byte, N>& a,
                const std::array<std::byte, M>& b) {
  return last.size() == N + M && std::memcmp(last.data(), a.data(), N) == 0 &&
         std::memcmp(last.data() + N, b.data(), M) == 0;
}

template <std::size_t N, std::size_t M>
void assign_bytes(std::vector<std::byte>& last, const std::array<std::byte, N>& a, const std::array<std::byte, M>& b) {
  last.assign(a.begin(), a.end());
  last.insert(last.end(), b.begin(), b.end());
}

/// Sets graph node `node` of `exec`, which runs `function` (a kernel of type void(Params...)), to
/// function<<<grid, launch_block_size>>>(args...).
template <class... Params>
void set_node(cudaGraphExec_t exec, cudaGraphNode_t node, void* function, void (*)(Params...), unsigned grid,
              const std::type_identity_t<Params>&... args) {
  void* pointers[] = {const_cast<void*>(static_cast<const void*>(&args))...};
  cudaKernelNodeParams p{};
  p.func = function;
  p.gridDim = dim3(grid);
  p.blockDim = dim3(launch_block_size);
  p.sharedMemBytes = 0;
  p.kernelParams = pointers;
  SHOAL_CUDA_CHECK(cudaGraphExecKernelNodeSetParams(exec, node, &p));
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
  const auto first_bytes = detail::launch_bytes(first_grid, context, n, first);
  const auto second_bytes = detail::launch_bytes(second_grid, context, list, count, reset, second, peek);
  if (p.exec == nullptr) {
    if (!graphs.make(p, one_by_one)) return one_by_one(nullptr);
    p.first_launch.assign(first_bytes.begin(), first_bytes.end());
    p.second_launch.assign(second_bytes.begin(), second_bytes.end());
    detail::assign_bytes(p.last_call, first_bytes, second_bytes);
  } else {
    const bool first_held = detail::same_bytes(p.first_launch, first_bytes);
    const bool second_held = detail::same_bytes(p.second_launch, second_bytes);
    const bool as_last_call = detail::same_bytes(p.last_call, first_bytes, second_bytes);
    detail::assign_bytes(p.last_call, first_bytes, second_bytes);
    if (!first_held || !second_held) {
      if (!as_last_call) return one_by_one(nullptr);  // arguments that change every call
      if (!first_held) {
        detail::set_node(p.exec, p.first, p.first_function, first_kernel, first_grid, context, n, first);
        p.first_launch.assign(first_bytes.begin(), first_bytes.end());
      }
      if (!second_held) {
        detail::set_node(p.exec, p.second, p.second_function, second_kernel, second_grid, context, list, count,
                         reset, second, peek);
        p.second_launch.assign(second_bytes.begin(), second_bytes.end());
      }
    }
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
