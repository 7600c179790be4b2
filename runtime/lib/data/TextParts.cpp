//===- TextParts.cpp - delimited text files, read in blocks ---------------===//
//
// parse() reads a block of whole lines with pread (a few MB a thread), cuts
// it into one chunk a thread at newlines, decodes the chunks in parallel and
// joins them in order, keeping rows until it has enough. Line numbers stay
// exact: each chunk counts its own, and the cursor carries the lines before
// the block.
//
//===----------------------------------------------------------------------===//

#include "RecordParts.h"
#include "RowDecoding.h"

#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

using namespace embc::runtime::data;

RecordParts::~RecordParts() = default;

std::vector<std::string> embc::runtime::data::expandDataPaths(const std::string &pattern) {
  if (pattern.find_first_of("*?[") == std::string::npos)
    return {pattern};
  glob_t matches{};
  const int rc = glob(pattern.c_str(), 0, nullptr, &matches);
  std::vector<std::string> paths(matches.gl_pathv, matches.gl_pathv + matches.gl_pathc);
  globfree(&matches);
  if (rc != 0 || paths.empty())
    throw DataError(pattern + ": no file matches this pattern");
  std::sort(paths.begin(), paths.end());
  return paths;
}

namespace {

/// Bytes of text a thread parses per block: large enough to amortise the
/// threads' start, small enough that a block's rows stay a few MB.
constexpr size_t kBytesPerThread = size_t(2) << 20;

struct TextFile {
  std::string path;
  int fd = -1;
  uint64_t size = 0;
};

/// A chunk's rows, and for each where its line ends.
struct ChunkRows {
  RowBlock rows;
  std::vector<uint64_t> ends;  ///< byte offset in the block after the row's line
  std::vector<uint64_t> lines; ///< the row's line in the chunk, from 1
  std::vector<LineProblem> problems;
  std::vector<uint64_t> problemEnds;
  uint64_t lineCount = 0;
};

class TextParts final : public RecordParts {
public:
  TextParts(const DataSchema &schema, const RowLayout &layout, int threads,
            std::vector<TextFile> files, size_t fieldCount)
      : schema_(schema), layout_(layout), threads_(threads), files_(std::move(files)),
        fieldCount_(fieldCount) {}
  ~TextParts() override {
    for (TextFile &f : files_)
      ::close(f.fd);
  }

  size_t parts() const override { return files_.size(); }
  const std::string &path(size_t part) const override { return files_[part].path; }
  const char *unit() const override { return "line"; }
  uint64_t totalUnits() const override {
    uint64_t n = 0;
    for (const TextFile &f : files_)
      n += f.size;
    return n;
  }
  uint64_t unitsBefore(const Cursor &at) const override {
    uint64_t n = 0;
    for (size_t p = 0; p < at.part && p < files_.size(); ++p)
      n += files_[p].size;
    return n + at.offset;
  }

  Cursor parse(const Cursor &from, uint64_t want, RowBlock &out,
               std::vector<PartProblem> &problems, bool stopAtProblem) const override;

  /// The first line of `file` (without its line end), for the header, and
  /// the offset after it.
  struct Line {
    std::string text;
    uint64_t end = 0;
  };
  static Line firstLine(const TextFile &file);

private:
  /// Reads [offset, offset + n) of a file.
  std::string readAt(const TextFile &file, uint64_t offset, size_t n) const;
  void parseChunk(std::string_view text, ChunkRows &chunk) const;

  const DataSchema &schema_;
  const RowLayout &layout_;
  int threads_;
  std::vector<TextFile> files_;
  size_t fieldCount_;
  mutable std::atomic<uint64_t> bytesPerLine_{0}; ///< of the lines read so far (0: none)
};

std::string TextParts::readAt(const TextFile &file, uint64_t offset, size_t n) const {
  std::string bytes(n, '\0');
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(file.fd, bytes.data() + got, n - got, off_t(offset + got));
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      throw DataError(file.path + ": cannot read: " + std::strerror(errno));
    if (r == 0)
      throw DataError(file.path + ": the file shrank while it was read (it was " +
                      std::to_string(file.size) + " bytes)");
    got += size_t(r);
  }
  return bytes;
}

