//===- FixedParts.cpp - binary records and .npy columns, memory-mapped ----===//
//
// Fixed-size rows: a binary part is one file of int32 records (the MLPerf
// DLRM reference's preprocessed Criteo: label, 13 integer features, 26
// category indices a record); an npy part is a directory holding one .npy
// file per column (or per group of columns), rows aligned across files.
// Files are memory-mapped; after a range of rows is decoded its whole pages
// are released (MADV_DONTNEED), so the mapping does not grow resident memory
// as the reader moves through a file larger than memory. A mapped file cut
// short under the reader kills it with SIGBUS; each range checks its files'
// sizes first, so a file cut between ranges (rewritten between epochs) is
// an error that names it. A cut while a range is being read still faults:
// there is no unit test of it because the loader thread reads ahead at
// times a test cannot know (reading with pread would close that window).
//
//===----------------------------------------------------------------------===//

#include "RecordParts.h"
#include "RowDecoding.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>

using namespace embc::runtime;
using namespace embc::runtime::data;

namespace {

/// A read-only file mapping.
class MappedFile {
public:
  explicit MappedFile(const std::string &path) : path_(path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) {
      const std::string why = std::strerror(errno);
      if (fd >= 0)
        ::close(fd);
      throw DataError(path + ": cannot open: " + why);
    }
    size_ = size_t(st.st_size);
    if (size_ > 0)
      base_ = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (base_ == MAP_FAILED) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      throw DataError(path + ": cannot map: " + why);
    }
    fd_ = fd;
  }
  ~MappedFile() {
    if (base_ && base_ != MAP_FAILED)
      ::munmap(base_, size_);
    if (fd_ >= 0)
      ::close(fd_);
  }

  /// Throws when the file is now shorter than it was when mapped.
  void requireWhole() const {
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && size_t(st.st_size) < size_)
      throw DataError(path_ + ": the file was cut from " + std::to_string(size_) + " to " +
                      std::to_string(st.st_size) +
                      " bytes while embrun read it (a data file must not change during a run)");
  }
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  const uint8_t *data() const { return static_cast<const uint8_t *>(base_); }
  size_t size() const { return size_; }
  const std::string &path() const { return path_; }

  /// Drops the whole pages inside [begin, end) from this process's memory
  /// (the page cache keeps them; a later read maps them again).
  void release(size_t begin, size_t end) const {
    static const size_t page = size_t(::sysconf(_SC_PAGESIZE));
    const size_t first = (begin + page - 1) / page * page, last = end / page * page;
    if (last > first)
      ::madvise(static_cast<uint8_t *>(base_) + first, last - first, MADV_DONTNEED);
  }

private:
  std::string path_;
  void *base_ = nullptr;
  size_t size_ = 0;
  int fd_ = -1; ///< kept open to check the size (requireWhole)
};

/// An array of a .npy file: its element type, shape and where its data starts.
struct NpyArray {
  std::shared_ptr<MappedFile> file;
  char kind = 'f';   ///< 'f' float, 'i' signed, 'u' unsigned, 'b' bool
  size_t itemSize = 4;
  uint64_t rows = 0, cols = 1;
  bool twoDimensional = false;
  size_t dataOffset = 0;

  double value(uint64_t row, uint64_t col) const {
    const uint8_t *p = file->data() + dataOffset + (row * cols + col) * itemSize;
    switch (kind) {
    case 'f':
      if (itemSize == 4) {
        float v;
        std::memcpy(&v, p, 4);
        return v;
      } else {
        double v;
        std::memcpy(&v, p, 8);
        return v;
      }
    default:
      return double(integer(row, col));
    }
  }
  int64_t integer(uint64_t row, uint64_t col) const {
    const uint8_t *p = file->data() + dataOffset + (row * cols + col) * itemSize;
    int64_t v = 0;
    switch (itemSize) {
    case 1:
      v = kind == 'i' ? int64_t(int8_t(*p)) : int64_t(*p);
      break;
    case 2: {
      uint16_t u;
      std::memcpy(&u, p, 2);
      v = kind == 'i' ? int64_t(int16_t(u)) : int64_t(u);
      break;
    }
    case 4: {
      uint32_t u;
      std::memcpy(&u, p, 4);
      v = kind == 'i' ? int64_t(int32_t(u)) : int64_t(u);
      break;
    }
    default: {
      uint64_t u;
      std::memcpy(&u, p, 8);
      v = kind == 'i' ? int64_t(u) : int64_t(std::min<uint64_t>(u, uint64_t(INT64_MAX)));
    }
    }
    return v;
  }
  size_t rowBytes() const { return size_t(cols) * itemSize; }
};

