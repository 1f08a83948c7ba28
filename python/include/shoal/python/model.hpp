#pragma once
/// @file
/// A Shoal model as a Python class (nanobind): the model class that `shoal::sim::run_model` runs
/// as a program (see shoal/viz/driver.hpp and docs/tutorial.md) becomes, with one line,
///
///   shoal::python::bind_model<wator::app>(module, "WaTor");
///
///   m = WaTor(width=512, height=512, seed=7)   # the program's flags as keywords, same defaults
///   m.step(100)                                 # GIL released; Ctrl-C stops between two steps
///   m.census()                                  # {"fish": ..., "sharks": ...}
///   m.row()                                     # the CSV row now: {"fish": ..., ...}
///   m.agents("Fish")                            # {"cell": array, "energy": array, ...}
///   m.agents("Fish", device=True)               # the same on the GPU (DLPack)
///   fields, live = m.agent_view("Fish")         # the heap's own memory, no copy
///   m.save("run.shoal"); WaTor.resume("run.shoal")
///   m.frame()                                   # the viewer's picture: height x width x 4 (RGBA)
///
/// The keywords go through the program's own command-line parser (sim::parse_model_command_line),
/// so the defaults, the checks and the one-line messages are the program's: a bad value raises
/// ValueError with the line the program would print, an unknown keyword TypeError. The same
/// seed and flags give the same numbers as the command line (`steps`, `checksum()`, the CSV row).
/// A checkpoint saved here resumes with `--resume` and the other way round.
///
/// Columns: shoal/python/columns.hpp says what agents() and agent_view() give.

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "shoal/python/columns.hpp"
#include "shoal/viz/driver.hpp"

namespace shoal::python {

namespace nb = nanobind;

namespace detail {

template <class R>
struct heap_of;
template <class H>
struct heap_of<shoal::runtime<H>> {
  using type = H;
};

/// The flag a keyword stands for: heap_mb → --heap-mb.
inline std::string flag_of(std::string keyword) {
  for (char& c : keyword)
    if (c == '_') c = '-';
  return "--" + keyword;
}

/// The program's flags that a Python model has no use for: it steps, saves, resumes, times and
/// draws through its methods.
inline bool program_only(const std::string& flag) {
  for (const char* f : {"--steps", "--csv", "--csv-every", "--frames", "--frame-every", "--frame-size", "--overlay",
                        "--window", "--screenshot-at", "--checkpoint", "--checkpoint-every", "--resume",
                        "--defrag-every", "--quiet", "--timing", "--help"})
    if (flag == f) return true;
  return false;
}

/// A CSV cell as a Python number: an int, or a float for a decimal (or nan, inf).
inline nb::object number_of(const std::string& text) {
  if (text.find_first_of(".ni") != std::string::npos) return nb::float_(std::stod(text));
  if (!text.empty() && text[0] == '-') return nb::int_(std::stoll(text));
  return nb::int_(std::stoull(text));
}

/// The class name without its namespaces: "wator::Fish" → "Fish".
template <class T>
std::string short_name() {
  const std::string_view full = shoal::detail::type_name<T>();
  const auto colon = full.rfind("::");
  return std::string(colon == std::string_view::npos ? full : full.substr(colon + 2));
}

/// A NumPy array of the given shape that owns `values` (moved in).
template <class E>
nb::object owned_array(std::vector<E>&& values, std::initializer_list<std::size_t> shape) {
  auto* owned = new std::vector<E>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<E>*>(p); });
  return nb::ndarray<nb::numpy, E>(owned->data(), shape, owner).cast();
}

}  // namespace detail

/// One model of App, its flags as the program parsed them, and the steps it has run.
template <class App>
class model {
 public:
  using heap = typename detail::heap_of<std::remove_cvref_t<decltype(std::declval<App&>().runtime())>>::type;

  /// From the program's command line (words[0] is the program's name).
  explicit model(const std::vector<std::string>& words)
      : cli_(App::name, App::description, sim::model_defaults<App>()) {
    cli_.hold_errors();
    std::vector<const char*> argv;
    for (const std::string& w : words) argv.push_back(w.c_str());
    if (sim::parse_model_command_line<App>(cli_, flags_, static_cast<int>(argv.size()), argv.data()) >= 0)
      throw nb::value_error(cli_.last_error().c_str());
    arch::require_device();
    try {
      app_.emplace(flags_, cli_.options());
    } catch (const sim::usage_error& e) {
      throw nb::value_error(e.what());
    } catch (const backend_error& e) {
      if constexpr (requires { App::sized_by; })
        throw nb::value_error((std::string(App::sized_by) + ": " + e.what()).c_str());
      else
        throw nb::value_error((std::string("heap_mb: ") + e.what()).c_str());
    }
    if (const checkpoint::reader* r = cli_.resume()) {
      if constexpr (sim::model_with_checkpoints<App>) {
        try {
          app_->resume(*r);
        } catch (const checkpoint_error& e) {
          throw nb::value_error(e.what());
        }
      }
      steps_ = cli_.resume_step();
    } else if constexpr (requires(App& a) { a.populate(); }) {
      app_->populate();
    }
    app_->runtime().synchronize();
  }

