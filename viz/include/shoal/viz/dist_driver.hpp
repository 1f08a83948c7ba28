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
/// csv_row, result, runtime, and save/resume for checkpoints), made with (flags, options,
/// context). Each rank takes a GPU of its machine (dist::use_local_device: local rank modulo the
/// GPUs). `--checkpoint PATH` writes one file per rank, PATH.rank{r}-of-{n} (the model's save()
/// and a part header: a token rank 0 drew for the save, the rank, the rank count), and
/// `--resume PATH` reads them back with the same rank count (another count, or parts of two saves,
/// is one clear line and exit status 2). Not offered yet over ranks: the viewer and
/// --defrag-every. Exit status as sim::run_model's; an error on one rank is printed by that rank
/// ("<app>: rank r: ...") and ends every rank (MPI_Abort), since the others would wait for it.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <random>
#include <vector>
#include <optional>
#include <string>

#include "shoal/dist/checkpoint.hpp"
#include "shoal/dist/context.hpp"
#include "shoal/viz/driver.hpp"

namespace shoal::dist {

namespace detail {

/// Holds back what this process writes to stderr while it lives (in a temporary file), and
/// gives it back on release(): the lines that only rank 0 should print, unless this rank's reason
/// was its own.
class held_stderr {
 public:
  held_stderr() : file_(std::tmpfile()), saved_(dup(2)) {
    std::fflush(stderr);
    if (file_ != nullptr) dup2(fileno(file_), 2);
  }
  ~held_stderr() { restore(); }
  held_stderr(const held_stderr&) = delete;
  held_stderr& operator=(const held_stderr&) = delete;

  /// Ends the holding back; writes what was held to stderr if `print`.
  void release(bool print) {
    restore();
    if (file_ == nullptr) return;
    if (print) {
      std::rewind(file_);
      char buffer[4096];
      for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, file_)) > 0;) std::fwrite(buffer, 1, n, stderr);
      std::fflush(stderr);
    }
    std::fclose(file_);
    file_ = nullptr;
  }

 private:
  void restore() {
    std::fflush(stderr);
    if (saved_ >= 0) dup2(saved_, 2), close(saved_), saved_ = -1;
  }
  std::FILE* file_;
  int saved_;
};

/// What each rank's checkpoint file holds besides the model (section "dist.part").
struct run_part {
  std::uint64_t token = 0;         ///< drawn by rank 0 for the save: the parts of one save share it
  std::uint32_t rank = 0, ranks = 0;
};

/// argv with the value of --resume PATH (or --resume=PATH) replaced by this rank's part of it;
/// `problem` says why not when PATH was saved by another number of ranks.
inline std::vector<std::string> with_own_part(const context& ctx, int argc, char** argv, std::string& problem) {
  std::vector<std::string> args(argv, argv + argc);
  const auto own = [&](const std::string& path) {
    const std::string part = rank_path(path, ctx.rank(), ctx.size());
    if (!path.empty() && !std::filesystem::exists(part))
      if (const int saved_by = dist::detail::other_rank_count(path); saved_by != 0)
        problem = "--resume: '" + path + "' was saved by " + std::to_string(saved_by) + " rank" + (saved_by == 1 ? "" : "s") +
                  "; this run has " + std::to_string(ctx.size()) + " (resume with as many)";
    return path.empty() ? path : part;
  };
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--resume" && i + 1 < args.size()) args[i + 1] = own(args[i + 1]), ++i;
    else if (args[i].rfind("--resume=", 0) == 0) args[i] = "--resume=" + own(args[i].substr(9));
  }
  return args;
}