/// The value of `key` in a .npy header's dictionary, as written by NumPy:
/// "{'descr': '<f4', 'fortran_order': False, 'shape': (10, 13), }".
std::string headerValue(const std::string &header, const std::string &key) {
  const size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    return {};
  size_t begin = header.find(':', at);
  if (begin == std::string::npos)
    return {};
  begin = header.find_first_not_of(' ', begin + 1);
  const char open = header[begin];
  const size_t end = open == '\'' ? header.find('\'', begin + 1) + 1
                     : open == '('  ? header.find(')', begin) + 1
                                    : header.find_first_of(",}", begin);
  return header.substr(begin, end - begin);
}

NpyArray openNpy(const std::string &path) {
  NpyArray a;
  a.file = std::make_shared<MappedFile>(path);
  const uint8_t *d = a.file->data();
  const size_t n = a.file->size();
  auto bad = [&](const std::string &why) -> DataError {
    return DataError(path + ": not a NumPy .npy array this reader takes: " + why);
  };
  if (n < 10 || std::memcmp(d, "\x93NUMPY", 6) != 0)
    throw bad("no .npy magic");
  const int major = d[6];
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = size_t(d[8]) | size_t(d[9]) << 8, headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (n < 12)
      throw bad("truncated header");
    headerLength = size_t(d[8]) | size_t(d[9]) << 8 | size_t(d[10]) << 16 | size_t(d[11]) << 24;
    headerStart = 12;
  } else {
    throw bad("format version " + std::to_string(major));
  }
  if (headerStart + headerLength > n)
    throw bad("truncated header");
  const std::string header(reinterpret_cast<const char *>(d) + headerStart, headerLength);
  const std::string descr = headerValue(header, "descr");
  if (descr.size() != 5 || (descr[1] != '<' && descr[1] != '|') ||
      std::string("fiub").find(descr[2]) == std::string::npos)
    throw bad("dtype " + descr + " (expected a little-endian int, uint, float or bool)");
  a.kind = descr[2];
  a.itemSize = size_t(descr[3] - '0');
  if ((a.kind == 'f' && a.itemSize != 4 && a.itemSize != 8) ||
      (a.itemSize != 1 && a.itemSize != 2 && a.itemSize != 4 && a.itemSize != 8))
    throw bad("dtype " + descr);
  if (headerValue(header, "fortran_order") != "False")
    throw bad("Fortran order (save it in C order: np.ascontiguousarray)");
  std::string shape = headerValue(header, "shape");
  std::vector<uint64_t> dims;
  for (size_t i = 0; i < shape.size();) {
    if (std::isdigit(uint8_t(shape[i]))) {
      size_t end = i;
      while (end < shape.size() && std::isdigit(uint8_t(shape[end])))
        ++end;
      dims.push_back(std::stoull(shape.substr(i, end - i)));
      i = end;
    } else {
      ++i;
    }
  }
  if (dims.empty() || dims.size() > 2)
    throw bad("shape " + shape + " (expected 1 or 2 dimensions)");
  a.rows = dims[0];
  a.cols = dims.size() == 2 ? dims[1] : 1;
  a.twoDimensional = dims.size() == 2;
  a.dataOffset = headerStart + headerLength;
  if (a.cols == 0 || a.dataOffset + a.rows * a.rowBytes() > n)
    throw bad("shape " + shape + " needs " + std::to_string(a.rows * a.rowBytes()) +
              " bytes of data, the file has " + std::to_string(n - a.dataOffset));
  return a;
}

/// One part: a binary file, or the arrays of an npy directory (one per
/// bound column, sharing files).
struct FixedPart {
  std::string path;
  uint64_t rows = 0;
  std::shared_ptr<MappedFile> binary;       ///< Binary
  std::vector<NpyArray> arrays;             ///< Npy: one per layout slot
};

class FixedParts final : public RecordParts {
public:
  FixedParts(const DataSchema &schema, const RowLayout &layout, int threads,
             std::vector<FixedPart> parts)
      : schema_(schema), layout_(layout), threads_(threads), parts_(std::move(parts)) {}

