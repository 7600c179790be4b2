//===- FileInput.cpp - reading data files in parallel chunks --------------===//

#include "FileInput.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <thread>

using namespace embc::runtime::data;

std::string embc::runtime::data::readWholeFile(const std::string &path) {
  std::unique_ptr<FILE, int (*)(FILE *)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file)
    throw DataError(path + ": cannot open: " + std::strerror(errno));
  std::string bytes;
  char buffer[1 << 16];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, file.get())) > 0)
    bytes.append(buffer, got);
  if (std::ferror(file.get()))
    throw DataError(path + ": cannot read: " + std::strerror(errno));
  if (bytes.empty())
    throw DataError(path + ": file is empty");
  return bytes;
}

std::vector<std::pair<size_t, size_t>>
embc::runtime::data::splitIntoChunks(std::string_view text, int chunks,
                                     bool (*isBoundary)(char)) {
  std::vector<std::pair<size_t, size_t>> ranges;
  size_t begin = 0;
  for (int c = 1; c <= chunks && begin < text.size(); ++c) {
    size_t end = c == chunks ? text.size() : text.size() * c / chunks;
    end = std::max(end, begin);
    while (end < text.size() && end > begin && !isBoundary(text[end - 1]))
      ++end;
    if (end == begin)
      continue;
    ranges.emplace_back(begin, end);
    begin = end;
  }
  if (begin < text.size()) // only when chunks < 1
    ranges.emplace_back(begin, text.size());
  return ranges;
}

void embc::runtime::data::runInParallel(int count, const std::function<void(int)> &body) {
  std::vector<std::exception_ptr> errors(count);
  std::vector<std::thread> threads;
  threads.reserve(count);
  for (int i = 0; i < count; ++i)
    threads.emplace_back([&, i] {
      try {
        body(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (std::exception_ptr &error : errors)
    if (error)
      std::rethrow_exception(error);
}

std::string embc::runtime::data::excerptOfLine(std::string_view line) {
  constexpr size_t kMaxShown = 80;
  std::string shown;
  for (size_t i = 0; i < line.size() && i < kMaxShown; ++i) {
    char c = line[i];
    if (c == '\t')
      shown += "\\t";
    else if (static_cast<unsigned char>(c) < 0x20)
      shown += '?';
    else
      shown += c;
  }
  if (line.size() > kMaxShown)
    shown += "...";
  return shown;
}

std::string embc::runtime::data::describeProblem(const std::string &path,
                                                 const LineProblem &problem) {
  return path + ":" + std::to_string(problem.line) + ": " + problem.reason +
         " (line: \"" + problem.content + "\")";
}

void embc::runtime::data::recordSkipped(const std::string &path,
                                        const std::vector<LineProblem> &problems,
                                        DataStats &stats) {
  for (const LineProblem &problem : problems) {
    if (stats.skipped == 0)
      stats.firstProblem = path + ":" + std::to_string(problem.line) + ": " + problem.reason;
    ++stats.skipped;
    ++stats.skippedByReason[problem.category];
  }
}

bool embc::runtime::data::parseDouble(std::string_view field, double &value) {
  if (field.empty())
    return false;
  const char *begin = field.data(), *end = field.data() + field.size();
  if (*begin == '+') { // from_chars refuses a leading '+'; numbers may carry one
    ++begin;
    if (begin == end || *begin == '-')
      return false;
  }
  auto [ptr, ec] = std::from_chars(begin, end, value);
  return ec == std::errc() && ptr == end && std::isfinite(value);
}

bool embc::runtime::data::parseInt64(std::string_view field, int64_t &value) {
  if (field.empty())
    return false;
  auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  return ec == std::errc() && ptr == field.data() + field.size();
}
