//===- IdHash.h - the hash of a raw id, as the hash op defines it -*- C++ -*-===//
//
// `emb.hash` maps a raw id to xxh64(the id's 8 little-endian bytes, seed)
// mod buckets, whatever the host's byte order. One definition for the
// kernels that hash (hashIds, the fused lookups) and for what counts their
// buckets (embrun --hash-stats). Needs xxhash.h on the include path.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_CPU_IDHASH_H
#define EMBC_RUNTIME_CPU_IDHASH_H

#include <xxhash.h>

#include <cstdint>

namespace embc::runtime::cpu {

/// The full 64-bit hash; the bucket is it mod the bucket count.
inline uint64_t idHash(int64_t id, uint64_t seed) {
  const uint64_t bits = static_cast<uint64_t>(id);
  unsigned char bytes[8];
  for (int k = 0; k < 8; ++k)
    bytes[k] = static_cast<unsigned char>(bits >> (8 * k));
  return XXH64(bytes, sizeof bytes, seed);
}

} // namespace embc::runtime::cpu

#endif // EMBC_RUNTIME_CPU_IDHASH_H