TextParts::Line TextParts::firstLine(const TextFile &file) {
  Line line;
  char buffer[4096];
  while (line.end < file.size) {
    const ssize_t r = ::pread(file.fd, buffer, sizeof buffer, off_t(line.end));
    if (r <= 0)
      break;
    const char *newline = static_cast<const char *>(std::memchr(buffer, '\n', size_t(r)));
    line.text.append(buffer, newline ? size_t(newline - buffer) : size_t(r));
    line.end += newline ? uint64_t(newline - buffer) + 1 : uint64_t(r);
    if (newline)
      break;
  }
  if (!line.text.empty() && line.text.back() == '\r')
    line.text.pop_back();
  return line;
}

void TextParts::parseChunk(std::string_view text, ChunkRows &chunk) const {
  thread_local LineFields fields;
  chunk.rows.reset();
  RowWriter row(layout_, chunk.rows);
  size_t pos = 0;
  while (pos < text.size()) {
    const char *newline =
        static_cast<const char *>(std::memchr(text.data() + pos, '\n', text.size() - pos));
    const size_t end = newline ? size_t(newline - text.data()) : text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = std::min(text.size(), end + 1);
    ++chunk.lineCount;
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    LineProblem problem;
    bool ok = false;
    if (line.empty()) {
      problem.category = problem.reason = "empty line";
    } else if (std::string why = splitDelimited(line, schema_.delimiter, schema_.quote, fields);
               !why.empty()) {
      problem.category = "bad quoting";
      problem.reason = why;
    } else if (fieldCount_ > 0 && fields.fields.size() != fieldCount_) {
      problem.category = "wrong field count";
      problem.reason = "expected " + std::to_string(fieldCount_) + " fields separated by '" +
                       excerptOfLine(schema_.delimiter) + "', got " +
                       std::to_string(fields.fields.size());
    } else {
      row.begin();
      ok = decodeTextRecord(layout_, fields, fieldCount_, row, problem);
      if (ok)
        row.commit();
      else
        row.undo();
    }
    if (ok) {
      chunk.ends.push_back(pos);
      chunk.lines.push_back(chunk.lineCount);
      continue;
    }
    problem.line = chunk.lineCount;
    problem.content = excerptOfLine(line);
    chunk.problems.push_back(std::move(problem));
    chunk.problemEnds.push_back(pos);
  }
}

Cursor TextParts::parse(const Cursor &from, uint64_t want, RowBlock &out,
                        std::vector<PartProblem> &problems, bool stopAtProblem) const {
  Cursor at = from;
  std::vector<ChunkRows> chunks;
  while (out.rows < want && at.part < files_.size()) {
    const TextFile &file = files_[at.part];
    if (at.offset >= file.size) {
      at = Cursor{at.part + 1, 0, 0};
      continue;
    }
    if (at.offset == 0 && schema_.header) { // checked at open; skip it
      at.offset = firstLine(file).end;
      at.record = 1;
      continue;
    }
    // A block of whole lines (the last line of a file may lack its '\n'):
    // about the bytes the rows still wanted take, as far as the lines read
    // so far tell (what is read past them is parsed again next time).
    const uint64_t perLine = bytesPerLine_.load(std::memory_order_relaxed);
    const uint64_t wanted = perLine ? (want - out.rows) * perLine * 51 / 50 + 4096
                                    : kBytesPerThread * size_t(threads_);
    size_t length = size_t(std::min<uint64_t>(
        std::clamp<uint64_t>(wanted, 64 << 10, 4 * kBytesPerThread * size_t(threads_)),
        file.size - at.offset));
    std::string block;
    while (true) {
      block = readAt(file, at.offset, length);
      if (at.offset + length == file.size)
        break;
      const size_t lastNewline = block.rfind('\n');
      if (lastNewline != std::string::npos) {
        block.resize(lastNewline + 1);
        break;
      }
      length = size_t(std::min<uint64_t>(2 * uint64_t(length), file.size - at.offset));
    }
    auto ranges = splitIntoChunks(block, threads_, isNewline);
    chunks.resize(ranges.size());
    runInParallel(int(ranges.size()), [&](int c) {
      chunks[size_t(c)] = ChunkRows();
      parseChunk(std::string_view(block).substr(ranges[size_t(c)].first,
                                                ranges[size_t(c)].second -
                                                    ranges[size_t(c)].first),
                 chunks[size_t(c)]);
    });
    uint64_t lines = 0;
    for (const ChunkRows &chunk : chunks)
      lines += chunk.lineCount;
    if (lines > 0)
      bytesPerLine_.store(std::max<uint64_t>(1, block.size() / lines),
                          std::memory_order_relaxed);
    // Join in order, rows and problems by line, until `want` rows; the
    // cursor stays after the last row or problem used, so that the next
    // call neither skips nor counts again a line.
    uint64_t linesBefore = at.record;
    const uint64_t blockStart = at.offset;
    for (size_t c = 0; c < chunks.size(); ++c) {
      ChunkRows &chunk = chunks[c];
      const uint64_t base = blockStart + ranges[c].first;
      size_t r = 0, p = 0;
      while (r < chunk.lines.size() || p < chunk.problems.size()) {
        if (out.rows == want)
          return at;
        if (p < chunk.problems.size() &&
            (r == chunk.lines.size() || chunk.problems[p].line < chunk.lines[r])) {
          LineProblem problem = std::move(chunk.problems[p]);
          problem.line += linesBefore;
          at.record = problem.line;
          at.offset = base + chunk.problemEnds[p];
          problems.push_back({at.part, std::move(problem)});
          if (stopAtProblem)
            return at;
          ++p;
          continue;
        }
        size_t take = r;
        while (take < chunk.lines.size() && out.rows + (take - r) < want &&
               (p == chunk.problems.size() || chunk.lines[take] < chunk.problems[p].line))
          ++take;
        out.append(chunk.rows, r, take);
        at.record = linesBefore + chunk.lines[take - 1];
        at.offset = base + chunk.ends[take - 1];
        r = take;
      }
      linesBefore += chunk.lineCount;
      at.record = linesBefore;
      at.offset = blockStart + ranges[c].second;
    }
  }
  return at;
}

} // namespace