  size_t parts() const override { return parts_.size(); }
  const std::string &path(size_t part) const override { return parts_[part].path; }
  const char *unit() const override { return "record"; }
  uint64_t totalUnits() const override {
    uint64_t n = 0;
    for (const FixedPart &p : parts_)
      n += p.rows;
    return n;
  }
  uint64_t unitsBefore(const Cursor &at) const override {
    uint64_t n = 0;
    for (size_t p = 0; p < at.part && p < parts_.size(); ++p)
      n += parts_[p].rows;
    return n + at.offset;
  }

  Cursor parse(const Cursor &from, uint64_t want, RowBlock &out,
               std::vector<PartProblem> &problems, bool stopAtProblem) const override {
    Cursor at = from;
    std::vector<RowBlock> pieces(static_cast<size_t>(threads_));
    std::vector<std::vector<LineProblem>> pieceProblems(static_cast<size_t>(threads_));
    while (out.rows < want && at.part < parts_.size()) {
      const FixedPart &part = parts_[at.part];
      if (at.offset >= part.rows) {
        at = Cursor{at.part + 1, 0, 0};
        continue;
      }
      const uint64_t first = at.offset,
                     count = std::min<uint64_t>(want - out.rows, part.rows - first);
      requireWhole(part);
      const uint64_t per = (count + uint64_t(threads_) - 1) / uint64_t(threads_);
      runInParallel(threads_, [&](int t) {
        RowBlock &piece = pieces[size_t(t)];
        piece.reset();
        pieceProblems[size_t(t)].clear();
        RowWriter row(layout_, piece);
        const uint64_t begin = first + uint64_t(t) * per,
                       end = std::min(first + count, begin + per);
        for (uint64_t r = begin; r < end; ++r) {
          LineProblem problem;
          row.begin();
          if (decodeRow(part, r, row, problem)) {
            row.commit();
            continue;
          }
          row.undo();
          problem.line = r + 1;
          problem.content = "record " + std::to_string(r + 1);
          pieceProblems[size_t(t)].push_back(std::move(problem));
          if (stopAtProblem)
            break;
        }
        release(part, begin, end);
      });
      for (int t = 0; t < threads_; ++t) {
        for (LineProblem &problem : pieceProblems[size_t(t)]) {
          problems.push_back({at.part, std::move(problem)});
          if (stopAtProblem)
            return at;
        }
        out.append(pieces[size_t(t)], 0, pieces[size_t(t)].rows);
      }
      at.offset = at.record = first + count;
    }
    return at;
  }

private:
  bool decodeRow(const FixedPart &part, uint64_t r, RowWriter &row,
                 LineProblem &problem) const {
    if (part.binary) {
      thread_local std::vector<int32_t> record;
      record.resize(size_t(schema_.recordFields));
      std::memcpy(record.data(), part.binary->data() + r * record.size() * 4,
                  record.size() * 4);
      return decodeBinaryRecord(layout_, record.data(), row, problem);
    }
    for (size_t s = 0; s < layout_.slots.size(); ++s) {
      const ColumnSlot &slot = layout_.slots[s];
      const SchemaColumn &column = *slot.column;
      const NpyArray &a = part.arrays[s];
      const uint64_t col = uint64_t(std::max<int64_t>(column.npyColumn, 0));
      switch (column.type) {
      case ColumnType::Label: {
        const double v = a.value(r, col);
        if (!checkLabel(slot, v, problem))
          return false;
        row.label(slot.index, float(v));
        break;
      }
      case ColumnType::Dense:
        for (int64_t k = 0; k < column.width; ++k) {
          const double v = a.value(r, col + k);
          if (!std::isfinite(v)) {
            problem.category = "bad number";
            problem.reason = columnWhere(column) + ": value " + std::to_string(k) +
                             " is not a finite number";
            return false;
          }
          row.dense(slot.index + size_t(k), transformDense(column, v));
        }
        break;
      case ColumnType::Categorical: {
        // One id (1-D, or a chosen column), or all of a 2-D row; negative
        // ids are padding.
        const bool all = a.twoDimensional && column.npyColumn < 0;
        for (uint64_t k = all ? 0 : col; k < (all ? a.cols : col + 1); ++k) {
          const int64_t id = a.integer(r, k);
          if (id < 0)
            continue;
          if (!idInRange(slot, id, problem))
            return false;
          row.id(slot.index, id);
        }
        if (slot.hotness > 0 && int64_t(row.bagSize(slot.index)) > slot.hotness) {
          problem.category = "too many ids";
          problem.reason = columnWhere(column) + ": more than " +
                           std::to_string(slot.hotness) + " ids for feature '" +
                           slot.feature + "' (its hotness)";
          return false;
        }
        break;
      }
      }
    }
    return true;
  }

