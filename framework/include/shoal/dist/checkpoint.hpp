#pragma once
/// @file
/// Checkpoints of a distributed run: every rank writes its own runtime to its own file,
/// `<path>.rank<r>-of-<n>`, and a resume needs the same rank count. The files of one save carry a
/// token that rank 0 drew for it, so that parts of different saves are never resumed together.
///
///   dist::save(rt, ctx, "run.ckpt", blob);                 // run.ckpt.rank0-of-4 ... rank3-of-4
///   auto rt = dist::load<Heap>(ctx, "run.ckpt", &blob);    // the same 4 ranks
///
/// Every failure throws checkpoint_error on every rank (the rank that failed gives its reason, the
/// others say that another rank failed), so no rank is left waiting in a later collective.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "shoal/checkpoint/error.hpp"
#include "shoal/dist/context.hpp"
#include "shoal/runtime/runtime.hpp"

namespace shoal::dist {

/// The file of rank `rank` of a checkpoint `path` written by `ranks` ranks.
inline std::string rank_path(const std::string& path, int rank, int ranks) {
  return path + ".rank" + std::to_string(rank) + "-of-" + std::to_string(ranks);
}

namespace detail {

/// What the distributed layer puts before the caller's user blob: a tag, the save's token, the
/// writer's rank and the rank count.
struct part_header {
  char tag[8] = {'s', 'h', 'o', 'a', 'l', 'd', 's', 't'};
  std::uint64_t token = 0;
  std::uint32_t rank = 0, ranks = 0;
};

/// Throws on every rank if `problem` is not empty on any: this rank's own problem, or a word
/// that another rank had one.
inline void agree(const context& ctx, const std::string& problem, const std::string& path) {
  if (!ctx.any(!problem.empty())) return;
  throw checkpoint_error(!problem.empty() ? problem : path + ": another rank could not save or load its part");
}

/// The rank count of a checkpoint `path` written by another number of ranks, from the name of its
/// rank 0 file; 0 if there is none.
inline int other_rank_count(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const std::string prefix = p.filename().string() + ".rank0-of-";
  std::error_code ec;
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string count = name.substr(prefix.size());
    if (count.empty() || count.size() > 6 || count.find_first_not_of("0123456789") != std::string::npos) continue;
    return std::stoi(count);
  }
  return 0;
}

}  // namespace detail

/// Writes this rank's runtime and `user_blob` to rank_path(path, rank, ranks), atomically. A
/// collective call. Throws checkpoint_error on every rank if any rank could not write its file.
template <class Heap>
void save(runtime<Heap>& rt, const context& ctx, const std::string& path, std::span<const std::byte> user_blob = {}) {
  // One token for the whole save, drawn by rank 0.
  std::vector<std::byte> token_bytes(sizeof(std::uint64_t));
  if (ctx.root()) {
    std::random_device device;
    const std::uint64_t token = (std::uint64_t{device()} << 32) ^ device() ^
                                static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    std::memcpy(token_bytes.data(), &token, sizeof token);
  }
  ctx.broadcast(token_bytes);
  detail::part_header header;
  std::memcpy(&header.token, token_bytes.data(), sizeof header.token);
  header.rank = static_cast<std::uint32_t>(ctx.rank());
  header.ranks = static_cast<std::uint32_t>(ctx.size());
  std::vector<std::byte> blob(sizeof header);
  std::memcpy(blob.data(), &header, sizeof header);
  blob.insert(blob.end(), user_blob.begin(), user_blob.end());
  std::string problem;
  try {
    rt.save(rank_path(path, ctx.rank(), ctx.size()), blob);
  } catch (const error& e) {
    problem = e.what();
  }
  detail::agree(ctx, problem, path);
}

/// This rank's runtime from a checkpoint that save() wrote with the same number of ranks (its
/// user blob to `user_blob` when given; `heap_bytes` as runtime::load takes it). A collective
/// call. Throws checkpoint_error on every rank for a missing or damaged part, for parts of
/// different saves, and for a checkpoint written by another rank count (naming that count).
template <class Heap>
runtime<Heap> load(const context& ctx, const std::string& path, std::vector<std::byte>* user_blob = nullptr,
                   std::size_t heap_bytes = 0) {
  const std::string mine = rank_path(path, ctx.rank(), ctx.size());
  std::string problem;
  std::optional<runtime<Heap>> rt;
  std::vector<std::byte> blob;
  detail::part_header header;
  if (!std::filesystem::exists(mine)) {
    const int other = detail::other_rank_count(path);
    problem = other != 0 && other != ctx.size()
                  ? path + ": written by " + std::to_string(other) + " ranks, and this run has " +
                        std::to_string(ctx.size()) + " (resume it with " + std::to_string(other) + " ranks)"
                  : mine + ": no such checkpoint file";
  } else {
    try {
      rt.emplace(runtime<Heap>::load(mine, &blob, heap_bytes));
      if (blob.size() < sizeof header) throw checkpoint_error(mine + ": not a part of a distributed checkpoint");
      std::memcpy(&header, blob.data(), sizeof header);
      if (std::memcmp(header.tag, detail::part_header{}.tag, sizeof header.tag) != 0)
        throw checkpoint_error(mine + ": not a part of a distributed checkpoint");
      if (header.rank != static_cast<std::uint32_t>(ctx.rank()) || header.ranks != static_cast<std::uint32_t>(ctx.size()))
        throw checkpoint_error(mine + ": holds the part of rank " + std::to_string(header.rank) + " of " +
                               std::to_string(header.ranks));
    } catch (const error& e) {
      problem = e.what();
    }
  }
  detail::agree(ctx, problem, path);
  // Every part must come from the same save: rank 0's token against everyone's.
  std::vector<std::byte> token(sizeof header.token);
  std::memcpy(token.data(), &header.token, sizeof header.token);
  ctx.broadcast(token);
  std::uint64_t root_token = 0;
  std::memcpy(&root_token, token.data(), sizeof root_token);
  if (ctx.any(header.token != root_token))
    throw checkpoint_error(path + ": its rank files come from different saves");
  if (user_blob != nullptr) user_blob->assign(blob.begin() + sizeof header, blob.end());
  return std::move(*rt);
}

}  // namespace shoal::dist
