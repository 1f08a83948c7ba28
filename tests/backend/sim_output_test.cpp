// What the toolkit writes: CSV files (header, rows, fixed decimals, errors, schedule), the run
// header and summary lines, the progress bar's text, and the phase timer's bookkeeping.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <unistd.h>

#include "shoal/sim/csv.hpp"
#include "shoal/sim/phase_timer.hpp"
#include "shoal/sim/progress.hpp"
#include "shoal/sim/report.hpp"
#include "test_support.hpp"

namespace shoal::test {

std::string temp_path(const std::string& name) {
  return testing::TempDir() + "shoal_sim_" + std::to_string(::getpid()) + "_" + name;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SimCsv, WritesHeaderAndRowsOfIntegersAndFixedDecimals) {
  const std::string path = temp_path("rows.csv");
  {
    sim::csv_writer csv(path, {"fish", "sharks", "mean"});
    csv.row(0, {3, 4ull, sim::fixed{0.5, 3}});
    csv.row(10, {-2, 0, sim::fixed{-0.0001, 2}});
    csv.row(20, {std::int64_t{1} << 40, 1, sim::fixed{2.0 / 3.0}});
    csv.close();
  }
  EXPECT_EQ(slurp(path),
            "step,fish,sharks,mean\n"
            "0,3,4,0.500\n"
            "10,-2,0,0.00\n"
            "20,1099511627776,1,0.666667\n");
  std::remove(path.c_str());
}

TEST(SimCsv, RowOfTheWrongWidthAndUnwritablePathThrow) {
  const std::string path = temp_path("width.csv");
  sim::csv_writer csv(path, {"a", "b"});
  EXPECT_THROW(csv.row(1, {1}), sim::csv_error);
  EXPECT_THROW(csv.row(1, {1, 2, 3}), sim::csv_error);
  std::remove(path.c_str());
  EXPECT_THROW(sim::csv_writer("/nonexistent-dir/x.csv", {"a"}), sim::csv_error);
}

TEST(SimCsv, DueAtStepZeroEveryNthAndTheLast) {
  std::string sampled;
  for (std::uint64_t s = 0; s <= 23; ++s)
    if (sim::csv_writer::due(s, 10, 23)) sampled += std::to_string(s) + " ";
  EXPECT_EQ(sampled, "0 10 20 23 ");
  EXPECT_TRUE(sim::csv_writer::due(7, 1, 9));
}

TEST(SimReport, SummaryLineIsKeyValuePairs) {
  sim::summary s;
  s.steps = 500;
  s.seconds = 0.25;
  s.populations = {{"fish", 12}, {"sharks", 3}};
  s.checksum = 57;
  EXPECT_EQ(sim::summary_line("wator", s),
            "wator: steps=500 seconds=0.250 steps_per_s=2000.0 fish=12 sharks=3 checksum=57");
}

TEST(SimReport, HeaderNamesBackendSeedAndSizesAndQuotesSpaces) {
  sim::run_options run;
  run.seed = 9;
  run.steps = 4;
  run.heap_mb = 16;
  const std::string h = sim::header_line("wator", run, {{"width", "8"}, {"note", "two words"}});
  EXPECT_EQ(h.rfind("wator: backend=", 0), 0u) << h;
  EXPECT_NE(h.find(std::string("backend=") + backend_name + " device=\""), std::string::npos) << h;
  EXPECT_NE(h.find(" seed=9 steps=4 heap_mb=16 width=8 note=\"two words\""), std::string::npos) << h;
  EXPECT_EQ(h.find('\n'), std::string::npos);
}

TEST(SimProgress, LineShowsStepsRateAndEta) {
  sim::progress bar(200, false);
  EXPECT_FALSE(bar.enabled()) << "not wanted (--quiet)";
  EXPECT_EQ(bar.line(50, 2.0), "[#######.......................] 50/200 steps  25.0 steps/s  ETA 6.0 s");
  EXPECT_EQ(bar.line(0, 0.0), "[..............................] 0/200 steps");
  bar.update(10);  // disabled: draws nothing
  bar.finish();
}

TEST(SimProgress, SilentWhenTheOutputIsNotATerminal) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    sim::progress bar(10, true, f);
    EXPECT_FALSE(bar.enabled());
    for (std::uint64_t s = 1; s <= 10; ++s) bar.update(s);
  }
  EXPECT_EQ(std::ftell(f), 0L) << "nothing written to a file";
  std::fclose(f);
}

TEST(SimPhaseTimer, CountsCallsPerPhaseAndTabulatesThem) {
  sim::phase_timer timer(true);
  for (int k = 0; k < 3; ++k) {
    { auto p = timer.phase("first"); }
    {
      auto p = timer.phase("second");
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  EXPECT_EQ(timer.calls("first"), 3u);
  EXPECT_EQ(timer.calls("second"), 3u);
  EXPECT_EQ(timer.calls("third"), 0u);
#if defined(SHOAL_BACKEND_CPU)
  EXPECT_GE(timer.milliseconds("second"), 6.0) << "three sleeps of 2 ms (host clock on cpu)";
#endif
  const std::string t = timer.table();
  EXPECT_NE(t.find("timing: first"), std::string::npos) << t;
  EXPECT_LT(t.find("first"), t.find("second")) << "first-use order";
  EXPECT_NE(t.find("timing: all"), std::string::npos) << t;
}

TEST(SimPhaseTimer, APhaseStartedInsideAnotherIsItsIndentedPartAndCountsOnce) {
  sim::phase_timer timer(true);
  for (int k = 0; k < 2; ++k) {
    auto outer = timer.phase("step");
    { auto inner = timer.phase("part"); }
  }
  { auto p = timer.phase("after"); }
  EXPECT_EQ(timer.calls("part"), 2u);
  const std::string t = timer.table();
  EXPECT_NE(t.find("timing: step"), std::string::npos) << t;
  EXPECT_NE(t.find("timing:   part"), std::string::npos) << "indented below its phase\n" << t;
  EXPECT_LT(t.find("part"), t.find("after")) << "right after the phase it is part of\n" << t;
  // "all" adds the outermost phases only.
  const double all = timer.milliseconds("step") + timer.milliseconds("after");
  const std::size_t at = t.find("timing: all");
  ASSERT_NE(at, std::string::npos) << t;
  EXPECT_NEAR(std::stod(t.substr(t.find_first_of("0123456789", at + 11))), all, 0.002) << t;
}

TEST(SimPhaseTimer, DisabledTimerRecordsNothing) {
  sim::phase_timer timer(false);
  { auto p = timer.phase("x"); }
  EXPECT_EQ(timer.calls("x"), 0u);
  EXPECT_EQ(timer.table(), "");
}

}  // namespace shoal::test
