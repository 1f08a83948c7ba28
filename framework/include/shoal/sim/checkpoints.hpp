#pragma once
/// @file
/// Checkpoints of an app run (--checkpoint FILE, --checkpoint-every N, --resume FILE; parsed
/// by app_cli): what every app's checkpoint holds besides its model, and when one is due.
///
///   if (sim::checkpoint_due(o, step))
///     sim::write_checkpoint(o, "wator", step, [&](shoal::checkpoint::writer& w) {
///       rt.save_heap(w);
///       rt.save_pointers(w, "wator.cells", g.cells, g.size());
///     });
///
/// app_cli::parse opens --resume, checks that the file is this app's, and adopts its seed; the
/// app then loads its model from app_cli::resume() and continues after app_cli::resume_step().

#include <cstdint>
#include <string>
#include <string_view>

#include "shoal/checkpoint/file.hpp"

namespace shoal::sim {

/// Sections every app checkpoint has.
namespace run_keys {
inline constexpr const char* app = "run.app";    ///< the app's name (bytes)
inline constexpr const char* step = "run.step";  ///< u64: steps done when it was written
inline constexpr const char* seed = "run.seed";  ///< u64: the run's --seed
}  // namespace run_keys

/// Writes (atomically) the checkpoint of `app` after `step` to `path`: the run's sections,
/// then what `add_model(writer&)` adds. Throws checkpoint_error when it cannot be written.
template <class AddModel>
void write_checkpoint(const std::string& path, std::string_view app, std::uint64_t step, std::uint64_t seed,
                      AddModel&& add_model) {
  shoal::checkpoint::writer w;
  w.blob(run_keys::app, std::as_bytes(std::span(app.data(), app.size())));
  w.value(run_keys::step, step);
  w.value(run_keys::seed, seed);
  add_model(w);
  w.commit(path);
}

}  // namespace shoal::sim
