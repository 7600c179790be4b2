// -emb-print-summary errors: no `func.func @forward` in the module, and an output file that cannot be opened.
// RUN: emb-opt %s -split-input-file -emb-print-summary -o /dev/null -verify-diagnostics

// The output-file error needs a valid module and a run without
// -verify-diagnostics, so it reads a one-line module from stdin instead of %s
// (whose expected-* lines would be reported as not produced).
// RUN: echo 'func.func @forward() { return }' \
// RUN:   | not emb-opt -emb-print-summary=output=%t.missing-dir/summary.txt -o /dev/null 2>&1 \
// RUN:   | FileCheck %s
// CHECK: error: cannot open summary output: {{.*}}summary.txt

// expected-error @+1 {{emb-print-summary needs a 'func.func @forward' in the module}}
module {
  emb.table @t [10 x 8] f32 init<kind = zeros> optimizer<kind = sgd>
  func.func @train() {
    return
  }
}

// -----

// A symbol named `forward` that is not a function does not count.
// expected-error @+1 {{emb-print-summary needs a 'func.func @forward' in the module}}
module @named {
  emb.table @forward [10 x 8] f32 init<kind = zeros> optimizer<kind = sgd>
}

// -----

// Nested functions are not looked at: @forward must be a direct child.
// expected-error @+1 {{emb-print-summary needs a 'func.func @forward' in the module}}
module {
  module @inner {
    func.func @forward() {
      return
    }
  }
}
