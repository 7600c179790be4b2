//===- PlanFile.cpp - the binary container of a plan, and plan files -------===//
//
// A fixed 32-byte little-endian header (magic, version, flags, body length,
// XXH64 of the body) in front of the JSON body. The header is checked field
// by field, in file order, before the body is even parsed, so a plan from
// another format version is refused with the version message rather than a
// parse error, and a damaged file is caught by its length or checksum. The
// layout table is in docs/plan-format.md.
//
//===----------------------------------------------------------------------===//

#include "PlanInternal.h"

#include "embc/runtime/FreshFile.h"

#include <sys/stat.h>

#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

using namespace embc::runtime;
using namespace embc::runtime::detail;
using nlohmann::json;

namespace {

constexpr char kMagic[8] = {'E', 'M', 'B', 'C', 'P', 'L', 'A', 'N'};
constexpr size_t kVersionAt = 8, kFlagsAt = 12, kLengthAt = 16, kChecksumAt = 24;
constexpr size_t kHeaderBytes = 32;

uint64_t checksum(const char *data, size_t size) { return XXH64(data, size, /*seed=*/0); }

void putLittleEndian(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t getLittleEndian(const std::string &in, size_t at, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i)
    value |= static_cast<uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  return value;
}

std::string hex(uint64_t value) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(value));
  return text;
}

/// The body of a well-formed container, or a PlanFormatError.
std::string_view containerBody(const std::string &bytes) {
  // The magic is compared on what there is of it, so that a short file of
  // another kind says "bad magic" rather than "truncated".
  if (std::memcmp(bytes.data(), kMagic, std::min(bytes.size(), sizeof kMagic)) != 0)
    throw PlanFormatError("not an embc plan: bad magic");
  if (bytes.size() < kHeaderBytes)
    throw PlanFormatError("truncated: expected a " + std::to_string(kHeaderBytes) +
                          "-byte header, file has " + std::to_string(bytes.size()) + " bytes");
  uint64_t version = getLittleEndian(bytes, kVersionAt, 4);
  if (version != kPlanVersion)
    throw PlanFormatError("plan format version " + std::to_string(version) +
                          ", this embrun reads version " + std::to_string(kPlanVersion) +
                          ": recompile the model with a matching embc");
  uint64_t flags = getLittleEndian(bytes, kFlagsAt, 4);
  if (flags != 0)
    throw PlanFormatError("unknown header flags " + hex(flags) +
                          ": this embrun reads plans with flags 0");
  uint64_t length = getLittleEndian(bytes, kLengthAt, 8);
  uint64_t available = bytes.size() - kHeaderBytes;
  if (length > available)
    throw PlanFormatError("truncated: expected " + std::to_string(length) +
                          " body bytes, file has " + std::to_string(available));
  if (length < available)
    throw PlanFormatError("trailing bytes: " + std::to_string(available - length) +
                          " bytes after the " + std::to_string(length) + "-byte body");
  std::string_view body(bytes.data() + kHeaderBytes, length);
  uint64_t stored = getLittleEndian(bytes, kChecksumAt, 8);
  uint64_t actual = checksum(body.data(), body.size());
  if (stored != actual)
    throw PlanFormatError("checksum mismatch: the plan is corrupt (header says " + hex(stored) +
                          ", body hashes to " + hex(actual) + ")");
  return body;
}

} // namespace

std::string embc::runtime::serializePlan(const Plan &plan) {
  std::string body;
  try {
    body = planToJson(plan).dump();
  } catch (const json::type_error &e) {
    // dump() refuses strings that are not UTF-8 (error 316).
    throw std::invalid_argument(std::string("plan cannot be serialised: ") + e.what());
  }
  std::string out(kMagic, sizeof kMagic);
  putLittleEndian(out, plan.version, 4);
  putLittleEndian(out, /*flags=*/0, 4);
  putLittleEndian(out, body.size(), 8);
  putLittleEndian(out, checksum(body.data(), body.size()), 8);
  out += body;
  return out;
}

