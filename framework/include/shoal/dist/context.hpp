#pragma once
/// @file
/// One process of a distributed run (issue: one model over several processes and GPUs): MPI
/// started and stopped, this rank and the rank count, and the few collectives the distributed
/// layer needs, with MPI's failures turned into shoal::error. Only code that includes
/// shoal/dist/ needs MPI; the rest of Shoal builds without it.
///
///   int main(int argc, char** argv) {
///     shoal::dist::context ctx(&argc, &argv);           // MPI_Init_thread, MPI_Finalize at exit
///     const std::uint64_t all = ctx.sum(local_count);   // over every rank
///     if (ctx.root()) std::printf("%llu agents\n", (unsigned long long)all);
///   }

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "shoal/arch/error.hpp"

namespace shoal::dist {

namespace detail {

/// Throws shoal::error with MPI's own message unless rc is MPI_SUCCESS.
inline void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
  throw error(std::string("shoal::dist: ") + call + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

}  // namespace detail

/// MPI for this process. Starts MPI (one thread calls it: MPI_THREAD_FUNNELED) unless it is
/// running already, and finalizes it on destruction if it started it. Errors of the calls below
/// throw shoal::error with MPI's own message; every rank must make the same collective calls in
/// the same order, as MPI requires.
class context {
 public:
  /// Starts MPI with the program's arguments (either may be nullptr).
  context(int* argc, char*** argv) {
    int running = 0;
    check(MPI_Initialized(&running), "MPI_Initialized");
    if (!running) {
      int provided = 0;
      check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
      owns_ = true;
    }
    // Failures come back as codes (turned into exceptions) rather than aborting every rank.
    check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    // The ranks that share this machine (and its GPUs).
    MPI_Comm machine = MPI_COMM_NULL;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &machine), "MPI_Comm_split_type");
    check(MPI_Comm_rank(machine, &local_rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(machine, &local_size_), "MPI_Comm_size");
    check(MPI_Comm_free(&machine), "MPI_Comm_free");
  }
  context(const context&) = delete;
  context& operator=(const context&) = delete;
  /// Finalizes MPI if this context started it.
  ~context() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owns_ && !finalized) MPI_Finalize();
  }

  /// This process's rank, 0 to size() - 1.
  int rank() const { return rank_; }
  /// The number of ranks.
  int size() const { return size_; }
  /// Whether this is rank 0 (the one that writes the run's files and lines).
  bool root() const { return rank_ == 0; }
  /// This process's rank among the ranks on its machine, 0 to local_size() - 1.
  int local_rank() const { return local_rank_; }
  /// The number of ranks on this process's machine.
  int local_size() const { return local_size_; }

  /// The sum of `value` over every rank, on every rank.
  std::uint64_t sum(std::uint64_t value) const {
    unsigned long long in = value, out = 0;
    check(MPI_Allreduce(&in, &out, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    return out;
  }
  /// The element-wise sums of `values` (the same length on every rank) over every rank.
  std::vector<std::uint64_t> sum(const std::vector<std::uint64_t>& values) const {
    std::vector<unsigned long long> in(values.begin(), values.end()), out(values.size());
    check(MPI_Allreduce(in.data(), out.data(), count_of(in.size()), MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                        MPI_COMM_WORLD),
          "MPI_Allreduce");
    return std::vector<std::uint64_t>(out.begin(), out.end());
  }
  /// Whether `flag` is true on any rank, on every rank (for a check that one rank failed, made
  /// before a collective that the others would otherwise wait in).
  bool any(bool flag) const {
    int in = flag ? 1 : 0, out = 0;
    check(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD), "MPI_Allreduce");
    return out != 0;
  }

  /// Replaces `bytes` on every rank by rank `from`'s.
  void broadcast(std::vector<std::byte>& bytes, int from = 0) const {
    unsigned long long n = bytes.size();
    check(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, from, MPI_COMM_WORLD), "MPI_Bcast");
    bytes.resize(n);
    check(MPI_Bcast(bytes.data(), count_of(n), MPI_BYTE, from, MPI_COMM_WORLD), "MPI_Bcast");
  }

  /// Every rank sends `to[r]` to rank r (`to` has size() entries, empty ones included) and gets
  /// back what each rank sent it: result[r] came from rank r. One all-to-all of the sizes, then
  /// one of the bytes.
  std::vector<std::vector<std::byte>> exchange(const std::vector<std::vector<std::byte>>& to) const {
    if (to.size() != static_cast<std::size_t>(size_))
      throw error("shoal::dist::context::exchange: " + std::to_string(to.size()) + " messages for " +
                  std::to_string(size_) + " ranks");
    std::vector<int> send_counts(size_), send_offsets(size_), recv_counts(size_), recv_offsets(size_);
    std::vector<std::byte> send;
    for (int r = 0; r < size_; ++r) {
      send_offsets[r] = count_of(send.size());
      send_counts[r] = count_of(to[r].size());
      send.insert(send.end(), to[r].begin(), to[r].end());
    }
    (void)count_of(send.size());  // the whole send buffer, too, must fit MPI's int offsets
    check(MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, MPI_COMM_WORLD),
          "MPI_Alltoall");
    std::size_t total = 0;
    for (int r = 0; r < size_; ++r) {
      recv_offsets[r] = count_of(total);
      total += static_cast<std::size_t>(recv_counts[r]);
    }
    std::vector<std::byte> received(total);
    (void)count_of(total);  // likewise what arrives
    check(MPI_Alltoallv(send.data(), send_counts.data(), send_offsets.data(), MPI_BYTE, received.data(),
                        recv_counts.data(), recv_offsets.data(), MPI_BYTE, MPI_COMM_WORLD),
          "MPI_Alltoallv");
    std::vector<std::vector<std::byte>> from(size_);
    for (int r = 0; r < size_; ++r)
      from[r].assign(received.begin() + recv_offsets[r], received.begin() + recv_offsets[r] + recv_counts[r]);
    return from;
  }

  /// Waits until every rank has called it.
  void barrier() const { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

 private:
  static void check(int rc, const char* call) { detail::check_mpi(rc, call); }
  /// MPI counts are ints: a message (or all of one rank's messages together) over 2^31 - 1 bytes
  /// is refused rather than cut.
  static int count_of(std::size_t n) {
    if (n > static_cast<std::size_t>(INT_MAX))
      throw error("shoal::dist: " + std::to_string(n) + " bytes in one exchange, more than MPI's int counts allow");
    return static_cast<int>(n);
  }

  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  bool owns_ = false;
};

/// On the GPU backend, makes GPU local_rank() % arch::device_count() this process's: one rank per
/// GPU when a machine runs as many ranks as it has GPUs (more ranks share them in turn). Call it
/// before the first runtime. Returns the GPU chosen, or -1 where there is none to choose (the
/// cpu backend).
inline int use_local_device(const context& ctx) {
  const int gpus = arch::device_count();
  if (gpus == 0) return -1;
  const int gpu = ctx.local_rank() % gpus;
  arch::use_device(gpu);
  return gpu;
}

}  // namespace shoal::dist
