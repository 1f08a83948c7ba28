#pragma once
/// @file
/// The transfers between a band of rows and its two neighbours, the rank above and the rank
/// below: every exchange of a band (halo rows, claim words, migrating agents) is one swap() of
/// device buffers of a size both sides know, so nothing but the bytes crosses.
///
///   dist::neighbour_link link(ctx, b.above(), b.below());   // transport from SHOAL_DIST_TRANSPORT
///   link.swap(top_rows, upper_halo, bottom_rows, lower_halo, bytes);
///
/// Two transports, chosen at run time (SHOAL_DIST_TRANSPORT=host|nccl), with the same results:
///  - host (the default, every build): the outgoing bytes are copied into page-locked host
///    memory, sent with MPI point-to-point (one message each way per neighbour), and the incoming
///    ones copied back; swap() returns when they are on the device's stream.
///  - nccl (cuda builds that found NCCL, `SHOAL_HAVE_NCCL`): ncclSend/ncclRecv from and to the
///    device buffers, GPU to GPU (NVLink or PCIe), enqueued on the default stream: swap() does not
///    wait, later work on the stream sees the bytes.
/// A rank that is its own neighbour (one rank on a torus) copies on its device and sends nothing.

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <utility>

#include "shoal/arch/error.hpp"
#include "shoal/arch/memory.hpp"
#include "shoal/dist/context.hpp"

#if defined(SHOAL_HAVE_NCCL) && defined(SHOAL_BACKEND_CUDA)
#include <nccl.h>
#define SHOAL_DIST_NCCL 1
#endif

namespace shoal::dist {

/// How device buffers cross between ranks.
enum class transport {
  host,  ///< staged through page-locked host memory, MPI point-to-point (every build)
  nccl,  ///< device to device with NCCL (cuda builds that found NCCL)
};

/// The transport's name as SHOAL_DIST_TRANSPORT spells it.
inline const char* name_of(transport t) { return t == transport::nccl ? "nccl" : "host"; }

/// Whether this build can use NCCL.
constexpr bool nccl_available() {
#if defined(SHOAL_DIST_NCCL)
  return true;
#else
  return false;
#endif
}

/// The transport SHOAL_DIST_TRANSPORT names: "host" (also when unset or empty) or "nccl". Throws
/// shoal::error for another value, and for nccl where this build has none.
inline transport transport_from_environment() {
  const char* v = std::getenv("SHOAL_DIST_TRANSPORT");
  const std::string name = v == nullptr ? "" : v;
  if (name.empty() || name == "host") return transport::host;
  if (name != "nccl") throw error("SHOAL_DIST_TRANSPORT=" + name + ": expected host or nccl");
  if (!nccl_available())
    throw error("SHOAL_DIST_TRANSPORT=nccl: this build has no NCCL (a cuda build finds it through NCCL_ROOT)");
  return transport::nccl;
}

/// One rank's link to the ranks above and below it (see the file comment). Construction and
/// swap() are collective over the ranks that it links: each must make the same calls.
class neighbour_link {
 public:
  /// `above` and `below`: the neighbours' ranks, -1 for none (past a bounded grid's edge).
  neighbour_link(const context& ctx, int above, int below, transport how = transport_from_environment())
      : rank_(ctx.rank()), above_(above), below_(below), how_(how) {
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");  // its tags are its own
#if defined(SHOAL_DIST_NCCL)
    if (how_ == transport::nccl) {
      ncclUniqueId id{};
      if (ctx.root()) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
      check(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm_), "MPI_Bcast");
      check_nccl(ncclCommInitRank(&nccl_, ctx.size(), id, ctx.rank()), "ncclCommInitRank");
    }
#else
    if (how_ == transport::nccl) throw error("shoal::dist::neighbour_link: this build has no NCCL");
#endif
  }
  neighbour_link(const neighbour_link&) = delete;
  neighbour_link& operator=(const neighbour_link&) = delete;
  ~neighbour_link() {
#if defined(SHOAL_DIST_NCCL)
    if (nccl_ != nullptr) ncclCommDestroy(nccl_);
#endif
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }

  /// The transport in use.
  transport how() const { return how_; }

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
    if (how_ == transport::nccl) {
      // Two ranks on a torus are each other's above and below: NCCL pairs one peer's sends and
      // receives in call order, so sends go up then down and receives come from below then above.
      check_nccl(ncclGroupStart(), "ncclGroupStart");
      if (above_ >= 0) check_nccl(ncclSend(to_above, bytes, ncclUint8, above_, nccl_, nullptr), "ncclSend");
      if (below_ >= 0) check_nccl(ncclSend(to_below, bytes, ncclUint8, below_, nccl_, nullptr), "ncclSend");
      if (below_ >= 0) check_nccl(ncclRecv(from_below, bytes, ncclUint8, below_, nccl_, nullptr), "ncclRecv");
      if (above_ >= 0) check_nccl(ncclRecv(from_above, bytes, ncclUint8, above_, nccl_, nullptr), "ncclRecv");
      check_nccl(ncclGroupEnd(), "ncclGroupEnd");
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
    if (stage_.size() < 4 * bytes) {
      arch::synchronize();  // the last swap's copies to the device read the old buffer
      stage_ = arch::pinned_bytes(4 * bytes);
    }
    std::byte *up = stage_.data(), *down = up + bytes, *from_up = down + bytes, *from_down = from_up + bytes;
    if (above_ >= 0) arch::copy_to_host_enqueued(up, to_above, bytes);
    if (below_ >= 0) arch::copy_to_host_enqueued(down, to_below, bytes);
    arch::synchronize();  // the bytes are on the host (and the last swap's copies to the device done)
    MPI_Request r[4];
    int n = 0;
    const int count = static_cast<int>(bytes);
    if (above_ >= 0) check(MPI_Irecv(from_up, count, MPI_BYTE, above_, going_down, comm_, &r[n++]), "MPI_Irecv");
    if (below_ >= 0) check(MPI_Irecv(from_down, count, MPI_BYTE, below_, going_up, comm_, &r[n++]), "MPI_Irecv");
    if (above_ >= 0) check(MPI_Isend(up, count, MPI_BYTE, above_, going_up, comm_, &r[n++]), "MPI_Isend");
    if (below_ >= 0) check(MPI_Isend(down, count, MPI_BYTE, below_, going_down, comm_, &r[n++]), "MPI_Isend");
    check(MPI_Waitall(n, r, MPI_STATUSES_IGNORE), "MPI_Waitall");
    if (above_ >= 0) arch::copy_to_device_enqueued(from_above, from_up, bytes);
    if (below_ >= 0) arch::copy_to_device_enqueued(from_below, from_down, bytes);
  }

  static void check(int rc, const char* call) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
    throw error(std::string("shoal::dist::neighbour_link: ") + call + " failed: " + std::string(text, static_cast<std::size_t>(length)));
  }
#if defined(SHOAL_DIST_NCCL)
  static void check_nccl(ncclResult_t rc, const char* call) {
    if (rc != ncclSuccess)
      throw error(std::string("shoal::dist::neighbour_link: ") + call + " failed: " + ncclGetErrorString(rc));
  }
  ncclComm_t nccl_ = nullptr;
#endif

  int rank_, above_, below_;
  transport how_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  arch::pinned_bytes stage_;
};

}  // namespace shoal::dist
