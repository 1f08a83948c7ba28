#pragma once
/// @file
/// shoal::dist::run_model<Model>: the program of a model split over MPI ranks, with the command
/// line of its one-process program (sim::run_model, driver.hpp) and the same outputs: rank 0
/// prints the run header, the progress bar, the summary and --timing (its own phases), and
/// writes the CSV; every rank computes each row and the summary together (collective calls).
///
///   int main(int argc, char** argv) { return shoal::dist::run_model<wator::band_app>(argc, argv); }
///   $ mpirun -np 4 wator_mpi --steps 500 --csv run.csv      # same run.csv as wator's
///
/// Model is as for sim::run_model (flags, add_flags, check, csv_columns, header, populate, step,
/// csv_row, result, runtime), made with (flags, options, context). Each rank takes a GPU of its
/// machine (dist::use_local_device: local rank modulo the GPUs). Not offered yet over ranks:
/// checkpoints (dist::save/load exist; the driver does not write them), the viewer and
/// --defrag-every. Exit status as sim::run_model's; an error on one rank is printed by that rank
/// ("<app>: rank r: ...") and ends every rank (MPI_Abort), since the others would wait for it.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "shoal/dist/context.hpp"
#include "shoal/viz/driver.hpp"

namespace shoal::dist {

namespace detail {

/// Sends this process's stderr to /dev/null while it lives.
class quiet_stderr {
 public:
  quiet_stderr() : saved_(dup(2)) {
    std::fflush(stderr);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, 2), close(null);
  }
  ~quiet_stderr() {
    std::fflush(stderr);
    if (saved_ >= 0) dup2(saved_, 2), close(saved_);
  }
  quiet_stderr(const quiet_stderr&) = delete;
  quiet_stderr& operator=(const quiet_stderr&) = delete;

 private:
  int saved_;
};

/// The steps, as viz::run_steps without the viewer and checkpoints, with the progress bar on
/// rank 0 only.
template <class Model>
int run_model(const context& ctx, int argc, char** argv) {
  const bool root = ctx.root();
  sim::run_options defaults = sim::model_defaults<Model>();
  defaults.features = {};  // no checkpoints, frames, window or defragmentation over ranks yet
  sim::app_cli cli(Model::name, Model::description, defaults);
  typename Model::flags flags;
  // Every rank parses the same command line alike; only rank 0 says what is wrong with it.
  std::optional<quiet_stderr> hush;
  if (!root) hush.emplace();
  if (const int rc = sim::parse_model_command_line<Model>(cli, flags, argc, argv); rc >= 0) return rc;
  hush.reset();
  const sim::run_options& o = cli.options();
  std::optional<sim::csv_writer> csv;
  if (root && !o.csv.empty()) {
    try {
      csv.emplace(o.csv, Model::csv_columns());
    } catch (const sim::csv_error& e) {
      return cli.fail(std::string("--csv: ") + e.what());
    }
  }
  // A CSV file that rank 0 cannot write ends every rank with exit status 2.
  if (ctx.any(root && !o.csv.empty() && !csv)) return 2;

  use_local_device(ctx);  // one GPU per rank of a machine (none on the cpu backend)
  arch::require_device();
  Model model(flags, o, ctx);
  auto& rt = model.runtime();
  if (root && !o.quiet) std::printf("%s\n", sim::header_line(Model::name, o, model.header()).c_str());
  std::fflush(stdout);

  sim::phase_timer timer(o.timing);
  {
    auto phase = timer.phase("populate");
    model.populate();
  }
  const bool rows = !o.csv.empty();
  if (rows) {
    const auto row = model.csv_row();
    if (csv) csv->row(0, row);
  }
  rt.synchronize();
  sim::progress bar(o.steps, root && !o.quiet);
  rt.time_with(&timer);
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t s = 1; s <= o.steps; ++s) {
    model.step(s, timer);
    if (rows && sim::csv_writer::due(s, o.csv_every, o.steps)) {
      auto phase = timer.phase("csv");
      const auto row = model.csv_row();
      if (csv) csv->row(s, row);
    }
    bar.update(s);
  }
  rt.synchronize();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rt.time_with(nullptr);
  bar.finish();
  if (csv) csv->close();

  sim::summary sum = model.result();
  sum.steps = o.steps;
  sum.seconds = seconds;
  if (root) std::printf("%s\n", sim::summary_line(Model::name, sum).c_str());
  if (root && o.timing) std::fputs(timer.table().c_str(), stdout);
  return 0;
}

}  // namespace detail

/// Runs the model over the ranks of MPI_COMM_WORLD (see the file comment).
template <class Model>
int run_model(int argc, char** argv) {
  std::optional<context> ctx;
  try {
    ctx.emplace(&argc, &argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", Model::name, e.what());
    return 1;
  }
  try {
    return detail::run_model<Model>(*ctx, argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: rank %d: %s\n", Model::name, ctx->rank(), e.what());
    std::fflush(stderr);
    if (ctx->size() > 1) MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
}

}  // namespace shoal::dist
