// tilec DSL: write a GPU kernel as a C++ function over tiles.
//
// A KernelBuilder records the kernel as it runs: a plain list of operations
// of the MLIR `tile` dialect, which the compiler (tilec::compile) builds into
// IR and verifies. Problem sizes are run-time values (tensor dims); tile
// shapes are compile-time constants of the generated kernel. Every call
// records its C++ file:line, which becomes the op's MLIR location: misuse of
// the DSL is reported eagerly as the kernel's error, shape and type errors by
// the dialect's verifiers at compile time, both at that file:line.
//
//   using namespace tilec;
//   using namespace tilec::dsl;
//   KernelBuilder kb("scale_rows", {.numWaves = 4});
//   Tensor X = kb.tensor("X", DType::f32, 2);
//   Tensor Y = kb.tensor("Y", DType::f32, 2);
//   Scalar s = kb.scalarF32("s");
//   kb.grid({GridExtent::ceilDiv(X, 0, 64)});
//   Index row = kb.blockId(0) * 64;
//   Tile x = kb.regTile("x", {64, 128}, DType::f32);
//   kb.forLoop(0, cdiv(X.dim(1), 128), 1, [&](Index j) {
//     kb.load(X, {row, j * 128}, x);    // x[64,128] = X[row:, j*128:]
//     kb.scale(x, x, s);                // x *= s
//     kb.store(x, Y, {row, j * 128});
//   });
//   Kernel k = kb.finish();
//   if (!k.ok()) fprintf(stderr, "%s\n", k.error().c_str());
//
// Vocabulary (ThunderKittens-style: global tensors, LDS tiles, register tiles):
//   data movement  load (optionally transposed into LDS) / gather (global -> tile), store (tile -> global), copy (tile -> tile,
//                  optionally transposed into LDS)
//   tensors        window (a clipped window of a tensor: one sequence or head of a packed
//                  tensor), loadIndex (an i32 element as an Index: offsets, block tables)
//   compute        gemm, map (elementwise, with row/column broadcast), reduce, fill,
//                  mask (attention: causal / sliding window / past-the-end scores to -inf)
//   index math     Index + - * / %, cdiv, min, max (unsigned; constants fold and dedupe)
//   control        forLoop (scf.for, with a software-pipelining depth), blockId, grid
//                  (extents from tensor dims, constants or i32 scalar arguments)
//
// Public header: standard library only, never MLIR or LLVM; throws nothing.
#pragma once

#include "tilec/dsl/builder.hpp" // KernelBuilder
#include "tilec/dsl/dtype.hpp"   // DType
#include "tilec/dsl/kernel.hpp"  // Kernel, GridDim, KernelArg
#include "tilec/dsl/values.hpp"  // Index, Tensor, Tile, Scalar, GridExtent, options
