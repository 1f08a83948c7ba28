#pragma once
/// @file
/// The checkpoint file: named sections in a versioned, checksummed container, written
/// atomically and read back with every length and offset checked.
///
///   shoal::checkpoint::writer w;
///   rt.save_heap(w);                        // section "heap" (runtime.hpp)
///   w.value("step", step);                  // named byte blobs
///   w.commit("run.ckpt");                   // temporary file, fsync, rename: all or nothing
///
///   shoal::checkpoint::reader r("run.ckpt");  // checks magic, version, size, checksum
///   rt.load_heap(r);
///   auto step = r.value<std::uint64_t>("step");
///
/// Layout (all integers little-endian, fixed size; nothing depends on the backend):
///
///   header   32 bytes: "SHOALCKP", u32 format version, u32 header bytes (32), u64 file bytes,
///                      u32 section count, u32 CRC-32C of the header's first 28 bytes
///   section  u32 kind, u32 0, u64 payload bytes, u32 name length, name, zero padding to 8,
///            payload, zero padding to 8                                   (section count times)
///   trailer  16 bytes: "SHOALEND", u32 CRC-32C of every byte before it, u32 0
///
/// The header has its own CRC so that a file of another format version is told apart from a
/// corrupt one before anything else is trusted; the trailer's CRC covers the whole file.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "shoal/checkpoint/bytes.hpp"
#include "shoal/checkpoint/crc32c.hpp"
#include "shoal/checkpoint/error.hpp"
#include "shoal/io/temporary_files.hpp"

namespace shoal::checkpoint {

/// The first 8 bytes of every checkpoint file.
inline constexpr char file_magic[8] = {'S', 'H', 'O', 'A', 'L', 'C', 'K', 'P'};
/// The first 8 bytes of the trailer, before the whole-file CRC.
inline constexpr char trailer_magic[8] = {'S', 'H', 'O', 'A', 'L', 'E', 'N', 'D'};
/// Bumped whenever the layout of the file or of a section changes.
inline constexpr std::uint32_t format_version = 1;
/// Size of the file header.
inline constexpr std::size_t header_bytes = 32;
/// Size of the file trailer.
inline constexpr std::size_t trailer_bytes = 16;
/// The longest section name; a longer one is refused on writing and reported as corrupt on reading.
inline constexpr std::uint32_t max_name_bytes = 256;

/// What a section holds (stored as its u32 kind); reader::section() checks it.
enum class section_kind : std::uint32_t {
  heap = 1,      ///< the objects of a runtime's heap (runtime::save_heap)
  blob = 2,      ///< user bytes (RNG counters, step, parameters)
  pointers = 3,  ///< an array of heap pointers kept outside the heap, relocated on load
};

/// "heap", "blob", "pointers" (or "unknown"), for messages.
inline const char* kind_name(section_kind k) {
  switch (k) {
    case section_kind::heap: return "heap";
    case section_kind::blob: return "blob";
    case section_kind::pointers: return "pointers";
  }
  return "unknown";
}

/// Collects named sections in memory, then writes them as one checkpoint file with commit()
/// (or returns its bytes with bytes()). Sections are written in the order they were added.
class writer {
 public:
  /// Adds a section; names are unique within a file.
  void add(section_kind kind, std::string name, std::vector<std::byte> payload) {
    if (name.empty() || name.size() > max_name_bytes)
      throw checkpoint_error("checkpoint section name '" + name + "' must have 1.." +
                             std::to_string(max_name_bytes) + " bytes");
    for (const auto& s : sections_)
      if (s.name == name) throw checkpoint_error("checkpoint section '" + name + "' added twice");
    sections_.push_back({kind, std::move(name), std::move(payload)});
  }
  /// Adds a blob section holding a copy of `bytes`.
  void blob(std::string name, std::span<const std::byte> bytes) {
    add(section_kind::blob, std::move(name), std::vector<std::byte>(bytes.begin(), bytes.end()));
  }
  /// A trivially copyable value as a blob (its bytes as they are in memory).
  template <class T>
  void value(std::string name, const T& v) {
    static_assert(std::is_trivially_copyable_v<T> && !std::is_pointer_v<T>,
                  "checkpoint values are copied byte for byte: use a trivially copyable type without "
                  "pointers (save heap pointers with runtime::save_pointers)");
    blob(std::move(name), std::as_bytes(std::span(&v, 1)));
  }