std::unique_ptr<RecordParts>
embc::runtime::data::openTextParts(const DataSchema &schema, std::vector<std::string> paths,
                                   RowLayout &layout, int threads) {
  std::vector<TextFile> files;
  auto closeAll = [&] {
    for (TextFile &f : files)
      ::close(f.fd);
  };
  for (std::string &path : paths) {
    TextFile file;
    file.path = std::move(path);
    file.fd = ::open(file.path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (file.fd < 0 || ::fstat(file.fd, &st) != 0) {
      const std::string why = std::strerror(errno);
      closeAll();
      throw DataError(file.path + ": cannot open: " + why);
    }
    file.size = uint64_t(st.st_size);
    files.push_back(std::move(file));
    if (files.back().size == 0) {
      closeAll();
      throw DataError(files.back().path + ": file is empty");
    }
  }
  size_t fieldCount = size_t(schema.fieldCount);
  if (schema.header) {
    const std::string header = TextParts::firstLine(files[0]).text;
    LineFields names;
    if (std::string why = splitDelimited(header, schema.delimiter, schema.quote, names);
        !why.empty()) {
      closeAll();
      throw DataError(files[0].path + ":1: the header: " + why);
    }
    fieldCount = names.fields.size();
    for (ColumnSlot &slot : layout.slots) {
      if (slot.column->header.empty())
        continue;
      auto it = std::find(names.fields.begin(), names.fields.end(), slot.column->header);
      if (it == names.fields.end()) {
        closeAll();
        throw DataError(columnWhere(*slot.column) + " reads field '" + slot.column->header +
                        "', which the header of " + files[0].path + " does not have (\"" +
                        excerptOfLine(header) + "\")");
      }
      slot.field = int64_t(it - names.fields.begin());
    }
    for (size_t f = 1; f < files.size(); ++f)
      if (TextParts::firstLine(files[f]).text != header) {
        const std::string message = files[f].path + ":1: its header differs from " +
                                    files[0].path + "'s (the files of one data set share it)";
        closeAll();
        throw DataError(message);
      }
  }
  for (const ColumnSlot &slot : layout.slots)
    if (fieldCount > 0 && size_t(slot.field + slot.column->width) > fieldCount) {
      const std::string message = columnWhere(*slot.column) + " reads field " +
                                  std::to_string(slot.field + slot.column->width - 1) +
                                  " (from 0), but the lines have " +
                                  std::to_string(fieldCount) + " fields";
      closeAll();
      throw DataError(message);
    }
  return std::make_unique<TextParts>(schema, layout, threads, std::move(files), fieldCount);
}
