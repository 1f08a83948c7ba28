// The window of a build without SDL2: opening one is a usage error that says how to get one.

#include "shoal/viz/window.hpp"

namespace shoal::viz {

struct window::impl {};

window::window(const std::string&, std::uint32_t, std::uint32_t) {
  throw window_error("this build has no SDL2 window (install libsdl2-dev and rebuild); use --frames DIR");
}
window::~window() = default;
bool window::built_in() { return false; }
window_input window::poll() { return {}; }
window_input window::wait(int) { return {}; }
void window::present(const image_view&, image*) {}
void window::redraw() {}
double window::refresh_rate() const { return 60.0; }
void window::set_title(const std::string&) {}

}  // namespace shoal::viz
