// The CUDA graphs behind for_each_index_then_listed: capture, instantiation and clean-up.
#include "shoal/arch/launch_graph.hpp"

#if defined(SHOAL_BACKEND_CUDA)

#include <cstdio>
#include <map>
#include <vector>

namespace shoal::arch {

struct launch_graphs::state {
  std::map<key, pair> pairs;
  std::vector<cudaGraph_t> graphs;  // kept: their nodes name the nodes of the instantiated graphs
  cudaStream_t stream = nullptr;    // where launches are captured (captures need a stream of their own)
  bool warned = false;              // a graph could not be made (said once)

  ~state() {
    // No checks: this may run after the CUDA runtime has shut down (a runtime at static scope).
    for (auto& [k, p] : pairs)
      if (p.exec != nullptr) cudaGraphExecDestroy(p.exec);
    for (cudaGraph_t g : graphs) cudaGraphDestroy(g);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};

launch_graphs::launch_graphs() : state_(std::make_unique<state>()) {}
launch_graphs::~launch_graphs() = default;
launch_graphs::launch_graphs(launch_graphs&&) noexcept = default;
launch_graphs& launch_graphs::operator=(launch_graphs&&) noexcept = default;

launch_graphs::pair& launch_graphs::at(const key& k) { return state_->pairs[k]; }

std::size_t launch_graphs::graphs() const {
  std::size_t n = 0;
  for (const auto& [k, p] : state_->pairs) n += p.exec != nullptr;
  return n;
}

std::size_t launch_graphs::fallbacks() const {
  std::size_t n = 0;
  for (const auto& [k, p] : state_->pairs) n += p.plain;
  return n;
}

cudaStream_t launch_graphs::capture_stream() { return state_->stream; }

void launch_graphs::begin_capture() {
  if (state_->stream == nullptr) SHOAL_CUDA_CHECK(cudaStreamCreateWithFlags(&state_->stream, cudaStreamNonBlocking));
  // Thread-local: CUDA calls of other host threads are not captured or refused meanwhile.
  SHOAL_CUDA_CHECK(cudaStreamBeginCapture(state_->stream, cudaStreamCaptureModeThreadLocal));
}

void launch_graphs::abandon_capture() {
  cudaGraph_t graph = nullptr;
  if (cudaStreamEndCapture(state_->stream, &graph) == cudaSuccess && graph != nullptr) cudaGraphDestroy(graph);
  cudaGetLastError();
}

bool launch_graphs::end_capture(pair& p) {
  cudaGraph_t graph = nullptr;
  cudaError_t err = cudaStreamEndCapture(state_->stream, &graph);
  if (err == cudaSuccess) err = cudaGraphInstantiate(&p.exec, graph, 0);
  // The nodes are told apart by the edge between them, not by kernel: a kernel template's host
  // function has a different address in every translation unit that launches it, so the address
  // the caller has need not be the one the captured node holds.
  std::size_t count = 0, roots = 0;
  if (err == cudaSuccess) err = cudaGraphGetNodes(graph, nullptr, &count);
  if (err == cudaSuccess) err = cudaGraphGetRootNodes(graph, nullptr, &roots);
  if (err == cudaSuccess && count == 2 && roots == 1) {
    cudaGraphNode_t nodes[2], root = nullptr;
    err = cudaGraphGetNodes(graph, nodes, &count);
    if (err == cudaSuccess) err = cudaGraphGetRootNodes(graph, &root, &roots);
    if (err == cudaSuccess) {
      p.first = root;
      p.second = nodes[0] == root ? nodes[1] : nodes[0];
    }
    cudaKernelNodeParams params{};
    if (err == cudaSuccess) err = cudaGraphKernelNodeGetParams(p.first, &params);
    p.first_function = params.func;
    if (err == cudaSuccess) err = cudaGraphKernelNodeGetParams(p.second, &params);
    p.second_function = params.func;
  }
  if (graph != nullptr) state_->graphs.push_back(graph);
  if (err == cudaSuccess && p.first != nullptr && p.second != nullptr) return true;
  // Not expected on a working device; the launches then go one by one, as without graphs.
  if (!state_->warned)
    std::fprintf(stderr, "shoal: a do-all's two launches could not be made one CUDA graph (%s, %zu nodes, %zu "
                 "roots); they are launched one by one\n", cudaGetErrorString(err), count, roots);
  state_->warned = true;
  cudaGetLastError();
  if (p.exec != nullptr) cudaGraphExecDestroy(p.exec);
  p.exec = nullptr;
  p.plain = true;
  return false;
}

}  // namespace shoal::arch

#endif