  /// The words of the program's command line that `keywords` stand for; TypeError for a keyword
  /// that is not one of the model's flags (or one only the program uses).
  static std::vector<std::string> words_of(const nb::kwargs& keywords, const char* python_name) {
    sim::app_cli probe(App::name, App::description, sim::model_defaults<App>());
    typename App::flags flags;
    sim::flag_table<typename App::flags> table(probe.app(), flags);
    App::add_flags(table, flags);
    std::vector<std::string> words{App::name};
    for (auto [key, value] : keywords) {
      const std::string keyword = nb::cast<std::string>(key);
      const std::string flag = detail::flag_of(keyword);
      if (detail::program_only(flag) || probe.app().find(flag) == nullptr)
        throw nb::type_error((std::string(python_name) + "() got an unexpected keyword argument '" + keyword + "'").c_str());
      if (nb::isinstance<nb::bool_>(value)) {
        if (nb::cast<bool>(value)) words.push_back(flag);
        continue;
      }
      if (!nb::isinstance<nb::int_>(value) && !nb::isinstance<nb::float_>(value) && !nb::isinstance<nb::str>(value))
        throw nb::type_error((std::string(python_name) + "(): " + keyword + " must be a number or a string, not " +
                              nb::cast<std::string>(nb::str(value.type().attr("__name__"))))
                                 .c_str());
      words.push_back(flag);
      words.push_back(nb::cast<std::string>(nb::str(value)));
    }
    return words;
  }

  /// Runs `n` steps with the GIL released. Ctrl-C (any pending signal) stops between two steps
  /// with the model consistent and `steps` counting the steps done.
  void step(std::uint64_t n) {
    nb::gil_scoped_release released;
    try {
      for (std::uint64_t i = 0; i < n; ++i) {
        app_->step(steps_ + 1, timer_);
        ++steps_;
        if (i + 1 < n) {
          nb::gil_scoped_acquire held;
          if (PyErr_CheckSignals() != 0) throw nb::python_error();
        }
      }
      app_->runtime().synchronize();
    } catch (...) {
      app_->runtime().synchronize();
      throw;
    }
  }

  std::uint64_t steps() const { return steps_; }

  /// The model itself, for methods of a module's own (a do-all bound with .def, see docs/python.md).
  App& app() { return *app_; }

  /// The populations the program's summary line gives, by name.
  nb::dict census() {
    nb::dict out;
    for (const auto& [name, count] : app_->result().populations) out[name.c_str()] = count;
    return out;
  }
  /// The program's checksum of the state now.
  std::uint64_t checksum() { return app_->result().checksum; }
  /// The CSV row of the state now, by column.
  nb::dict row() {
    nb::dict out;
    const std::vector<std::string> columns = App::csv_columns();
    const std::vector<sim::csv_value> values = app_->csv_row();
    for (std::size_t i = 0; i < columns.size() && i < values.size(); ++i)
      out[columns[i].c_str()] = detail::number_of(values[i].text());
    return out;
  }

  /// Every live object of the class `name` (and its subclasses), one array per field, in heap
  /// order: NumPy arrays, or with `device` arrays on the backend's device (DLPack; on the cpu
  /// backend the same NumPy arrays). See shoal/python/columns.hpp.
  nb::dict agents(const std::string& name, bool device) {
    std::optional<nb::dict> out;
    for_class(name, "agents", [&]<class T>() {
      auto& rt = app_->runtime();
      const shoal::detail::row_plan plan = rt.template plan_rows<T>();
      out = detail::gathered_columns<T>(rt.view(), plan, device, columns_,
                                        std::make_index_sequence<shoal::agent_columns<T>::field_count>());
    });
    return *out;
  }

  /// The fields of the concrete class `name` in the heap itself, without a copy: a dict of
  /// arrays of blocks x slots (x elements) and the `live` array that says which slots hold one of
  /// its objects (see shoal/python/columns.hpp).
  nb::tuple agent_view(const std::string& name) {
    std::optional<nb::tuple> out;
    for_class(name, "agent_view", [&]<class T>() {
      if constexpr (shoal::abstract_object<T>) {
        throw nb::value_error(("agent_view(): " + name + " is abstract: view one of its concrete classes").c_str());
      } else {
        auto& rt = app_->runtime();
        rt.synchronize();  // the stocks settled, so that live bits are exact
        const auto& h = rt.view();
        constexpr std::uint32_t t = heap::template type_id<T>;
        nb::dict columns = detail::heap_columns<T>(h, t, nb::find(this), std::make_index_sequence<shoal::agent_columns<T>::field_count>());
        out = nb::make_tuple(columns, detail::live_slots(h, t));
      }
    });
    return *out;
  }

