#pragma once
/// @file
/// CSV time series: a header `step,<column>,...`, then one row per sampled step. Values are
/// integers, or decimals written with a fixed number of digits (sim::fixed), never with the
/// shortest round-trip form, so that identical runs give byte-identical files.
///
///   sim::csv_writer csv(path, {"fish", "sharks"});      // throws sim::csv_error if it cannot write
///   if (sim::csv_writer::due(step, every, last)) csv.row(step, {fish, sharks});

#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace shoal::sim {

class csv_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A decimal value written with `digits` digits after the point ("%.*f").
struct fixed {
  double value;
  int digits = 6;
};

/// One cell of a row: a signed or unsigned integer, or a fixed decimal.
class csv_value {
 public:
  template <class I>
    requires std::is_integral_v<I>
  csv_value(I v) {  // NOLINT: implicit, so rows read {fish, sharks}
    if constexpr (std::is_signed_v<I>) text_ = std::to_string(static_cast<long long>(v));
    else text_ = std::to_string(static_cast<unsigned long long>(v));
  }
  csv_value(fixed f) {  // NOLINT
    if (!std::isfinite(f.value)) {
      text_ = std::isnan(f.value) ? "nan" : (f.value > 0 ? "inf" : "-inf");
      return;
    }
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", f.digits, f.value);
    text_ = buffer;
    if (text_.find_first_not_of("-0.") == std::string::npos) text_ = text_.substr(text_[0] == '-');  // no "-0.00"
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

class csv_writer {
 public:
  /// Creates (truncates) `path` and writes the header. Throws csv_error naming the file.
  csv_writer(const std::string& path, std::vector<std::string> columns)
      : path_(path), columns_(columns.size()) {
    file_ = std::fopen(path.c_str(), "w");
    if (file_ == nullptr) throw csv_error("cannot write the CSV file '" + path + "'");
    std::string header = "step";
    for (const auto& c : columns) header += "," + c;
    write_line(header);
  }
  csv_writer(const csv_writer&) = delete;
  csv_writer& operator=(const csv_writer&) = delete;
  ~csv_writer() {
    if (file_ != nullptr) std::fclose(file_);
  }

  /// Whether step is sampled: step 0, every `every`-th step, and the last step.
  static bool due(std::uint64_t step, std::uint64_t every, std::uint64_t last) {
    return step == 0 || step == last || (every != 0 && step % every == 0);
  }

  /// Writes one row; `values` must have one value per column.
  void row(std::uint64_t step, std::initializer_list<csv_value> values) {
    row(step, std::vector<csv_value>(values));
  }
  void row(std::uint64_t step, const std::vector<csv_value>& values) {
    if (values.size() != columns_)
      throw csv_error("CSV row of " + std::to_string(values.size()) + " values for " +
                      std::to_string(columns_) + " columns");
    std::string line = std::to_string(step);
    for (const auto& v : values) line += "," + v.text();
    write_line(line);
  }

  /// Flushes and closes; throws csv_error if anything could not be written (disk full).
  void close() {
    if (file_ == nullptr) return;
    const bool ok = std::fflush(file_) == 0 && !std::ferror(file_);
    const bool closed = std::fclose(file_) == 0;
    file_ = nullptr;
    if (!ok || !closed) throw csv_error("error while writing the CSV file '" + path_ + "'");
  }

 private:
  void write_line(const std::string& line) {
    if (std::fputs(line.c_str(), file_) < 0 || std::fputc('\n', file_) == EOF)
      throw csv_error("error while writing the CSV file '" + path_ + "'");
  }

  std::string path_;
  std::size_t columns_;
  std::FILE* file_ = nullptr;
};

}  // namespace shoal::sim
