// --timing without code in the model: a runtime given a phase timer (runtime::time_with, which
// viz::run_steps calls) times each do-all, launch and parallel_new under its name, inside the
// phases that the model times itself, and nothing once the timer is taken away.
#include <string>

#include "shoal/shoal.hpp"
#include "shoal/sim/phase_timer.hpp"
#include "test_support.hpp"

namespace shoal::test::timing {

class Cell;
using Board = shoal::heap<Cell>;
class Cell : public shoal::object<Board, Cell> {
 public:
  SHOAL_FIELDS(Cell, (int, value))
  SHOAL_HD explicit Cell(std::uint64_t i) { value = static_cast<int>(i); }
  SHOAL_HD void bump() { value = value + 1; }
};

void empty_launch(shoal::runtime<Board>& rt) {
  rt.launch(4, [] SHOAL_DEVICE(std::size_t) {});
}

TEST(RuntimeTiming, DoAllsLaunchesAndParallelNewAreTimedByNameInsideTheModelsPhases) {
  SHOAL_REQUIRE_DEVICE();
  shoal::runtime<Board> rt(1 << 20);
  sim::phase_timer timer(true);
  rt.time_with(&timer);
  rt.parallel_new<Cell>(100);
  for (int k = 0; k < 2; ++k) {
    auto step = timer.phase("step");
    rt.parallel_do<&Cell::bump>();
    empty_launch(rt);
  }
  rt.time_with(nullptr);
  rt.parallel_do<&Cell::bump>();  // not timed any more
  rt.synchronize();
  EXPECT_EQ(timer.calls("step"), 2u);
  EXPECT_EQ(timer.calls("Cell::bump"), 2u);
  EXPECT_EQ(timer.calls("launch"), 2u);
  const std::string t = timer.table();
  EXPECT_NE(t.find("timing: parallel_new<"), std::string::npos) << t;
  EXPECT_NE(t.find("timing:   Cell::bump"), std::string::npos) << "a part of the model's step\n" << t;
  EXPECT_NE(t.find("timing:   launch"), std::string::npos) << t;
  EXPECT_LT(t.find("step"), t.find("Cell::bump")) << t;

  sim::phase_timer off(false);  // a disabled timer: nothing is timed
  rt.time_with(&off);
  rt.parallel_do<&Cell::bump>();
  EXPECT_EQ(off.table(), "");
}

}  // namespace shoal::test::timing
