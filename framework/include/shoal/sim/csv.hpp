#pragma once
/// @file
/// CSV time series: a header `step,<column>,...`, then one row per sampled step. Values are
/// integers, or decimals written with a fixed number of digits (sim::fixed), never with the
/// shortest round-trip form, so that identical runs give byte-identical files.
///
///   sim::csv_writer csv(path, {"fish", "sharks"});      // throws sim::csv_error if it cannot write
///   if (sim::csv_writer::due(step, every, last)) csv.row(step, {fish, sharks});
///   csv.close();                                         // the file appears at `path` only now
///
/// The rows go to a temporary file beside `path` (io/temporary_files.hpp) that close() renames
/// over it: a run that fails or is interrupted before close() leaves the file that was at
/// `path` as it was, and its partial rows are removed with the temporary file. A path of "-"
/// writes the rows to standard output instead (see csv_writer::standard_output).

#include <cinttypes>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "shoal/io/temporary_files.hpp"

namespace shoal::sim {

/// The CSV file cannot be written, or a row has the wrong number of values.
class csv_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A decimal value written with `digits` digits after the point ("%.*f").
struct fixed {
  double value;  ///< the number; nan and infinities are written "nan", "inf", "-inf"
  int digits = 6;  ///< digits after the point
};

/// One cell of a row: a signed or unsigned integer, or a fixed decimal.
class csv_value {
 public:
  /// An integer in decimal.
  template <class I>
    requires std::is_integral_v<I>
  csv_value(I v) {  // NOLINT: implicit, so rows read {fish, sharks}
    if constexpr (std::is_signed_v<I>) text_ = std::to_string(static_cast<long long>(v));
    else text_ = std::to_string(static_cast<unsigned long long>(v));
  }
  /// A decimal with f.digits digits after the point; one that rounds to zero has no minus sign.
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
  /// The cell as written in the file.
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

/// Writes a CSV time series atomically: the constructor opens a temporary file beside the
/// path and writes the header, row() adds a row (due() says which steps to sample), close()
/// renames the file into place. A path of "-" writes to standard output instead.
class csv_writer {
 public:
  /// The path that means standard output: the rows go there as they are written (no temporary
  /// file), and the process's own standard output goes to standard error from then on.
  static constexpr const char* standard_output = "-";

  /// Opens the temporary file beside `path` and writes the header. Throws csv_error naming
  /// the file.
  csv_writer(const std::string& path, std::vector<std::string> columns) : path_(path), columns_(columns.size()) {
    try {
      if (path == standard_output) stream_ = io::take_standard_output();
      else file_.emplace(path, "the CSV file");
    } catch (const io::output_error& e) {
      throw csv_error(e.what());
    }
    std::string header = "step";
    for (const auto& c : columns) header += "," + c;
    write_line(header);
  }
  csv_writer(const csv_writer&) = delete;
  csv_writer& operator=(const csv_writer&) = delete;
  /// Without close(): the temporary file is removed and `path` keeps what it had.
  ~csv_writer() = default;

  /// Whether step is sampled: step 0, every `every`-th step, and the last step.
  static bool due(std::uint64_t step, std::uint64_t every, std::uint64_t last) {
    return step == 0 || step == last || (every != 0 && step % every == 0);
  }

  /// Writes one row; `values` must have one value per column.
  void row(std::uint64_t step, std::initializer_list<csv_value> values) {
    row(step, std::vector<csv_value>(values));
  }
  /// As above, for values gathered at run time.
  void row(std::uint64_t step, const std::vector<csv_value>& values) {
    if (values.size() != columns_)
      throw csv_error("CSV row of " + std::to_string(values.size()) + " values for " +
                      std::to_string(columns_) + " columns");
    std::string line = std::to_string(step);
    for (const auto& v : values) line += "," + v.text();
    write_line(line);
  }

  /// Writes what is buffered and renames the file into place; throws csv_error if anything
  /// could not be written (disk full), leaving `path` as it was.
  void close() {
    if (stream_ >= 0) {
      flush();
      stream_ = -1;
      return;
    }
    if (!file_) return;
    try {
      flush();
      file_->commit();
    } catch (const io::output_error& e) {
      file_.reset();
      throw csv_error(e.what());
    }
    file_.reset();
  }

 private:
  void write_line(const std::string& line) {
    buffer_ += line;
    buffer_ += '\n';
    if (buffer_.size() >= (std::size_t{1} << 16)) flush();
  }
  void flush() {
    if (stream_ >= 0) {
      if (!io::write_all(stream_, buffer_.data(), buffer_.size()))
        throw csv_error(std::string("cannot write the CSV rows to standard output: ") + std::strerror(errno));
      buffer_.clear();
      return;
    }
    try {
      file_->write(buffer_.data(), buffer_.size());
    } catch (const io::output_error& e) {
      throw csv_error(e.what());
    }
    buffer_.clear();
  }

  std::string path_;
  std::size_t columns_;
  std::optional<io::temporary_file> file_;
  int stream_ = -1;  // standard output (path "-"), else -1
  std::string buffer_;  ///< rows not yet written (one write per 64 KiB)
};

}  // namespace shoal::sim
