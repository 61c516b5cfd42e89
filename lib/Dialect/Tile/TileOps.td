#ifndef TILEC_TILE_OPS_TD
#define TILEC_TILE_OPS_TD

include "TileDialect.td"
include "TileTypes.td"
include "TileAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Tile_AnyTile : Type<CPred<"::llvm::isa<::tilec::tile::TileType>($_self)">, "tile">;
def Tile_LdsTile : Type<CPred<"::llvm::isa<::tilec::tile::TileType>($_self) && ::llvm::cast<::tilec::tile::TileType>($_self).isLds()">, "LDS tile">;
def Tile_RegTile : Type<CPred<"::llvm::isa<::tilec::tile::TileType>($_self) && ::llvm::cast<::tilec::tile::TileType>($_self).isReg()">, "register tile">;
def Tile_Global : MemRefRankOf<[AnyType], [1, 2]>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Tile_MatrixScope : I32EnumAttr<"MatrixScope", "which matrix instructions a tile.gemm may use", [
    I32EnumAttrCase<"warp", 0>, I32EnumAttrCase<"warpgroup", 1>]> {
  let cppNamespace = "::tilec::tile";
  let genSpecializedAttr = 0;
}
def Tile_MatrixScopeAttr : EnumAttr<Tile_Dialect, Tile_MatrixScope, "matrix_scope"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tile_MapFn : I32EnumAttr<"MapFn", "elementwise function", [
    // unary: dst = f(src)
    I32EnumAttrCase<"copy", 0>,   // also converts between element types
    I32EnumAttrCase<"neg", 1>,
    I32EnumAttrCase<"exp", 2>,
    I32EnumAttrCase<"exp2", 3>,
    I32EnumAttrCase<"log", 4>,
    I32EnumAttrCase<"recip", 5>,
    I32EnumAttrCase<"relu", 6>,
    I32EnumAttrCase<"silu", 7>,
    I32EnumAttrCase<"sigmoid", 8>,
    I32EnumAttrCase<"gelu_tanh", 9>,
    I32EnumAttrCase<"scale", 10>,      // src * scalar
    I32EnumAttrCase<"add_scalar", 11>, // src + scalar
    I32EnumAttrCase<"ceil", 12>,       // rounded up to an integer (block counts)
    I32EnumAttrCase<"sqrt", 13>,
    I32EnumAttrCase<"rsqrt", 14>,      // 1 / sqrt(src)
    I32EnumAttrCase<"abs", 15>,
    I32EnumAttrCase<"tanh", 16>,
    // binary: dst = f(lhs, rhs); rhs may be broadcast (see tile.map)
    I32EnumAttrCase<"add", 20>,
    I32EnumAttrCase<"sub", 21>,
    I32EnumAttrCase<"mul", 22>,
    I32EnumAttrCase<"div", 23>,
    I32EnumAttrCase<"max", 24>,
    I32EnumAttrCase<"min", 25>,
    I32EnumAttrCase<"sub_exp2", 26>,   // exp2(lhs - rhs), 0 where rhs is -inf: online-softmax rescaling
    I32EnumAttrCase<"safe_div", 27>,   // lhs / rhs, 0 where rhs is 0 (softmax rows that saw no key)
    I32EnumAttrCase<"eq", 28>,         // 1 where lhs == rhs, else 0 (argmax, one-hot masks)
    I32EnumAttrCase<"neg_inf_where", 29>, // -inf where rhs != 0, else lhs (drop what top-k selected)
    I32EnumAttrCase<"le", 30>,         // 1 where lhs <= rhs, else 0
    I32EnumAttrCase<"mul_add", 31>     // dst + lhs * rhs, one rounding: reads the destination too
  ]> {
  let cppNamespace = "::tilec::tile";
}

def Tile_ReduceKind : I32EnumAttr<"ReduceKind", "reduction", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>, I32EnumAttrCase<"min", 2>]> {
  let cppNamespace = "::tilec::tile";
}