  /// The picture of the state now, as the viewer paints it (without its chart panel): an
  /// array of height x width x 4 bytes, RGBA, row 0 at the top.
  nb::object frame()
    requires sim::model_with_view<App>
  {
    const viz::scene_spec spec = app_->scene(cli_.options());
    const std::uint32_t panel = std::min(spec.chart_height, spec.height / 2);
    const viz::rect area{0, 0, spec.width, spec.height - panel};
    if (!shown_) {
      if constexpr (requires(App& a) { a.show_in(area); }) app_->show_in(area);
      shown_ = true;
    }
    viz::canvas canvas(spec.width, spec.height);
    arch::device_buffer<unsigned long long> values(std::max<std::size_t>(1, spec.labels.size()));
    arch::fill_bytes(values.data(), 0, values.size() * sizeof(unsigned long long));
    app_->count(values.data());  // the viewer counts before it paints; some apps rely on it
    app_->paint(canvas.view(), area);
    std::vector<std::uint8_t> rgba(std::size_t{area.width} * area.height * 4);
    arch::copy_to_host(rgba.data(), canvas.view().pixels, rgba.size());
    return detail::owned_array(std::move(rgba), {area.height, area.width, 4});
  }

  /// Writes a checkpoint that this class's resume() and the program's --resume read.
  void save(const std::string& path)
    requires sim::model_with_checkpoints<App>
  {
    sim::write_checkpoint(path, App::name, steps_, cli_.options().seed, [&](checkpoint::writer& w) { app_->save(w); });
  }

  /// The words of a resumed model's command line.
  static std::vector<std::string> resume_words(const std::string& path) {
    return {App::name, "--resume", path, "--steps", std::to_string(sim::max_steps)};
  }

 private:
  /// Calls f.template operator()<T>() for the heap class named `name` (without namespaces);
  /// ValueError naming the classes there are otherwise.
  template <class F>
  void for_class(const std::string& name, const char* method, F&& f) {
    bool found = false;
    std::string classes;
    heap::for_each_type([&]<class T>() {
      const std::string n = detail::short_name<T>();
      classes += (classes.empty() ? "" : ", ") + n;
      if (found || n != name) return;
      found = true;
      f.template operator()<T>();
    });
    if (!found)
      throw nb::value_error((std::string(method) + "(): " + App::name + " has no class '" + name + "' (its classes: " + classes + ")").c_str());
  }

  sim::app_cli cli_;
  typename App::flags flags_;
  std::optional<App> app_;
  sim::phase_timer timer_{false};
  std::uint64_t steps_ = 0;
  bool shown_ = false;  // App::show_in called (once, before the first picture)
  detail::column_memory columns_;  // agents()' pinned buffers and gather array
};

/// Adds App to `scope` as the Python class `python_name`.
template <class App>
nb::class_<model<App>> bind_model(nb::handle scope, const char* python_name) {
  using M = model<App>;
  nb::class_<M> c(scope, python_name, App::description);
  const std::string name = python_name;
  c.def(
      "__init__", [name](M* self, nb::kwargs keywords) { new (self) M(M::words_of(keywords, name.c_str())); },
      "The model with the program's flags as keywords (heap_mb for --heap-mb), the same defaults.");
  c.def("step", &M::step, nb::arg("n") = 1, "Runs n steps (the GIL released; Ctrl-C stops between steps).");
  c.def_prop_ro("steps", &M::steps, "Steps run so far (a resumed model counts the saved ones).");
  c.def("census", &M::census, "The populations of the program's summary line, by name.");
  c.def("checksum", &M::checksum, "The program's checksum of the state now.");
  c.def("row", &M::row, "The program's CSV row of the state now, by column.");
  c.def("agents", &M::agents, nb::arg("name"), nb::arg("device") = false,
        "Every live object of a class (and of its subclasses): one array per field, NumPy, or on the GPU with "
        "device=True (DLPack: torch.from_dlpack, cupy.from_dlpack).");
  c.def("agent_view", &M::agent_view, nb::arg("name"),
        "The fields of a concrete class in the heap itself, without a copy: (arrays of blocks x slots, live), "
        "live 1 where a slot holds one of its objects.");
  if constexpr (sim::model_with_view<App>)
    c.def("frame", &M::frame, "The viewer's picture of the state now: height x width x 4 bytes (RGBA).");
  if constexpr (sim::model_with_checkpoints<App>) {
    c.def("save", &M::save, nb::arg("path"), "Writes a checkpoint (the program's --resume reads it too).");
    c.def_static(
        "resume", [](const std::string& path) { return new M(M::resume_words(path)); }, nb::arg("path"),
        nb::rv_policy::take_ownership, "The model saved in a checkpoint, ready to step on.");
  }
  return c;
}

}  // namespace shoal::python
