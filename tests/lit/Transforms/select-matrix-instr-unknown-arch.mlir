// RUN: tilec-opt %s -verify-diagnostics -pass-pipeline='builtin.module(func.func(tilec-select-matrix-instr{arch=gfx1234}))'

// expected-error @+1 {{unknown target 'gfx1234' (known: gfx942, gfx90a, gfx1151, sm_90a)}}
func.func @unknown() {
  return
}