//===----------------------------------------------------------------------===//
// Indices
//===----------------------------------------------------------------------===//

def Tile_BlockIdOp : Tile_Op<"block_id", [Pure]> {
  let summary = "index of this workgroup in the launch grid";
  let description = [{
    `%b = tile.block_id 0 : index` returns the workgroup index along grid axis 0, 1 or 2.
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<2>]>:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim attr-dict `:` type($result)";
}

def Tile_LoadIndexOp : Tile_Op<"load_index", [MemoryEffects<[MemRead]>]> {
  let summary = "read one element of an i32 tensor as an index";
  let description = [{
    `%s = tile.load_index %cu[%b] : memref<?xi32>` reads `cu[b]` (e.g. a
    sequence offset); `tile.load_index %bt[%s, %j] : memref<?x?xi32>` reads a
    block-table entry. A position outside the tensor reads 0. Every thread
    reads the same element.
  }];
  let arguments = (ins MemRefRankOf<[I32], [1, 2]>:$source, Variadic<Index>:$indices);
  let results = (outs Index:$result);
  let assemblyFormat = "$source `[` $indices `]` attr-dict `:` type($source)";
  let hasVerifier = 1;
}

def Tile_LoadScalarOp : Tile_Op<"load_scalar", [MemoryEffects<[MemRead]>]> {
  let summary = "read one element of an f32 tensor as a scalar";
  let description = [{
    `%s = tile.load_scalar %scale_b[%i, %kb] : memref<?x?xf32>` reads one
    f32 element (e.g. the scale of a 128 x 128 block of a block-scaled fp8
    operand), for use as the scalar of a tile.map. A position outside the
    tensor reads 0. Every thread reads the same element.
  }];
  let arguments = (ins MemRefRankOf<[F32], [1, 2]>:$source, Variadic<Index>:$indices);
  let results = (outs F32:$result);
  let assemblyFormat = "$source `[` $indices `]` attr-dict `:` type($source)";
  let hasVerifier = 1;
}

def Tile_WindowOp : Tile_Op<"window", [Pure, AttrSizedOperandSegments, AllTypesMatch<["source", "result"]>]> {
  let summary = "a rectangular window of a global tensor, itself a tensor";
  let description = [{
    `%w = tile.window %Q[%r, %c] [%rows, %cols] : memref<?x?xbf16>` is the
    tensor `Q[r : r + rows, c : c + cols]`, clipped to Q: element `(i, j)` of
    the window is `Q[r + i][c + j]`, its sizes are `min(rows, Q rows - r)` and
    `min(cols, Q cols - c)` (0 when the origin is outside Q). Loads outside the
    window read 0 and stores outside it are dropped, exactly as at a tensor's
    edge, so a kernel can address one sequence of a packed batch, or one head
    of a [tokens, heads * head_dim] tensor, without reading its neighbours.
    A rank-1 window has one origin and one size.
  }];
  let arguments = (ins Tile_Global:$source, Variadic<Index>:$origin, Variadic<Index>:$sizes);
  let results = (outs Tile_Global:$result);
  let assemblyFormat = "$source `[` $origin `]` `[` $sizes `]` attr-dict `:` type($source)";
  let hasVerifier = 1;
}

def Tile_MaskOp : Tile_Op<"mask"> {
  let summary = "set the masked-out scores of an attention tile to -inf";
  let description = [{
    `tile.mask %s [%row, %col, %col_end] {causal, window = 256 : i64} : !tile.tile<64x64xf32, reg>`
    treats element `(i, j)` of `s` as the score of query position `row + i`
    (signed, in key coordinates: a causal mask aligned to the bottom right
    passes `q0 + seq_k - seq_q`) against key position `col + j`, and sets it
    to -inf when the key is at or past `col_end`, or, with `causal`, after the
    query position, or, with `window = W`, W or more positions before it.
  }];
  let arguments = (ins Tile_RegTile:$tile, Index:$row, Index:$col, Index:$col_end, UnitAttr:$causal,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$window);
  let assemblyFormat = "$tile `[` $row `,` $col `,` $col_end `]` attr-dict `:` type($tile)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tiles
//===----------------------------------------------------------------------===//

def Tile_IotaOp : Tile_Op<"iota"> {
  let summary = "row or column indices into a register tile";
  let description = [{
    `tile.iota %t {axis = 1 : i64} : !tile.tile<64x64xf32, reg>` sets element
    `(i, j)` to `j` (axis 1) or `i` (axis 0); a rank-1 tile (one value per row)
    gets `i` (axis 0). `tile.iota %t[%o]` adds `o` (e.g. the tile's first
    row in a tensor). With a map it selects by position: the lowest column
    holding a row's maximum (top-k), one-hot masks, token ids.
  }];
  let arguments = (ins Tile_RegTile:$dest, Optional<Index>:$offset,
                       ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<1>]>:$axis);
  let assemblyFormat = "$dest (`[` $offset^ `]`)? attr-dict `:` type($dest)";
  let hasVerifier = 1;
}

def Tile_AllocOp : Tile_Op<"alloc", [MemoryEffects<[MemAlloc]>]> {
  let summary = "a tile in LDS or registers";
  let description = [{
    `%t = tile.alloc {name = "a_lds"} : !tile.tile<128x32xbf16, lds>`.
    `name` appears in diagnostics (e.g. LDS over budget). Passes annotate:
    `layout` on register tiles (tilec-infer-layouts: `#tile.matrix`,
    `#tile.blocked` or `#tile.staging`); `lds` on LDS tiles (their
    `#tile.lds` placement) and `access`, the `#tile.access` widths of the
    tile's memory accesses (tilec-allocate-lds). An LDS tile may carry the
    user's own layout as `row_stride` and `swizzle` (array<i64: vec,
    per_phase, max_phase>), which tilec-allocate-lds keeps.
  }];
  let arguments = (ins OptionalAttr<StrAttr>:$name,
                       OptionalAttr<AnyAttrOf<[Tile_MatrixLayoutAttr, Tile_BlockedLayoutAttr,
                                               Tile_StagingLayoutAttr]>>:$layout,
                       OptionalAttr<Tile_LdsPlacementAttr>:$lds,
                       OptionalAttr<Tile_AccessWidthsAttr>:$access);
  let results = (outs Tile_AnyTile:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    TileType getType() { return llvm::cast<TileType>(getResult().getType()); }
    std::string displayName();
  }];
}

