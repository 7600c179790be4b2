//===- ModelOverrides.h - embc --set on a model's JSON ----------*- C++ -*-===//
//
// `embc model.json --set /optimizer/dense/lr=0.05`: each override puts a
// value at a JSON pointer (RFC 6901) of the model before it is read, so a
// tuner sweeps settings without editing files. The value is JSON when it
// parses as JSON, else the text as a string (`--set /training/optimizer/kind=adam`).
// It must have the type the model has there (a number where a number is,
// an integer where an integer is), or the key must be new in an existing
// object (the model reader then checks it as any field). Errors are
// SchemaErrors at the pointer, reported like any model error.
//
//===----------------------------------------------------------------------===//

#ifndef EMBC_FRONTEND_MODELOVERRIDES_H
#define EMBC_FRONTEND_MODELOVERRIDES_H

#include "JsonNode.h"

#include <string>

namespace embc::frontend {

/// Applies one "POINTER=VALUE" override to `root`; throws SchemaError.
void applyOverride(Json &root, const std::string &override);

} // namespace embc::frontend

#endif // EMBC_FRONTEND_MODELOVERRIDES_H
