// Tutorial step 4: a CSV time series and PNG frames of the run (docs/tutorial.md).
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include "shoal/shoal.hpp"
#include "shoal/sim/sim.hpp"
#include "shoal/viz/viewer.hpp"

namespace sim = shoal::sim;
namespace viz = shoal::viz;

class Rabbit;
using Meadow = shoal::heap<Rabbit>;

class Rabbit : public shoal::object<Meadow, Rabbit> {
 public:
  SHOAL_FIELDS(Rabbit, (unsigned, id), (int, age))
  SHOAL_HD Rabbit(std::size_t i) { id = static_cast<unsigned>(i); age = 0; }
  SHOAL_HD Rabbit(unsigned parent, unsigned day) { id = parent * 7u + day; age = 0; }
  SHOAL_HD void live(unsigned day) {
    age = age + 1;
    if (age > 4) {
      delete this;
      return;
    }
    if ((id + day) % 2 == 0) new Rabbit(id, day);
  }
  /// Shows the rabbit to a painter, so that the model knows nothing of pictures.
  template <class Painter>
  SHOAL_HD void show(Painter p) {
    p(id.get(), age.get());
  }
};

/// A rabbit in a frame: a dot where its id scatters it (these rabbits have no place of their
/// own), white when newborn, orange when old. The painter is copied to every device thread.
struct dot {
  viz::canvas_view c;
  viz::rect area;
  SHOAL_HD void operator()(unsigned id, int age) const {
    const std::uint32_t h = id * 2654435761u, at = static_cast<std::uint32_t>((h ^ h >> 16) % area.area());
    const auto a = static_cast<std::uint32_t>(age);
    viz::pixel& p = c.pixels[std::size_t{area.y + at / area.width} * c.width + area.x + at % area.width];
    // Rabbits that land on one pixel write it from several threads: an atomic, and a colour word
    // that is larger the younger the rabbit (blue is its high byte under alpha; every rabbit's
    // beats the grass's), so the youngest shows, whatever order the threads run in.
    shoal::arch::fetch_max_relaxed(p, viz::rgba(255, 255 - 35 * a, 255 - 50 * a));
  }
};

int run(const std::string& csv_path, const std::string& frames_dir) {
  sim::run_options o;  // what sim::app_cli gives an app for --steps --csv --frames --frame-every
  o.steps = 20;
  o.csv = csv_path;
  o.frames = frames_dir;
  o.frame_every = 5;
  o.overlay = "stable";  // no steps/s in the frames: the same run gives the same pictures
  // Bad paths are bad input: found before any work, one line, status 2 (app_cli does this).
  std::string why = sim::check_output_file(o.csv);
  if (why.empty()) why = sim::prepare_directory(o.frames);
  if (!why.empty()) {
    std::fprintf(stderr, "tutorial_step4_outputs: %s\n", why.c_str());
    return 2;
  }

  using Runtime = shoal::runtime<Meadow>;
  Runtime rt(Runtime::bytes_for<Rabbit>(50000));
  rt.parallel_new<Rabbit>(100);
  sim::census<Meadow> census(rt);  // rabbits per class, counted on the device from the blocks
  sim::csv_writer csv(o.csv, {"rabbits", "blocks"});
  viz::viewer view(o, {.app = "meadow", .width = 240, .height = 240, .labels = {"rabbits"},
                       .chart_height = 60, .chart_colours = {viz::rgba(250, 250, 250)}});
  // The viewer asks for device work on frame days only; neither callback waits for the device.
  auto count = [&](unsigned long long* values) { census.count_into(values); };  // the chart's line
  auto paint = [&](viz::canvas_view c, viz::rect area) {
    viz::clear(c, area, viz::rgba(40, 100, 40));       // grass, under the rabbits
    rt.parallel_do<&Rabbit::show<dot>>(dot{c, area});  // a do-all paints where the rabbits are
  };
  auto record = [&](std::uint64_t day) {
    const auto counts = census.count();  // waits for the day's do-all
    csv.row(day, {census.of<Rabbit>(counts), rt.stats().types[0].blocks});
    view.after_step(day, count, paint);
  };

  record(0);
  for (unsigned day = 1; day <= o.steps; ++day) {
    rt.parallel_do<&Rabbit::live>(day);
    record(day);
  }
  // Both outputs are written beside their targets and appear only now, whole: a run that
  // throws before this point leaves the CSV and frames of an earlier run as they were.
  view.finish();
  csv.close();
  std::printf("%llu rows in %s, %llu frames in %s\n", static_cast<unsigned long long>(o.steps + 1), o.csv.c_str(),
              static_cast<unsigned long long>(view.frames_written()), o.frames.c_str());
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 3) {
    std::fprintf(stderr, "usage: tutorial_step4_outputs [CSV [FRAMES_DIR]]\n");
    return 2;
  }
  try {
    return run(argc > 1 ? argv[1] : "meadow.csv", argc > 2 ? argv[2] : "frames");
  } catch (const std::exception& e) {  // no device, a full heap, a disk that fills up
    std::fprintf(stderr, "tutorial_step4_outputs: %s\n", e.what());
    return 1;
  }
}
