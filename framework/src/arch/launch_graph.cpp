// The CUDA graphs behind for_each_index_then_listed: capture, instantiation and clean-up.
#include "shoal/arch/launch_graph.hpp"

#if defined(SHOAL_BACKEND_CUDA)

#include <map>
#include <vector>

namespace shoal::arch {

struct launch_graphs::state {
  std::map<key, pair> pairs;
  std::vector<cudaGraph_t> graphs;  // kept: their nodes name the nodes of the instantiated graphs
  cudaStream_t stream = nullptr;    // where launches are captured (captures need a stream of their own)

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

bool launch_graphs::end_capture(pair& p, const void* first_kernel, const void* second_kernel) {
  cudaGraph_t graph = nullptr;
  cudaError_t err = cudaStreamEndCapture(state_->stream, &graph);
  if (err == cudaSuccess) err = cudaGraphInstantiate(&p.exec, graph, 0);
  if (err == cudaSuccess) {
    std::size_t count = 0;
    err = cudaGraphGetNodes(graph, nullptr, &count);
    std::vector<cudaGraphNode_t> nodes(count);
    if (err == cudaSuccess) err = cudaGraphGetNodes(graph, nodes.data(), &count);
    for (std::size_t i = 0; err == cudaSuccess && i < count; ++i) {
      cudaKernelNodeParams params{};
      err = cudaGraphKernelNodeGetParams(nodes[i], &params);
      if (params.func == first_kernel) p.first = nodes[i];
      if (params.func == second_kernel) p.second = nodes[i];
    }
  }
  if (graph != nullptr) state_->graphs.push_back(graph);
  if (err != cudaSuccess || p.first == nullptr || p.second == nullptr) {
    // Not expected on a working device; the launches then go one by one, as without graphs.
    cudaGetLastError();
    if (p.exec != nullptr) cudaGraphExecDestroy(p.exec);
    p.exec = nullptr;
    p.plain = true;
    return false;
  }
  return true;
}

}  // namespace shoal::arch

#endif