std::optional<Plan> embc::runtime::deserializePlan(const std::string &bytes, std::string &error) {
  try {
    std::string_view body = containerBody(bytes);
    // nlohmann stops at a NUL as at the end of input: what follows would be
    // covered by the checksum but never read.
    if (size_t nul = body.find('\0'); nul != std::string_view::npos)
      throw PlanFormatError("invalid JSON body: a NUL byte at offset " + std::to_string(nul));
    json parsed;
    try {
      parsed = json::parse(body.begin(), body.end());
    } catch (const json::exception &e) { // parse_error, out_of_range (1e999)
      throw PlanFormatError(std::string("invalid JSON body: ") + e.what());
    }
    json memoryReport;
    Plan plan = planFromJson(parsed, memoryReport);
    validatePlan(plan);
    checkMemoryReport(memoryReport, plan);
    plan.memory.lowerBoundBytes = liveLowerBound(plan); // derived, as the peak
    return plan;
  } catch (const PlanFormatError &e) {
    error = e.what();
  } catch (const json::exception &e) {
    // Every JSON access above is checked first; this is a safety net that
    // still names the problem rather than letting a bad file escape as a
    // library exception.
    error = std::string("malformed plan body: ") + e.what();
  }
  return std::nullopt;
}

bool embc::runtime::writePlanFile(const std::string &path, const Plan &plan, std::string &error) {
  std::string bytes;
  try {
    // The compiler is the only writer: refusing here turns a codegen bug into
    // a compile error instead of a plan every embrun would reject.
    validatePlan(plan);
    bytes = serializePlan(plan);
  } catch (const PlanFormatError &e) {
    error = path + ": refusing to write an invalid plan: " + e.what();
    return false;
  } catch (const std::invalid_argument &e) {
    error = path + ": " + e.what();
    return false;
  }
  // Write beside the target and rename, so an interrupted compile never
  // leaves a half-written plan under the real name.
  std::string temporary = path + ".tmp";
  const int fd = createFresh(temporary); // never through a link left there
  if (fd < 0) {
    error = temporary + ": cannot create: " + std::strerror(errno);
    return false;
  }
  if (!writeAll(fd, bytes.data(), bytes.size())) {
    error = temporary + ": write failed: " + std::strerror(errno);
    ::close(fd);
    std::remove(temporary.c_str());
    return false;
  }
  if (::close(fd) != 0) {
    error = temporary + ": write failed: " + std::strerror(errno);
    std::remove(temporary.c_str());
    return false;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    error = path + ": cannot replace with " + temporary + ": " + std::strerror(errno);
    std::remove(temporary.c_str());
    return false;
  }
  return true;
}

std::optional<Plan> embc::runtime::readPlanFile(const std::string &path, std::string &error) {
  // A plan is a regular file of bounded size: a FIFO would block the open
  // (and a rank of a job with it), a device like /dev/zero never ends.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    error = path + ": cannot open: " + std::strerror(errno);
    return std::nullopt;
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = path + ": cannot stat: " + std::strerror(errno);
    return std::nullopt;
  }
  if (S_ISDIR(st.st_mode)) {
    error = path + ": is a directory, not a plan file";
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    error = path + ": is not a regular file (a device, FIFO or socket), not a plan file";
    return std::nullopt;
  }
  if (uint64_t(st.st_size) > kMaxPlanFileBytes) {
    error = path + ": " + std::to_string(st.st_size) + " bytes, more than any plan (" +
            std::to_string(kMaxPlanFileBytes >> 20) + " MiB)";
    return std::nullopt;
  }
  std::string text(size_t(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = path + ": read failed: " + std::strerror(errno);
      return std::nullopt;
    }
    if (n == 0)
      break; // shrunk while read: the checksum or the parser says what is wrong
    done += size_t(n);
  }
  text.resize(done);
  std::string problem;
  std::optional<Plan> plan = deserializePlan(text, problem);
  if (!plan)
    error = path + ": " + problem;
  return plan;
}