  /// The whole file as bytes.
  std::vector<std::byte> bytes() const {
    std::vector<std::byte> out;
    std::size_t total = header_bytes + trailer_bytes;
    for (const auto& s : sections_) total += 24 + s.name.size() + s.payload.size() + 16;
    out.reserve(total);
    byte_sink sink(out);
    sink.put_bytes(std::as_bytes(std::span(file_magic)));
    sink.put(format_version);
    sink.put(static_cast<std::uint32_t>(header_bytes));
    sink.put(std::uint64_t{0});  // file bytes, patched below
    sink.put(static_cast<std::uint32_t>(sections_.size()));
    sink.put(std::uint32_t{0});  // header CRC, patched below
    for (const auto& s : sections_) {
      sink.put(static_cast<std::uint32_t>(s.kind));
      sink.put(std::uint32_t{0});
      sink.put(static_cast<std::uint64_t>(s.payload.size()));
      sink.put_string(s.name);
      sink.pad_to(8);
      sink.put_bytes(s.payload);
      sink.pad_to(8);
    }
    const std::uint64_t file_bytes = out.size() + trailer_bytes;
    std::memcpy(out.data() + 16, &file_bytes, 8);
    const std::uint32_t header_crc = crc32c(std::span(out).first(28));
    std::memcpy(out.data() + 28, &header_crc, 4);
    sink.put_bytes(std::as_bytes(std::span(trailer_magic)));
    const std::uint32_t crc = crc32c(out);
    sink.put(crc);
    sink.put(std::uint32_t{0});
    return out;
  }

  /// Writes the file atomically: a temporary file in the same directory, fsync, rename over
  /// `path`, fsync of the directory. A crash at any point leaves either the old file or the new
  /// one, never a mixture; a failure removes the temporary file and throws checkpoint_error.
  void commit(const std::string& path) const { write_atomically(path, bytes()); }

  /// The temporary file is registered for removal on SIGINT/SIGTERM, and stale ones of dead
  /// processes beside `path` are removed first (io/temporary_files.hpp). A `path` that is a
  /// symbolic link is followed: its target is replaced, the link stays.
  static void write_atomically(const std::string& path, std::span<const std::byte> data) {
    try {
      io::temporary_file t(path, "checkpoint");
      t.write(data.data(), data.size());
      t.commit();
    } catch (const io::output_error& e) {
      throw checkpoint_error(e.what());
    }
  }