/// The steps, as viz::run_steps without the viewer, with the progress bar on rank 0 only and a
/// checkpoint part per rank.
template <class Model>
int run_model(const context& ctx, int argc, char** argv) {
  const bool root = ctx.root();
  sim::run_options defaults = sim::model_defaults<Model>();
  defaults.features.frames = defaults.features.window = defaults.features.defrag = false;  // not over ranks yet
  sim::app_cli cli(Model::name, Model::description, defaults);
  typename Model::flags flags;
  std::string wrong_count;
  const std::vector<std::string> args = with_own_part(ctx, argc, argv, wrong_count);
  std::vector<char*> arg_pointers;
  for (const std::string& a : args) arg_pointers.push_back(const_cast<char*>(a.c_str()));
  // Every rank parses the same command line alike, so rank 0 says what is wrong with it; another
  // rank speaks only if its reason was its own (its part of a --resume checkpoint).
  int rc = -1;
  {
    held_stderr held;
    if (!wrong_count.empty()) rc = cli.fail(wrong_count);
    else rc = sim::parse_model_command_line<Model>(cli, flags, static_cast<int>(arg_pointers.size()), arg_pointers.data());
    std::vector<std::byte> root_rc(sizeof rc);
    std::memcpy(root_rc.data(), &rc, sizeof rc);
    ctx.broadcast(root_rc);
    int rc0 = -1;
    std::memcpy(&rc0, root_rc.data(), sizeof rc0);
    held.release(root || (rc >= 0 && rc0 < 0));
    const bool anyone_stops = ctx.any(rc >= 0);
    if (rc >= 0) return rc;
    if (anyone_stops) return 2;  // another rank could not go on (it said why)
  }
  const sim::run_options& o = cli.options();
  std::optional<sim::csv_writer> csv;
  int csv_failed = 0;
  if (root && !o.csv.empty()) {
    try {
      csv.emplace(o.csv, Model::csv_columns());
    } catch (const sim::csv_error& e) {
      csv_failed = cli.fail(std::string("--csv: ") + e.what());
    }
  }
  // A CSV file that rank 0 cannot write ends every rank with exit status 2 (all of them ask).
  if (ctx.any(csv_failed != 0)) return 2;

  use_local_device(ctx);  // one GPU per rank of a machine (none on the cpu backend)
  arch::require_device();
  Model model(flags, o, ctx);
  auto& rt = model.runtime();
  if (root && !o.quiet) std::printf("%s\n", sim::header_line(Model::name, o, model.header()).c_str());
  std::fflush(stdout);

  sim::phase_timer timer(o.timing);
  const std::uint64_t first = cli.resume_step() + 1;
  if (const checkpoint::reader* r = cli.resume()) {
    if constexpr (sim::model_with_checkpoints<Model>) {
      // The parts must be this rank's, of one save: rank 0's token decides.
      run_part part;
      std::string problem;
      try {
        part = r->value<run_part>("dist.part");
      } catch (const checkpoint_error& e) {
        problem = e.what();
      }
      std::vector<std::byte> token(sizeof part.token);
      std::memcpy(token.data(), &part.token, sizeof part.token);
      ctx.broadcast(token);
      std::uint64_t first_token = 0;
      std::memcpy(&first_token, token.data(), sizeof first_token);
      if (!problem.empty()) {
      } else if (part.rank != static_cast<std::uint32_t>(ctx.rank()) || part.ranks != static_cast<std::uint32_t>(ctx.size()))
        problem = "it is the part of rank " + std::to_string(part.rank) + " of " + std::to_string(part.ranks);
      else if (part.token != first_token)
        problem = "it comes from another save than rank 0's part";
      try {
        if (problem.empty()) model.resume(*r);
      } catch (const checkpoint_error& e) {
        problem = e.what();
      }
      if (ctx.any(!problem.empty())) {
        if (problem.empty()) return 2;  // the rank that failed says why
        std::fprintf(stderr, "%s: error: --resume: part '%s' of rank %d: %s\n", Model::name, o.resume.c_str(),
                     ctx.rank(), problem.c_str());  // o.resume names this rank's part
        return 2;
      }
    }
  } else {
    auto phase = timer.phase("populate");
    model.populate();
  }
  const auto save = [&](std::uint64_t s) {
    if constexpr (sim::model_with_checkpoints<Model>) {
      std::vector<std::byte> token(sizeof(std::uint64_t));
      if (root) {
        const std::uint64_t t = std::random_device{}() * 0x100000001ull ^ static_cast<std::uint64_t>(
            std::chrono::steady_clock::now().time_since_epoch().count());
        std::memcpy(token.data(), &t, sizeof t);
      }
      ctx.broadcast(token);
      run_part part;
      std::memcpy(&part.token, token.data(), sizeof part.token);
      part.rank = static_cast<std::uint32_t>(ctx.rank());
      part.ranks = static_cast<std::uint32_t>(ctx.size());
      std::string problem;
      try {
        sim::write_checkpoint(rank_path(o.checkpoint, ctx.rank(), ctx.size()), Model::name, s, o.seed,
                              [&](checkpoint::writer& w) {
                                w.value("dist.part", part);
                                model.save(w);
                              });
      } catch (const checkpoint_error& e) {
        problem = e.what();
      }
      if (ctx.any(!problem.empty()))
        throw checkpoint_error(!problem.empty() ? problem : "--checkpoint: another rank could not write its part");
    }
  };
  const bool rows = !o.csv.empty();
  if (rows && first == 1) {
    const auto row = model.csv_row();
    if (csv) csv->row(0, row);
  }
  rt.synchronize();
  sim::progress bar(o.steps, root && !o.quiet);
  rt.time_with(&timer);
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t s = first; s <= o.steps; ++s) {
    model.step(s, timer);
    if (rows && sim::csv_writer::due(s, o.csv_every, o.steps)) {
      auto phase = timer.phase("csv");
      const auto row = model.csv_row();
      if (csv) csv->row(s, row);
    }
    if (sim::checkpoint_due(o, s)) save(s);
    bar.update(s);
  }
  rt.synchronize();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rt.time_with(nullptr);
  bar.finish();
  if (csv) csv->close();

  sim::summary sum = model.result();
  sum.steps = o.steps - first + 1;  // run by this invocation
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
