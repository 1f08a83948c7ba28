#pragma once
/// @file
/// `--timing`: where the time of a run goes, phase by phase.
///
///   sim::phase_timer timer(run.timing);
///   { auto p = timer.phase("fish.move"); rt.parallel_do<&Fish::move>(grid, step); }
///   ...
///   rt.synchronize(); std::fputs(timer.table().c_str(), stdout);
///
/// On the cuda backend a phase is measured with two CUDA events recorded on the stream around
/// its work: no host synchronisation per step. Event pairs wait in a small ring per phase and are
/// read when the ring wraps (their work finished long ago by then) or at table(). On the cpu
/// backend launches are synchronous and a phase is timed with the host's steady clock. A disabled
/// timer does nothing at all.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "shoal/arch/error.hpp"

namespace shoal::sim {

/// Accumulates the time of named phases of a run for `--timing`: phase() times a scope,
/// milliseconds() and calls() read one phase, table() formats them all. Costs nothing when
/// disabled.
class phase_timer {
  struct phase_record;

 public:
  /// A timer that measures only when `enabled` (run_options::timing).
  explicit phase_timer(bool enabled) : enabled_(enabled) {}
  phase_timer(const phase_timer&) = delete;
  phase_timer& operator=(const phase_timer&) = delete;
  ~phase_timer() = default;

  /// Whether it measures.
  bool enabled() const { return enabled_; }

  /// Times the enclosed work until the scope ends.
  class scope {
   public:
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;
    ~scope() {
      if (record_ == nullptr) return;
      record_->stop();
      timer_->open_.pop_back();
    }

   private:
    friend class phase_timer;
    scope(phase_timer* t, phase_record* r) : timer_(t), record_(r) {
      if (record_ == nullptr) return;
      record_->start();
      timer_->open_.push_back(record_);
    }
    phase_timer* timer_;
    phase_record* record_;
  };

  /// Starts timing phase `name` (a string literal or other text that outlives the call).
  /// A phase started inside another one is its part: the table shows it indented below the
  /// first phase it was started in, and only outermost phases add up to "all".
  [[nodiscard]] scope phase(std::string_view name) { return scope(this, enabled_ ? find(name) : nullptr); }

  /// Total milliseconds and calls of a phase so far (waits for its pending measurements).
  double milliseconds(std::string_view name) {
    phase_record* r = enabled_ ? lookup(name) : nullptr;
    if (r == nullptr) return 0;
    r->drain();
    return r->total_ms;
  }
  /// Scopes of phase `name` that have ended (0 for a phase never timed).
  std::uint64_t calls(std::string_view name) const {
    for (const auto& r : phases_)
      if (r->name == name) return r->calls;
    return 0;
  }

  /// A table of every phase in first-use order: calls, total ms, ms per call, share. Waits for
  /// the pending measurements (call it after the run).
  std::string table() {
    if (!enabled_) return {};
    double all = 0;
    std::size_t width = 5;
    for (auto& r : phases_) {
      r->drain();
      if (r->depth == 0) all += r->total_ms;
      width = std::max(width, r->name.size() + 2 * static_cast<std::size_t>(r->depth));
    }
    std::string out;
    char line[256];
    std::snprintf(line, sizeof line, "timing: %-*s %8s %12s %12s %7s\n", static_cast<int>(width), "phase",
                  "calls", "total ms", "ms/call", "share");
    out += line;
    for (const auto& r : ordered()) {
      const std::string name = std::string(2 * static_cast<std::size_t>(r->depth), ' ') + r->name;
      std::snprintf(line, sizeof line, "timing: %-*s %8llu %12.3f %12.4f %6.1f%%\n", static_cast<int>(width),
                    name.c_str(), static_cast<unsigned long long>(r->calls), r->total_ms,
                    r->calls ? r->total_ms / static_cast<double>(r->calls) : 0.0,
                    all > 0 ? 100.0 * r->total_ms / all : 0.0);
      out += line;
    }
    std::snprintf(line, sizeof line, "timing: %-*s %8s %12.3f\n", static_cast<int>(width), "all", "", all);
    out += line;
    return out;
  }

 private:
  struct phase_record {
    std::string name;
    int depth = 0;                      // phases open around its first call
    const phase_record* parent = nullptr;  // the innermost of them
    std::uint64_t calls = 0;
    double total_ms = 0;
#if defined(SHOAL_BACKEND_CUDA)
    static constexpr std::size_t ring = 64;
    /// The events recorded around one call of the phase.
    struct pair {
      /// Recorded before the phase's work.
      cudaEvent_t start = nullptr, stop = nullptr;  ///< recorded after it
    };
    std::vector<pair> events;   // ring of event pairs, created on first use
    std::size_t next = 0;       // next pair to record
    std::size_t pending = 0;    // recorded but not yet read, ending at next - 1
    void start() {
      if (events.size() < ring && next == events.size()) {
        pair p;
        SHOAL_CUDA_CHECK(cudaEventCreate(&p.start));
        SHOAL_CUDA_CHECK(cudaEventCreate(&p.stop));
        events.push_back(p);
      } else if (pending == ring) {
        read_oldest();  // recorded `ring` calls ago: long finished, so this rarely waits
      }
      SHOAL_CUDA_CHECK(cudaEventRecord(events[next].start, nullptr));
    }
    void stop() {
      SHOAL_CUDA_CHECK(cudaEventRecord(events[next].stop, nullptr));
      next = (next + 1) % ring;
      pending += 1;
      calls += 1;
    }
    void read_oldest() {
      const std::size_t oldest = (next + ring - pending) % ring;
      SHOAL_CUDA_CHECK(cudaEventSynchronize(events[oldest].stop));
      float ms = 0;
      SHOAL_CUDA_CHECK(cudaEventElapsedTime(&ms, events[oldest].start, events[oldest].stop));
      total_ms += ms;
      pending -= 1;
    }
    void drain() {
      while (pending > 0) read_oldest();
    }
    phase_record() = default;
    phase_record(const phase_record&) = delete;
    phase_record& operator=(const phase_record&) = delete;
    ~phase_record() {
      for (auto& p : events) {
        cudaEventDestroy(p.start);
        cudaEventDestroy(p.stop);
      }
    }
#else
    std::chrono::steady_clock::time_point began;
    void start() { began = std::chrono::steady_clock::now(); }
    void stop() {
      total_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
      calls += 1;
    }
    void drain() {}
#endif
  };

  phase_record* lookup(std::string_view name) {
    for (auto& r : phases_)
      if (r->name == name) return r.get();
    return nullptr;
  }
  phase_record* find(std::string_view name) {
    if (phase_record* r = lookup(name)) return r;
    phases_.push_back(std::make_unique<phase_record>());
    phase_record* r = phases_.back().get();
    r->name = std::string(name);
    r->depth = static_cast<int>(open_.size());
    r->parent = open_.empty() ? nullptr : open_.back();
    return r;
  }
  /// The phases in first-use order, each part right after the phase it is a part of.
  std::vector<const phase_record*> ordered() const {
    std::vector<const phase_record*> out;
    auto add = [&](auto& self, const phase_record* parent) -> void {
      for (const auto& r : phases_)
        if (r->parent == parent) {
          out.push_back(r.get());
          self(self, r.get());
        }
    };
    add(add, nullptr);
    return out;
  }

  bool enabled_;
  std::vector<phase_record*> open_;     // their phases, outermost first
  std::vector<std::unique_ptr<phase_record>> phases_;
};

}  // namespace shoal::sim