 private:
  struct section {
    section_kind kind;
    std::string name;
    std::vector<std::byte> payload;
  };
  std::vector<section> sections_;
};

/// A checkpoint file read into memory and checked as a whole (magic, version, sizes, CRCs)
/// on construction; then answers for its sections by name: section(), blob(), value().
class reader {
 public:
  /// Reads and checks `path`; throws checkpoint_error naming it if it is not a complete, intact
  /// checkpoint of this format version.
  explicit reader(const std::string& path) : name_("checkpoint '" + path + "'") {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) throw checkpoint_error("cannot read " + name_ + ": " + std::strerror(errno));
    std::byte buffer[1 << 16];
    for (;;) {
      const std::size_t n = std::fread(buffer, 1, sizeof buffer, f);
      file_.insert(file_.end(), buffer, buffer + n);
      if (n < sizeof buffer) break;
    }
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed) throw checkpoint_error("cannot read " + name_ + ": read error");
    parse();
  }
  /// Checks a file image already in memory (tests, fuzzing).
  reader(std::vector<std::byte> file, std::string name) : name_(std::move(name)), file_(std::move(file)) {
    parse();
  }
  /// Sections point into the file's bytes: a move keeps them valid (a vector's move keeps its
  /// buffer), a copy would not.
  reader(reader&&) noexcept = default;
  /// Takes over the other reader's file and sections, as the move constructor does.
  reader& operator=(reader&&) noexcept = default;
  reader(const reader&) = delete;
  reader& operator=(const reader&) = delete;

  /// "checkpoint '<path>'", for messages.
  const std::string& name() const { return name_; }
  /// Whether the file has a section of that name (of any kind).
  bool has(std::string_view section_name) const { return find(section_name) != nullptr; }

  /// The payload of section `section_name`, which must be of kind `kind`.
  std::span<const std::byte> section(section_kind kind, std::string_view section_name) const {
    const entry* e = find(section_name);
    if (e == nullptr) throw checkpoint_error(name_ + " has no section '" + std::string(section_name) + "'");
    if (e->kind != kind)
      throw checkpoint_error(name_ + ": section '" + std::string(section_name) + "' is a " + kind_name(e->kind) +
                             " section, not a " + kind_name(kind) + " section");
    return e->payload;
  }
  /// The bytes of blob section `section_name`; throws checkpoint_error if missing or of another kind.
  std::span<const std::byte> blob(std::string_view section_name) const {
    return section(section_kind::blob, section_name);
  }
  /// The value writer::value() saved as `section_name`; throws checkpoint_error if the blob is
  /// missing or does not hold sizeof(T) bytes.
  template <class T>
  T value(std::string_view section_name) const {
    static_assert(std::is_trivially_copyable_v<T> && !std::is_pointer_v<T>);
    const auto b = blob(section_name);
    if (b.size() != sizeof(T))
      throw checkpoint_error(name_ + ": section '" + std::string(section_name) + "' holds " +
                             std::to_string(b.size()) + " bytes, expected " + std::to_string(sizeof(T)));
    T v;
    std::memcpy(&v, b.data(), sizeof(T));
    return v;
  }

 private:
  struct entry {
    section_kind kind;
    std::string name;
    std::span<const std::byte> payload;
  };

  const entry* find(std::string_view section_name) const {
    for (const auto& e : entries_)
      if (e.name == section_name) return &e;
    return nullptr;
  }
  [[noreturn]] void fail(const std::string& why) const { throw checkpoint_error(name_ + " " + why); }

  void parse() {
    const std::span<const std::byte> all(file_);
    if (all.empty()) fail("is empty");
    if (all.size() < 8 || std::memcmp(all.data(), file_magic, 8) != 0)
      fail("is not a Shoal checkpoint (no SHOALCKP magic)");
    if (all.size() < header_bytes + trailer_bytes)
      fail("is truncated (" + std::to_string(all.size()) + " bytes)");
    byte_source head(all.first(header_bytes), name_ + " header");
    head.take(8);
    const auto version = head.get<std::uint32_t>();
    const auto head_bytes = head.get<std::uint32_t>();
    const auto file_bytes = head.get<std::uint64_t>();
    const auto sections = head.get<std::uint32_t>();
    const auto header_crc = head.get<std::uint32_t>();
    if (crc32c(all.first(28)) != header_crc) fail("is corrupt (header checksum mismatch)");
    if (version != format_version)
      fail("has checkpoint format version " + std::to_string(version) + "; this build reads version " +
           std::to_string(format_version));
    if (head_bytes != header_bytes) fail("is corrupt (header of " + std::to_string(head_bytes) + " bytes)");
    if (file_bytes != all.size())
      fail(file_bytes > all.size()
               ? "is truncated (" + std::to_string(all.size()) + " of " + std::to_string(file_bytes) + " bytes)"
               : "has " + std::to_string(all.size() - file_bytes) + " bytes after its end");
    const auto trailer = all.last(trailer_bytes);
    std::uint32_t crc = 0, zero = 0;
    std::memcpy(&crc, trailer.data() + 8, 4);
    std::memcpy(&zero, trailer.data() + 12, 4);
    if (std::memcmp(trailer.data(), trailer_magic, 8) != 0 || zero != 0)
      fail("is corrupt (no SHOALEND trailer)");
    if (crc32c(all.first(all.size() - 8)) != crc) fail("is corrupt (checksum mismatch)");

    byte_source in(all.subspan(header_bytes, all.size() - header_bytes - trailer_bytes), name_);
    for (std::uint32_t i = 0; i < sections; ++i) {
      const auto kind = in.get<std::uint32_t>();
      const auto reserved = in.get<std::uint32_t>();
      const auto payload_bytes = in.get<std::uint64_t>();
      std::string section_name = in.get_string(max_name_bytes);
      in.skip_padding(8);
      const auto payload = in.take(payload_bytes);
      in.skip_padding(8);
      if (kind < 1 || kind > 3 || reserved != 0) fail("is corrupt (section of unknown kind " + std::to_string(kind) + ")");
      if (section_name.empty() || find(section_name) != nullptr)
        fail("is corrupt (section name '" + section_name + "' empty or repeated)");
      entries_.push_back({static_cast<section_kind>(kind), std::move(section_name), payload});
    }
    if (in.left() != 0) fail("is corrupt (" + std::to_string(in.left()) + " bytes after the last section)");
  }

  std::string name_;
  std::vector<std::byte> file_;
  std::vector<entry> entries_;  // payloads point into file_
};

}  // namespace shoal::checkpoint
