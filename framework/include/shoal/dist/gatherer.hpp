#pragma once
/// @file
/// Every rank's part of one device array to every rank (an all-gather of unequal parts), for
/// models whose every agent looks at every other, such as n-body's forces:
///
///   dist::gatherer all(ctx);                           // transport from SHOAL_DIST_TRANSPORT
///   // each rank has written its part at its offset of `values` (device memory)
///   all.gather(values.data(), bytes_of_each_rank);     // now every part is there on every rank
///
/// Host transport (dist/transport.hpp): the own part goes to page-locked host memory, one
/// MPI_Allgatherv fills the rest in place, and it comes back in one copy; gather() returns when
/// that copy is on the device's stream. nccl: one ncclBroadcast per rank from its part, in one
/// group, enqueued on the default stream; gather() does not wait.

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "shoal/arch/error.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/dist/context.hpp"
#include "shoal/dist/transport.hpp"

namespace shoal::dist {

/// All-gathers device arrays (see the file comment). Construction and gather() are collective.
class gatherer {
 public:
  /// A gatherer over every rank of `ctx`.
  explicit gatherer(const context& ctx, transport how = transport_from_environment())
      : rank_(ctx.rank()), ranks_(ctx.size()), channel_(ctx, how) {}

  /// The transport in use.
  transport how() const { return channel_.how(); }

  /// `all` (device memory) holds rank r's part of bytes[r] bytes at the sum of bytes[0..r): this
  /// rank's is there already, and afterwards every rank's is. `bytes` must be the same on every
  /// rank.
  void gather(void* all, const std::vector<std::uint64_t>& bytes) {
    if (bytes.size() != static_cast<std::size_t>(ranks_))
      throw error("shoal::dist::gatherer: " + std::to_string(bytes.size()) + " parts for " + std::to_string(ranks_) + " ranks");
    std::vector<std::uint64_t> at(bytes.size() + 1, 0);
    for (std::size_t r = 0; r < bytes.size(); ++r) at[r + 1] = at[r] + bytes[r];
    if (ranks_ == 1 || at.back() == 0) return;
    auto* base = static_cast<std::byte*>(all);
#if defined(SHOAL_DIST_NCCL)
    if (channel_.how() == transport::nccl) {
      detail::channel::check_nccl(ncclGroupStart(), "ncclGroupStart");
      for (int r = 0; r < ranks_; ++r)
        if (bytes[r] != 0)
          detail::channel::check_nccl(ncclBroadcast(base + at[r], base + at[r], bytes[r], ncclUint8, r, channel_.nccl(), nullptr),
                                      "ncclBroadcast");
      detail::channel::check_nccl(ncclGroupEnd(), "ncclGroupEnd");
      return;
    }
#endif
    if (at.back() > static_cast<std::uint64_t>(INT_MAX))
      throw error("shoal::dist::gatherer: " + std::to_string(at.back()) + " bytes in one gather, more than MPI's int counts allow");
    std::vector<int> counts(bytes.size()), offsets(bytes.size());
    for (std::size_t r = 0; r < bytes.size(); ++r) counts[r] = static_cast<int>(bytes[r]), offsets[r] = static_cast<int>(at[r]);
    std::byte* staged = channel_.stage(at.back());
    arch::copy_to_host_enqueued(staged + at[rank_], base + at[rank_], bytes[rank_]);
    arch::synchronize();
    detail::channel::check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, staged, counts.data(), offsets.data(), MPI_BYTE,
                                          channel_.comm()),
                           "MPI_Allgatherv");
    arch::copy_to_device_enqueued(base, staged, at.back());
  }

 private:
  int rank_, ranks_;
  detail::channel channel_;
};

}  // namespace shoal::dist
