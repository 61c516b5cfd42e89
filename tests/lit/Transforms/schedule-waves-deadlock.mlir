// RUN: tilec-opt %s -split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(tilec-schedule-waves))'

// A hand-written schedule where only wave group 1 takes a barrier each
// iteration: group 0 would run ahead and wait at a barrier group 1 never
// matches. Rejected before any code is generated.
func.func @unbalanced_per_iteration(%n: index) attributes {tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{wave group 0 reaches 1 barrier(s) per iteration and group 1 2: for some trip count the waves would wait at different barriers forever (deadlock)}}
  scf.for %k = %c0 to %n step %c1 {
    tile.barrier
    tile.barrier {tile.wave_group = 1 : i64}
  }
  return
}

// -----

// Group 1 steps one barrier ahead and nobody balances it.
// expected-error @+1 {{wave group 0 reaches 1 barrier(s) and group 1 2: the waves would wait at different barriers forever (deadlock)}}
func.func @unbalanced_total() attributes {tile.num_waves = 4 : i64} {
  tile.barrier
  tile.barrier {tile.wave_group = 1 : i64}
  return
}

// -----

// Balanced totals, but the groups are out of step around an LDS access that
// no ping_pong schedule accounts for: the barriers no longer order it.
func.func @out_of_step(%A: memref<?x?xbf16>) attributes {tile.num_waves = 4 : i64} {
  %c0 = arith.constant 0 : index
  %a = tile.alloc {lds = #tile.lds<offset = 0, bytes = 2048, row_stride = 32>, name = "a"} : !tile.tile<32x32xbf16, lds>
  tile.barrier {tile.wave_group = 1 : i64}
  // expected-error @+1 {{accesses LDS while the wave groups are out of step (group 1 is 1 barrier(s) ahead)}}
  tile.load %A[%c0, %c0] -> %a : memref<?x?xbf16>, !tile.tile<32x32xbf16, lds>
  tile.barrier {tile.wave_group = 0 : i64}
  return
}

// -----

// A wave-group barrier with an odd wave count.
func.func @odd_waves() attributes {tile.num_waves = 3 : i64} {
  // expected-error @+1 {{a wave-group barrier needs an even number of waves, got tile.num_waves = 3}}
  tile.barrier {tile.wave_group = 1 : i64}
  tile.barrier {tile.wave_group = 0 : i64}
  return
}
