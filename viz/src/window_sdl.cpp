// The SDL2 window (see window.hpp).

#include <SDL.h>

#include <algorithm>
#include <cstring>

#include "shoal/viz/window.hpp"

namespace shoal::viz {

struct window::impl {
  SDL_Window* win = nullptr;
  SDL_Renderer* renderer = nullptr;
  SDL_Texture* texture = nullptr;
  std::uint32_t width = 0, height = 0;
  double hz = 60.0;

  ~impl() {
    if (texture) SDL_DestroyTexture(texture);
    if (renderer) SDL_DestroyRenderer(renderer);
    if (win) SDL_DestroyWindow(win);
    SDL_QuitSubSystem(SDL_INIT_VIDEO);
  }

  void render() {
    SDL_SetRenderDrawColor(renderer, 0, 0, 0, 255);
    SDL_RenderClear(renderer);
    SDL_RenderCopy(renderer, texture, nullptr, nullptr);
  }

  void translate(const SDL_Event& e, window_input& in) {
    switch (e.type) {
      case SDL_QUIT: in.quit = true; break;
      case SDL_WINDOWEVENT:
        if (e.window.event == SDL_WINDOWEVENT_CLOSE) in.quit = true;
        if (e.window.event == SDL_WINDOWEVENT_EXPOSED || e.window.event == SDL_WINDOWEVENT_SIZE_CHANGED) in.redraw = true;
        break;
      case SDL_KEYDOWN:
        switch (e.key.keysym.sym) {
          case SDLK_q:
          case SDLK_ESCAPE: in.quit = true; break;
          case SDLK_SPACE: in.toggle_pause = !in.toggle_pause; break;
          case SDLK_n:
          case SDLK_RIGHT: in.step = true; break;
          case SDLK_s: in.screenshot = true; break;
          default: break;
        }
        break;
      default: break;
    }
  }
};

window::window(const std::string& title, std::uint32_t width, std::uint32_t height) : impl_(std::make_unique<impl>()) {
  if (SDL_InitSubSystem(SDL_INIT_VIDEO) != 0)
    throw window_error(std::string("--window: cannot open a window: ") + SDL_GetError() +
                       " (no display? use --frames DIR on a headless machine)");
  impl& m = *impl_;
  m.width = width, m.height = height;
  SDL_DisplayMode mode;
  int w = static_cast<int>(width), h = static_cast<int>(height);
  if (SDL_GetDesktopDisplayMode(0, &mode) == 0) {
    if (mode.refresh_rate > 0) m.hz = mode.refresh_rate;
    // A frame larger than the screen opens scaled down (the texture keeps its full size).
    const double fit = std::min({1.0, 0.9 * mode.w / w, 0.9 * mode.h / h});
    w = std::max(1, static_cast<int>(w * fit)), h = std::max(1, static_cast<int>(h * fit));
  }
  m.win = SDL_CreateWindow(title.c_str(), SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED, w, h,
                           SDL_WINDOW_RESIZABLE);
  // No SDL_RENDERER_PRESENTVSYNC: presenting must never hold up the step loop.
  if (m.win) m.renderer = SDL_CreateRenderer(m.win, -1, 0);
  if (m.renderer) {
    SDL_SetHint(SDL_HINT_RENDER_SCALE_QUALITY, "nearest");  // cells stay crisp when enlarged
    SDL_RenderSetLogicalSize(m.renderer, static_cast<int>(width), static_cast<int>(height));  // letterboxing
    m.texture = SDL_CreateTexture(m.renderer, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STREAMING,
                                  static_cast<int>(width), static_cast<int>(height));
  }
  if (!m.texture) throw window_error(std::string("--window: cannot create the window: ") + SDL_GetError());
}

window::~window() = default;

bool window::built_in() { return true; }

window_input window::poll() {
  window_input in;
  SDL_Event e;
  while (SDL_PollEvent(&e)) impl_->translate(e, in);
  return in;
}

window_input window::wait(int ms) {
  window_input in;
  SDL_Event e;
  if (SDL_WaitEventTimeout(&e, ms)) {
    impl_->translate(e, in);
    while (SDL_PollEvent(&e)) impl_->translate(e, in);
  }
  return in;
}

void window::present(const image_view& frame, image* readback) {
  impl& m = *impl_;
  void* dst = nullptr;
  int pitch = 0;
  if (SDL_LockTexture(m.texture, nullptr, &dst, &pitch) == 0) {
    const std::size_t row = std::size_t{frame.width} * sizeof(pixel);
    for (std::uint32_t y = 0; y < frame.height; ++y)
      std::memcpy(static_cast<char*>(dst) + std::size_t(y) * pitch, frame.pixels + std::size_t(y) * frame.width, row);
    SDL_UnlockTexture(m.texture);
  }
  m.render();
  if (readback != nullptr) {
    // The back buffer at the window's size (equal to the frame's unless the window was resized).
    int w = 0, h = 0;
    SDL_GetRendererOutputSize(m.renderer, &w, &h);
    *readback = image(static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(h));
    SDL_Rect all{0, 0, w, h};
    // Read back in physical pixels: the logical size would map the rect through the scaling.
    SDL_RenderSetLogicalSize(m.renderer, 0, 0);
    SDL_RenderSetViewport(m.renderer, nullptr);
    if (SDL_RenderReadPixels(m.renderer, &all, SDL_PIXELFORMAT_RGBA32, readback->pixels.data(), w * 4) != 0)
      throw window_error(std::string("cannot read the window back: ") + SDL_GetError());
    SDL_RenderSetLogicalSize(m.renderer, static_cast<int>(m.width), static_cast<int>(m.height));
  }
  SDL_RenderPresent(m.renderer);
}

void window::redraw() {
  impl_->render();
  SDL_RenderPresent(impl_->renderer);
}

double window::refresh_rate() const { return impl_->hz; }

void window::set_title(const std::string& title) { SDL_SetWindowTitle(impl_->win, title.c_str()); }

}  // namespace shoal::viz
