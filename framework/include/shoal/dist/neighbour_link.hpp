#pragma once
/// @file
/// The transfers between a band of rows and its two neighbours, the rank above and the rank
/// below: every exchange of a band (halo rows, claim words, migrating agents) is one swap() of
/// device buffers of a size both sides know, so nothing but the bytes crosses.
///
///   dist::neighbour_link link(ctx, b.above(), b.below());   // transport from SHOAL_DIST_TRANSPORT
///   link.swap(top_rows, upper_halo, bottom_rows, lower_halo, bytes);
///
/// With the host transport (dist/transport.hpp) the outgoing bytes go through page-locked host
/// memory and MPI point-to-point, one message each way per neighbour, and swap() returns when the
/// incoming ones are on the device's stream; with nccl, ncclSend/ncclRecv from and to the device
/// buffers are enqueued on the default stream and swap() does not wait. A rank that is its own
/// neighbour (one rank on a torus) copies on its device and sends nothing.

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <string>

#include "shoal/arch/error.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/dist/context.hpp"
#include "shoal/dist/transport.hpp"

namespace shoal::dist {

/// One rank's link to the ranks above and below it (see the file comment). Construction and
/// swap() are collective over the ranks that it links: each must make the same calls.
class neighbour_link {
 public:
  /// `above` and `below`: the neighbours' ranks, -1 for none (past a bounded grid's edge).
  neighbour_link(const context& ctx, int above, int below, transport how = transport_from_environment())
      : rank_(ctx.rank()), above_(above), below_(below), channel_(ctx, how, detail::messages::few_kb) {}

  /// The transport in use.
  transport how() const { return channel_.how(); }

  /// Sends `bytes` from `to_above` to the rank above, which receives them in its `from_below`,
  /// and from `to_below` to the rank below, into its `from_above`; receives the same way. All
  /// four are device buffers of `bytes` (a side without a neighbour is skipped). Ordered after
  /// the device work before it and before the work after it; see the file comment for when it
  /// returns.
  void swap(const void* to_above, void* from_above, const void* to_below, void* from_below, std::size_t bytes) {
    if (bytes == 0) return;
    if (above_ == rank_ && below_ == rank_) {  // the torus wraps onto this rank
      arch::copy_on_device_enqueued(from_above, to_below, bytes);
      arch::copy_on_device_enqueued(from_below, to_above, bytes);
      return;
    }
    if (bytes > static_cast<std::size_t>(INT_MAX))
      throw error("shoal::dist::neighbour_link: " + std::to_string(bytes) + " bytes in one message, more than MPI's int counts allow");
#if defined(SHOAL_DIST_NCCL)
    if (channel_.how() == transport::nccl) {
      const ncclComm_t nccl = channel_.nccl();
      // Two ranks on a torus are each other's above and below: NCCL pairs one peer's sends and
      // receives in call order, so sends go up then down and receives come from below then above.
      detail::channel::check_nccl(ncclGroupStart(), "ncclGroupStart");
      if (above_ >= 0) detail::channel::check_nccl(ncclSend(to_above, bytes, ncclUint8, above_, nccl, nullptr), "ncclSend");
      if (below_ >= 0) detail::channel::check_nccl(ncclSend(to_below, bytes, ncclUint8, below_, nccl, nullptr), "ncclSend");
      if (below_ >= 0) detail::channel::check_nccl(ncclRecv(from_below, bytes, ncclUint8, below_, nccl, nullptr), "ncclRecv");
      if (above_ >= 0) detail::channel::check_nccl(ncclRecv(from_above, bytes, ncclUint8, above_, nccl, nullptr), "ncclRecv");
      detail::channel::check_nccl(ncclGroupEnd(), "ncclGroupEnd");
      return;
    }
#endif
    swap_through_host(to_above, from_above, to_below, from_below, bytes);
  }

 private:
  // Tags of the two directions, so that one neighbour that is both above and below (two ranks on
  // a torus) gets each message into the right buffer.
  static constexpr int going_up = 0, going_down = 1;

  void swap_through_host(const void* to_above, void* from_above, const void* to_below, void* from_below, std::size_t bytes) {
    std::byte *up = channel_.stage(4 * bytes), *down = up + bytes, *from_up = down + bytes, *from_down = from_up + bytes;
    if (above_ >= 0) arch::copy_to_host_enqueued(up, to_above, bytes);
    if (below_ >= 0) arch::copy_to_host_enqueued(down, to_below, bytes);
    arch::synchronize();  // the bytes are on the host (and the last swap's copies to the device done)
    MPI_Request r[4];
    int n = 0;
    const int count = static_cast<int>(bytes);
    const MPI_Comm comm = channel_.comm();
    using detail::channel;
    if (above_ >= 0) channel::check(MPI_Irecv(from_up, count, MPI_BYTE, above_, going_down, comm, &r[n++]), "MPI_Irecv");
    if (below_ >= 0) channel::check(MPI_Irecv(from_down, count, MPI_BYTE, below_, going_up, comm, &r[n++]), "MPI_Irecv");
    if (above_ >= 0) channel::check(MPI_Isend(up, count, MPI_BYTE, above_, going_up, comm, &r[n++]), "MPI_Isend");
    if (below_ >= 0) channel::check(MPI_Isend(down, count, MPI_BYTE, below_, going_down, comm, &r[n++]), "MPI_Isend");
    channel::check(MPI_Waitall(n, r, MPI_STATUSES_IGNORE), "MPI_Waitall");
    if (above_ >= 0) arch::copy_to_device_enqueued(from_above, from_up, bytes);
    if (below_ >= 0) arch::copy_to_device_enqueued(from_below, from_down, bytes);
  }

  int rank_, above_, below_;
  detail::channel channel_;
};

}  // namespace shoal::dist