  static void requireWhole(const FixedPart &part) {
    if (part.binary)
      part.binary->requireWhole();
    for (const NpyArray &a : part.arrays)
      a.file->requireWhole();
  }

  /// Releases the mapped pages of rows [begin, end).
  void release(const FixedPart &part, uint64_t begin, uint64_t end) const {
    if (part.binary) {
      const size_t bytes = size_t(schema_.recordFields) * 4;
      part.binary->release(begin * bytes, end * bytes);
      return;
    }
    for (const NpyArray &a : part.arrays)
      a.file->release(a.dataOffset + begin * a.rowBytes(), a.dataOffset + end * a.rowBytes());
  }

  const DataSchema &schema_;
  const RowLayout &layout_;
  int threads_;
  std::vector<FixedPart> parts_;
};

FixedPart openBinaryPart(const DataSchema &schema, std::string path) {
  FixedPart part;
  part.binary = std::make_shared<MappedFile>(path);
  const size_t recordBytes = size_t(schema.recordFields) * 4;
  if (part.binary->size() == 0)
    throw DataError(path + ": file is empty");
  if (part.binary->size() % recordBytes != 0)
    throw DataError(path + ": " + std::to_string(part.binary->size()) +
                    " bytes is not a whole number of records of " +
                    std::to_string(schema.recordFields) + " int32 fields (" +
                    std::to_string(recordBytes) + " bytes)");
  part.rows = part.binary->size() / recordBytes;
  part.path = std::move(path);
  return part;
}

FixedPart openNpyPart(const RowLayout &layout, std::string directory) {
  FixedPart part;
  std::map<std::string, NpyArray> opened;
  std::string firstFile;
  for (const ColumnSlot &slot : layout.slots) {
    const SchemaColumn &column = *slot.column;
    const std::string path = directory + "/" + column.file;
    auto it = opened.find(path);
    if (it == opened.end())
      it = opened.emplace(path, openNpy(path)).first;
    const NpyArray &a = it->second;
    const std::string where = columnWhere(column) + " reads " + path;
    if (firstFile.empty())
      firstFile = path, part.rows = a.rows;
    else if (a.rows != part.rows)
      throw DataError(where + ", which has " + std::to_string(a.rows) + " rows, but " +
                      firstFile + " has " + std::to_string(part.rows));
    const uint64_t first = uint64_t(std::max<int64_t>(column.npyColumn, 0));
    const uint64_t width = column.type == ColumnType::Dense ? uint64_t(column.width) : 1;
    if (column.npyColumn >= 0 && !a.twoDimensional)
      throw DataError(where + ": 'column' picks a column of a 2-D array, this one is 1-D");
    if (first + width > a.cols ||
        (column.type == ColumnType::Dense && column.npyColumn < 0 && a.cols != width))
      throw DataError(where + ": it has " + std::to_string(a.cols) + " columns, the column " +
                      (column.npyColumn >= 0 ? "starts at " + std::to_string(first) + " and "
                                             : std::string()) +
                      "needs " + std::to_string(width));
    if (column.type == ColumnType::Categorical && a.kind == 'f')
      throw DataError(where + ": ids must be integers, this array holds floats");
    part.arrays.push_back(a);
  }
  part.path = std::move(directory);
  return part;
}

} // namespace

std::unique_ptr<RecordParts>
embc::runtime::data::openFixedParts(const DataSchema &schema, std::vector<std::string> paths,
                                    const RowLayout &layout, int threads) {
  std::vector<FixedPart> parts;
  for (std::string &path : paths)
    parts.push_back(schema.format == DataFormat::Binary ? openBinaryPart(schema, path)
                                                        : openNpyPart(layout, path));
  return std::make_unique<FixedParts>(schema, layout, threads, std::move(parts));
}
