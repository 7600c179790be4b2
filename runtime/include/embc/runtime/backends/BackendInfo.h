//===- BackendInfo.h - a backend's name and summary --------------*- C++ -*-===//
//
// What the registry (Registry.h) says of each backend, apart from it so
// that embrun's option parser (RunOptions.h) can list the backends without
// linking them.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_RUNTIME_BACKENDS_BACKENDINFO_H
#define EMBC_RUNTIME_BACKENDS_BACKENDINFO_H

namespace embc::runtime {

/// A row of the registry's table, for --help and error messages.
struct BackendInfo {
  const char *name;
  const char *summary; ///< one line
};

} // namespace embc::runtime

#endif // EMBC_RUNTIME_BACKENDS_BACKENDINFO_H