def Tile_LoadOp : Tile_Op<"load"> {
  let summary = "copy a window of a global tensor into a tile";
  let description = [{
    `tile.load %A[%r, %c] -> %t : memref<?x?xbf16>, !tile.tile<128x32xbf16, lds>`
    copies `A[r + i][c + j]` into `t[i][j]`; elements outside `A` read as 0.
    A rank-1 tile loads `A[r + i]` from a rank-1 tensor (one index).
    With `transpose`, a rank-2 LDS tile of the window's swapped shape gets it
    transposed: `t[i][j] = A[r + j][c + i]` (a GEMM operand stored with k
    along its columns lands with k along the tile's rows).
  }];
  let arguments = (ins Tile_Global:$source, Variadic<Index>:$indices, Tile_AnyTile:$dest, UnitAttr:$transpose);
  let assemblyFormat = "$source `[` $indices `]` `->` $dest attr-dict `:` type($source) `,` type($dest)";
  let hasVerifier = 1;
}

def Tile_GatherOp : Tile_Op<"gather"> {
  let summary = "copy rows of a global tensor, chosen through an index tensor, into a tile";
  let description = [{
    `tile.gather %X[%ids[%i], %c] -> %t : memref<?x?xbf16>, memref<?xi32>, !tile.tile<64x128xbf16, lds>`
    copies `X[ids[i + r]][c + j]` into `t[r][j]`. Rows whose id is negative or
    not below X's row count (sentinels), and positions past the end of `ids`,
    read as 0. This is how MoE kernels read permuted tokens without copies.
  }];
  let arguments = (ins Tile_Global:$source, MemRefRankOf<[I32], [1]>:$ids, Index:$idsOffset,
                       Index:$col, Tile_AnyTile:$dest);
  let assemblyFormat = "$source `[` $ids `[` $idsOffset `]` `,` $col `]` `->` $dest attr-dict `:` type($source) `,` type($ids) `,` type($dest)";
  let hasVerifier = 1;
}

def Tile_ScatterOp : Tile_Op<"scatter"> {
  let summary = "store a row vector at positions held by another";
  let description = [{
    `tile.scatter %v -> %T[%pos] : !tile.tile<64xf32, reg>, !tile.tile<64xf32, reg>, memref<?xi32>`
    writes `T[pos[i]] = v[i]` (converted to T's element type) for each row `i`
    whose position lies in `[0, size of T)`; the others (e.g. -1) are skipped.
    `v` and `pos` have the same shape (and so the same layout). Positions are
    expected to be distinct (MoE token alignment: each pair has its slot).
  }];
  let arguments = (ins Tile_RegTile:$value, Tile_RegTile:$positions, Tile_Global:$dest);
  let assemblyFormat = "$value `->` $dest `[` $positions `]` attr-dict `:` type($value) `,` type($positions) `,` type($dest)";
  let hasVerifier = 1;
}

def Tile_StoreOp : Tile_Op<"store"> {
  let summary = "write a tile into a window of a global tensor";
  let description = [{
    `tile.store %t -> %C[%r, %c] : !tile.tile<128x128xf32, reg>, memref<?x?xf32>`
    writes `t[i][j]` to `C[r + i][c + j]`, converting to C's element type;
    elements outside `C` are dropped.
  }];
  let arguments = (ins Tile_AnyTile:$value, Tile_Global:$dest, Variadic<Index>:$indices);
  let assemblyFormat = "$value `->` $dest `[` $indices `]` attr-dict `:` type($value) `,` type($dest)";
  let hasVerifier = 1;
}

def Tile_CopyOp : Tile_Op<"copy"> {
  let summary = "copy a tile into another of the same shape (LDS <-> registers)";
  let description = [{
    `tile.copy %src -> %dst : !tile.tile<64x64xf32, reg>, !tile.tile<64x64xbf16, lds>`;
    converts the element type when the two differ. With `transpose`, a
    register tile is written transposed into an LDS tile of the swapped shape
    (`dst[j][i] = src[i][j]`: attention's backward feeds P^T and dS^T to
    matrix instructions this way).
  }];
  let arguments = (ins Tile_AnyTile:$source, Tile_AnyTile:$dest, UnitAttr:$transpose);
  let assemblyFormat = "$source `->` $dest attr-dict `:` type($source) `,` type($dest)";
  let hasVerifier = 1;
}

def Tile_FillOp : Tile_Op<"fill"> {
  let summary = "set every element of a tile";
  let description = [{ `tile.fill %acc, 0.0 : !tile.tile<128x128xf32, reg>` }];
  let arguments = (ins Tile_AnyTile:$dest, F64Attr:$value);
  let assemblyFormat = "$dest `,` $value attr-dict `:` type($dest)";
}

def Tile_GemmOp : Tile_Op<"gemm"> {
  let summary = "accumulating matrix product on tiles: C += A * B";
  let description = [{
    `tile.gemm %a, %b, %c : !tile.tile<MxKxT, lds>, !tile.tile<KxNxT, lds>, !tile.tile<MxNxf32, reg>`.
    With `transpose_b`, B is given as N x K. A and B share an element type,
    or A is an f32 register tile rounded to B's 16-bit float type (P of
    attention, the accumulator of an earlier gemm); C is an f32 register tile. Target passes choose the matrix instruction
    and how C is split over the workgroup's waves: `layout`, a
    `#tile.matrix` layout of C. `matrix_scope` (set by the DSL) restricts the
    choice: `warp` keeps warp-level instructions, `warpgroup` requires a
    warpgroup one (wgmma); absent, the compiler chooses.
  }];
  let arguments = (ins Tile_AnyTile:$a, Tile_AnyTile:$b, Tile_RegTile:$c, UnitAttr:$transpose_b,
                       OptionalAttr<Tile_MatrixLayoutAttr>:$layout,
                       OptionalAttr<Tile_MatrixScopeAttr>:$matrix_scope);
  let assemblyFormat = "$a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c)";
  let hasVerifier = 1;
}

def Tile_MapOp : Tile_Op<"map", [AttrSizedOperandSegments]> {
  let summary = "elementwise function of register tiles";
  let description = [{
    `tile.map exp2 %dst, %src : ...` (unary) or `tile.map sub %dst, %lhs, %rhs : ...`
    (binary). `dst` and `lhs` have the same shape. `rhs` has that shape too, or
    is a rank-1 tile broadcast along rows (length = rows: one value per row, as a
    row reduction gives) or, with `broadcast_cols`, along columns (length = cols:
    a bias). `scale` and `add_scalar` use the `scalar` attribute, the
    `scalar_value` operand (a runtime f32 such as a softmax scale), or both:
    `scale` then multiplies by their product and `add_scalar` adds their sum,
    formed once for the whole tile.
  }];
  let arguments = (ins Tile_MapFn:$fn, Tile_RegTile:$dest, Variadic<Tile_RegTile>:$inputs,
                       Optional<F32>:$scalar_value, OptionalAttr<F64Attr>:$scalar,
                       UnitAttr:$broadcast_cols);
  let assemblyFormat = [{
    $fn $dest `,` $inputs (`scalar` `(` $scalar_value^ `)`)? attr-dict `:` type($dest) `,` type($inputs)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    static bool isBinary(MapFn fn) { return static_cast<int>(fn) >= 20; }
  }];
}

def Tile_ReduceOp : Tile_Op<"reduce"> {
  let summary = "row (axis 1) or column (axis 0) reduction of a register tile";
  let description = [{
    `tile.reduce max %s -> %m {axis = 1 : i64} : !tile.tile<64x64xf32, reg>, !tile.tile<64xf32, reg>`
    writes one value per row. With `accumulate`, the old contents of the
    destination take part (`m = max(m, rowmax(s))`), as online softmax needs.
  }];
  let arguments = (ins Tile_ReduceKind:$kind, Tile_RegTile:$source, Tile_RegTile:$dest,
                       ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<1>]>:$axis,
                       UnitAttr:$accumulate);
  let assemblyFormat = "$kind $source `->` $dest attr-dict `:` type($source) `,` type($dest)";
  let hasVerifier = 1;
}

def Tile_ViewOp : Tile_Op<"view", [Pure, AllTypesMatch<["source", "result"]>]> {
  let summary = "one buffer of a multi-buffered LDS tile";
  let description = [{
    `%v = tile.view %t[%i] {stage_offset = 1 : i64} : !tile.tile<128x32xbf16, lds>`
    is buffer `i` of the LDS tile `%t`, whose `tile.alloc` has `buffers = S`
    (0 <= i < S). Software pipelining (`tilec-pipeline-loops`) creates views
    whose index is `(iteration + stage_offset) % S`; barrier insertion uses
    the offset to tell the buffers of one iteration apart.
  }];
  let arguments = (ins Tile_LdsTile:$source, Index:$index, OptionalAttr<I64Attr>:$stage_offset);
  let results = (outs Tile_LdsTile:$result);
  let assemblyFormat = "$source `[` $index `]` attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_BarrierOp : Tile_Op<"barrier"> {
  let summary = "workgroup barrier ordering LDS accesses";
  let description = [{
    `tile.barrier` makes every wave wait until all waves of the workgroup reach
    it, with their LDS writes visible. Inserted by `tilec-insert-barriers`.
  }];
  let assemblyFormat = "attr-dict";
}

#endif
