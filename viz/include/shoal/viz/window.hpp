#pragma once
/// @file
/// The SDL2 window (viz/src/window_sdl.cpp; viz/src/window_none.cpp in builds without SDL2,
/// where opening one throws the message that says so). It shows frames as a streaming texture,
/// scaled to the window with letterboxing, and never waits for vsync: the viewer presents at
/// most at the display's rate and the step loop keeps its speed.

#include <memory>
#include <stdexcept>
#include <string>

#include "shoal/viz/image.hpp"

namespace shoal::viz {

/// The window cannot be opened (no SDL2 in this build, no display): a usage error, status 2.
struct window_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// What the user asked for since the last poll.
struct window_input {
  bool quit = false;          ///< q, Esc or the window closed
  bool toggle_pause = false;  ///< space
  bool step = false;          ///< n or right arrow
  bool screenshot = false;    ///< s
  bool redraw = false;        ///< exposed or resized: present the last frame again
};

/// An SDL2 window that shows frames: present() a frame, poll() or wait() for the user's keys,
/// redraw() after an expose. Builds without SDL2 throw window_error on opening.
class window {
 public:
  /// Opens a resizable window of the frame's size (at most the display's). Throws window_error.
  window(const std::string& title, std::uint32_t width, std::uint32_t height);
  ~window();
  window(const window&) = delete;
  window& operator=(const window&) = delete;

  /// True when this build can open windows (it has SDL2).
  static bool built_in();

  /// Events since the last call, without waiting.
  window_input poll();
  /// As poll(), waiting up to `ms` for the first event (while paused).
  window_input wait(int ms);
  /// Uploads the frame and presents it. With `readback`, also returns what was drawn into the
  /// window's back buffer before presenting (a screenshot of the window) in *readback.
  void present(const image_view& frame, image* readback = nullptr);
  /// Presents the last uploaded frame again (after a resize or expose).
  void redraw();
  /// The display's refresh rate in Hz (60 when it does not say).
  double refresh_rate() const;
  /// Replaces the text of the title bar.
  void set_title(const std::string& title);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace shoal::viz
