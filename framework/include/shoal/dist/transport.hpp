#pragma once
/// @file
/// How device buffers cross between ranks, chosen at run time (SHOAL_DIST_TRANSPORT), and the
/// channel that the distributed layer's exchanges (dist::neighbour_link, dist::gatherer) send
/// through:
///  - host (the default, every build): the bytes are copied into page-locked host memory, sent
///    with MPI, and copied back to the device;
///  - nccl (cuda builds that found NCCL, `SHOAL_HAVE_NCCL`; cmake/ShoalNccl.cmake): NCCL moves
///    them from GPU to GPU (NVLink or PCIe), enqueued on the default stream, without the host.
/// Both give the same bytes, so a run's results do not depend on the choice.

#include <mpi.h>

#include <cstddef>
#include <cstdlib>
#include <string>

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
  host,  ///< staged through page-locked host memory, MPI (every build)
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

namespace detail {

/// The messages a channel carries, for NCCL's choice of how many channels (a CTA each) one
/// transfer is spread over.
enum class messages {
  bulk,    ///< NCCL's choice (all-gathers of whole columns)
  few_kb,  ///< one NCCL channel: a neighbour's halo rows, claims, movers
};

/// What one exchange object sends through: its own MPI communicator (so that its tags match
/// only its own messages), an NCCL communicator for the nccl transport, and a page-locked
/// staging buffer for the host transport. Construction is collective over every rank.
class channel {
 public:
  channel(const context& ctx, transport how, messages kind = messages::bulk) : how_(how) {
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
#if defined(SHOAL_DIST_NCCL)
    if (how_ == transport::nccl) {
      // NCCL refuses two ranks on one GPU ("invalid usage"); say why, on every rank, first.
      if (ctx.any(ctx.local_size() > arch::device_count()))
        throw error("SHOAL_DIST_TRANSPORT=nccl needs a GPU per rank, and " + std::to_string(ctx.local_size()) +
                    " ranks share " + std::to_string(arch::device_count()) +
                    " GPU(s) on a machine of this run: use the host transport (the default)");
      ncclUniqueId id{};
      if (ctx.root()) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
      check(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm_), "MPI_Bcast");
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
      // NCCL spread each swap of a few KB over 32 point-to-point channels, every one a CTA that
      // must meet its peer's: a Wa-Tor halo swap took 1.09 ms on two H200s, 0.15 ms over one
      // channel (as long as host staging's).
      if (kind == messages::few_kb) config.minCTAs = 1, config.maxCTAs = 1;
      check_nccl(ncclCommInitRankConfig(&nccl_, ctx.size(), id, ctx.rank(), &config), "ncclCommInitRankConfig");
    }
#else
    (void)ctx, (void)kind;
    if (how_ == transport::nccl) throw error("shoal::dist: this build has no NCCL");
#endif
  }
  channel(const channel&) = delete;
  channel& operator=(const channel&) = delete;
  ~channel() {
#if defined(SHOAL_DIST_NCCL)
    if (nccl_ != nullptr) ncclCommDestroy(nccl_);
#endif
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }

  transport how() const { return how_; }
  MPI_Comm comm() const { return comm_; }
#if defined(SHOAL_DIST_NCCL)
  ncclComm_t nccl() const { return nccl_; }
#endif

  /// At least `bytes` of page-locked host memory (grown after a wait for the device, whose
  /// enqueued copies may still read the old buffer).
  std::byte* stage(std::size_t bytes) { return stage_.at_least(bytes); }

  /// Throws shoal::error with MPI's message unless rc is MPI_SUCCESS.
  static void check(int rc, const char* call) { check_mpi(rc, call); }
#if defined(SHOAL_DIST_NCCL)
  /// Throws shoal::error with NCCL's message unless rc is ncclSuccess.
  static void check_nccl(ncclResult_t rc, const char* call) {
    if (rc != ncclSuccess) throw error(std::string("shoal::dist: ") + call + " failed: " + ncclGetErrorString(rc));
  }
#endif

 private:
  transport how_;
  MPI_Comm comm_ = MPI_COMM_NULL;
#if defined(SHOAL_DIST_NCCL)
  ncclComm_t nccl_ = nullptr;
#endif
  arch::pinned_bytes stage_;
};

}  // namespace detail
}  // namespace shoal::dist
