//===- DeviceCommon.cpp - what every Device shares -----------------------===//

#include "embc/runtime/cuda/Device.h"

#include <cstdlib>
#include <filesystem>

using namespace embc::runtime::cuda;
using nlohmann::json;

Device::~Device() = default;

std::string embc::runtime::cuda::cacheDirectory() {
  std::filesystem::path dir;
  if (const char *d = std::getenv("EMBC_CACHE_DIR"); d && *d)
    dir = d;
  else if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
    dir = std::filesystem::path(x) / "embc";
  else if (const char *h = std::getenv("HOME"); h && *h)
    dir = std::filesystem::path(h) / ".cache" / "embc";
  else
    dir = std::filesystem::temp_directory_path() / "embc-cache";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw DeviceError("cannot create the cache directory " + dir.string() + ": " + ec.message());
  return dir.string();
}

GemmSpec embc::runtime::cuda::gemmFromJson(const json &p) {
  auto need = [&](const char *key) -> const json & {
    auto it = p.find(key);
    if (it == p.end())
      throw DeviceError(std::string("gemm: missing parameter '") + key + "'");
    return *it;
  };
  auto integer = [&](const char *key) {
    const json &v = need(key);
    if (!v.is_number_integer())
      throw DeviceError(std::string("gemm: parameter '") + key + "' is not an integer");
    return v.get<int64_t>();
  };
  auto boolean = [&](const char *key) {
    const json &v = need(key);
    if (!v.is_boolean())
      throw DeviceError(std::string("gemm: parameter '") + key + "' is not a boolean");
    return v.get<bool>();
  };
  auto number = [&](const char *key) {
    const json &v = need(key);
    if (!v.is_number())
      throw DeviceError(std::string("gemm: parameter '") + key + "' is not a number");
    return v.get<float>();
  };
  // A word of enum E's spellings (plan/Enums.h, Plan.h).
  auto word = [&](const char *key, auto parsed) {
    const json &v = need(key);
    if (v.is_string())
      if (auto e = parseEnum<decltype(parsed)>(v.get<std::string>()))
        return *e;
    throw DeviceError(std::string("gemm: parameter '") + key + "' is " + v.dump() +
                      ", not a known value");
  };
  GemmSpec g;
  g.m = integer("m"), g.n = integer("n"), g.k = integer("k");
  g.transA = boolean("trans_a"), g.transB = boolean("trans_b");
  g.lda = integer("lda"), g.ldb = integer("ldb"), g.ldc = integer("ldc");
  g.alpha = number("alpha"), g.beta = number("beta");
  g.epilogue = word("epilogue", GemmEpilogue{});
  g.abType = word("ab_type", DType{});
  if (g.abType != DType::F32 && g.abType != DType::BF16 && g.abType != DType::F16)
    throw DeviceError("gemm: parameter 'ab_type' is \"" + enumString(g.abType) +
                      "\", not f32, bf16 or f16");
  g.batch = integer("batch");
  g.strideA = integer("stride_a"), g.strideB = integer("stride_b"), g.strideC = integer("stride_c");
  if (g.m < 1 || g.n < 1 || g.k < 1 || g.batch < 1)
    throw DeviceError("gemm: m, n, k and batch must be positive");
  if (g.ldc < g.n || g.lda < (g.transA ? g.m : g.k) || g.ldb < (g.transB ? g.k : g.n))
    throw DeviceError("gemm: a leading dimension is smaller than its matrix's row");
  return g;
}
