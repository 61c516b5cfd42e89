#include "Dialect/Tile/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tilec::tile;

#include "Dialect/Tile/TileOpsDialect.cpp.inc"
#include "Dialect/Tile/TileOpsEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "Dialect/Tile/TileOpsTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "Dialect/Tile/TileOpsAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "Dialect/Tile/TileOps.cpp.inc"

void TileDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "Dialect/Tile/TileOpsTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "Dialect/Tile/TileOpsAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "Dialect/Tile/TileOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

LogicalResult BlockedLayoutAttr::verify(llvm::function_ref<InFlightDiagnostic()> emitError, int64_t vec,
                                        llvm::ArrayRef<int64_t> lanes, llvm::ArrayRef<int64_t> waves) {
  auto pow2 = [](int64_t x) { return x >= 1 && llvm::isPowerOf2_64(x); };
  // A run is at most one 16-byte access of 1-byte elements.
  if (!pow2(vec) || vec > 16)
    return emitError() << "blocked layout: vec must be a power of two in [1, 16], got " << vec;
  if (lanes.size() != 2 || waves.size() != 2)
    return emitError() << "blocked layout: lanes and waves are [rows, cols] grids, got " << lanes.size()
                       << " and " << waves.size() << " entries";
  if (!llvm::all_of(lanes, pow2) || !llvm::all_of(waves, pow2))
    return emitError() << "blocked layout: lane and wave grids must be powers of two";
  if (lanes[0] * lanes[1] != 32 && lanes[0] * lanes[1] != 64)
    return emitError() << "blocked layout: the lane grid covers a wave of 32 or 64 lanes, got "
                       << lanes[0] * lanes[1];
  if (waves[0] * waves[1] > 16)
    return emitError() << "blocked layout: at most 16 waves, got " << waves[0] * waves[1];
  return success();
}

LogicalResult MatrixLayoutAttr::verify(llvm::function_ref<InFlightDiagnostic()> emitError, llvm::StringRef instr,
                                       llvm::ArrayRef<int64_t> waveGrid, llvm::ArrayRef<int64_t> shape) {
  auto positive = [](int64_t x) { return x >= 1; };
  if (instr.empty())
    return emitError() << "matrix layout: the instruction name is empty";
  if (waveGrid.size() != 2 || shape.size() != 2)
    return emitError() << "matrix layout: wave_grid and shape are [rows, cols] pairs, got " << waveGrid.size()
                       << " and " << shape.size() << " entries";
  if (!llvm::all_of(waveGrid, positive) || !llvm::all_of(shape, positive))
    return emitError() << "matrix layout: wave_grid and shape must be positive";
  if (shape[0] % waveGrid[0] || shape[1] % waveGrid[1])
    return emitError() << "matrix layout: a " << shape[0] << "x" << shape[1] << " accumulator does not split over a "
                       << waveGrid[0] << "x" << waveGrid[1] << " grid of waves";
  return success();
}

FailureOr<SmallVector<int64_t>> tilec::tile::parseBracketedI64s(AsmParser &parser) {
  SmallVector<int64_t> values;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        return parser.parseInteger(values.emplace_back());
      }))
    return failure();
  return values;
}

void tilec::tile::printBracketedI64s(AsmPrinter &printer, ArrayRef<int64_t> values) {
  printer << '[';
  llvm::interleaveComma(values, printer);
  printer << ']';
}

FailureOr<bool> tilec::tile::parseBool(AsmParser &parser) {
  if (succeeded(parser.parseOptionalKeyword("true")))
    return true;
  if (succeeded(parser.parseOptionalKeyword("false")))
    return false;
  return parser.emitError(parser.getCurrentLocation(), "expected true or false");
}

LogicalResult LdsPlacementAttr::verify(llvm::function_ref<InFlightDiagnostic()> emitError, int64_t offset,
                                       int64_t bytes, int64_t rowStride, int64_t bufferBytes,
                                       llvm::ArrayRef<int64_t> swizzle, int64_t colBlock) {
  if (offset < 0 || bytes < 1 || rowStride < 1)
    return emitError() << "LDS placement: offset must be >= 0, bytes and row_stride >= 1";
  if (bufferBytes < 0 || (bufferBytes > 0 && bytes % bufferBytes))
    return emitError() << "LDS placement: " << bytes << " bytes are not whole buffers of " << bufferBytes;
  if (!swizzle.empty() && (swizzle.size() != 3 || !llvm::all_of(swizzle, [](int64_t x) { return x >= 1; })))
    return emitError() << "LDS placement: swizzle is [vec, per_phase, max_phase], all positive";
  if (colBlock < 0)
    return emitError() << "LDS placement: col_block must be >= 0";
  return success();
}

LogicalResult AccessWidthsAttr::verify(llvm::function_ref<InFlightDiagnostic()> emitError, int64_t load,
                                       bool realign, int64_t write, int64_t read) {
  for (int64_t w : {load, write, read})
    if (w < 1 || !llvm::isPowerOf2_64(w) || w > 16)
      return emitError() << "access widths: each is a power of two in [1, 16], got " << w;
  return success();
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

// !tile.tile<128x32xbf16, lds>
Type TileType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elem;
  std::string space;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elem) || parser.parseComma() || parser.parseKeywordOrString(&space) ||
      parser.parseGreater())
    return {};
  std::optional<MemorySpace> ms = symbolizeMemorySpace(space);
  if (!ms) {
    parser.emitError(loc, "unknown tile memory space '") << space << "' (expected 'lds' or 'reg')";
    return {};
  }
  return TileType::getChecked([&] { return parser.emitError(loc); }, parser.getContext(), shape,
                              elem, *ms);
}

void TileType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t d : getShape())
    printer << d << "x";
  printer << getElementType() << ", " << stringifyMemorySpace(getSpace()) << ">";
}

LogicalResult TileType::verify(function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> shape,
                               Type elementType, MemorySpace) {
  if (shape.empty() || shape.size() > 2)
    return emitError() << "tile must have rank 1 or 2, got rank " << shape.size();
  for (int64_t d : shape)
    if (d <= 0)
      return emitError() << "tile dimensions must be positive, got " << d;
  if (!elementType.isIntOrFloat())
    return emitError() << "tile element type must be an integer or float type, got " << elementType;
  return success();
}

//===----------------------------------------------------------------------===//
// Dialect attributes on func.func / scf.for
//===----------------------------------------------------------------------===//

LogicalResult TileDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == attr::kNumWaves) {
    auto i = dyn_cast<IntegerAttr>(attr.getValue());
    if (!i || i.getInt() < 1 || i.getInt() > 16)
      return op->emitError() << "'" << name << "' must be an integer in [1, 16]";
  } else if (name == attr::kNumStages) {
    auto i = dyn_cast<IntegerAttr>(attr.getValue());
    if (!i || i.getInt() < 1 || i.getInt() > 8)
      return op->emitError() << "'" << name << "' must be an integer in [1, 8]";
  } else if (name == attr::kSchedule) {
    auto d = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!d)
      return op->emitError() << "'" << name << "' must be a dictionary {interleave, setprio, ping_pong} of bools";
    for (NamedAttribute e : d) {
      StringRef key = e.getName().getValue();
      if (key != "interleave" && key != "setprio" && key != "ping_pong")
        return op->emitError() << "'" << name << "' has unknown entry '" << key
                               << "' (known: interleave, setprio, ping_pong)";
      if (!isa<BoolAttr>(e.getValue()))
        return op->emitError() << "'" << name << "' entry '" << key << "' must be a bool (true or false)";
    }
    if (op->getName().getStringRef() != "scf.for")
      return op->emitError() << "'" << name << "' applies to scf.for loops only";
  } else if (name == attr::kWaveGroup) {
    auto i = dyn_cast<IntegerAttr>(attr.getValue());
    if (!i || i.getInt() < 0 || i.getInt() > 1)
      return op->emitError() << "'" << name << "' must be 0 or 1 (the first or second half of the waves)";
    if (!isa<BarrierOp>(op))
      return op->emitError() << "'" << name << "' applies to tile.barrier only";
  } else if (name == attr::kGrid) {
    auto arr = dyn_cast<ArrayAttr>(attr.getValue());
    if (!arr || arr.empty() || arr.size() > 3)
      return op->emitError() << "'" << name << "' must be an array of 1 to 3 grid dimensions";
    for (Attribute a : arr) {
      auto d = dyn_cast<DenseI64ArrayAttr>(a);
      if (!d || d.size() != 3 || d[2] < 1)
        return op->emitError() << "'" << name
                               << "' entries must be array<i64: arg, axis, tile> with tile >= 1 "
                                  "(arg = -1 for a constant extent of `tile`)";
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

std::string AllocOp::displayName() {
  if (auto n = getName())
    return n->str();
  std::string s;
  llvm::raw_string_ostream os(s);
  getResult().printAsOperand(os, OpPrintingFlags());
  return os.str();
}

static std::string shapeStr(TileType t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(t.getShape(), os, "x");
  os << "x" << t.getElementType() << " (" << stringifyMemorySpace(t.getSpace()) << ")";
  return os.str();
}

/// A tensor operand as messages name it: "tensor A: memref<?x?xbf16>" for a
/// kernel argument the kernel named (tile.name), else "tensor 'memref<...>'".
static std::string tensorStr(Value v) {
  std::string s = "tensor ";
  llvm::raw_string_ostream os(s);
  auto arg = dyn_cast<BlockArgument>(v);
  auto func = arg ? dyn_cast_or_null<FunctionOpInterface>(arg.getOwner()->getParentOp()) : nullptr;
  StringAttr name = func && arg.getOwner()->isEntryBlock()
                        ? func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), attr::kArgName)
                        : nullptr;
  if (name)
    os << name.getValue() << ": " << v.getType();
  else
    os << "'" << v.getType() << "'";
  return os.str();
}

static LogicalResult checkWindow(Operation *op, Value tensor, size_t numIndices, TileType t) {
  auto mem = cast<MemRefType>(tensor.getType());
  if (numIndices != static_cast<size_t>(mem.getRank()))
    return op->emitOpError() << "needs " << mem.getRank() << " indices into " << tensorStr(tensor) << ", got "
                             << numIndices << " (tile " << shapeStr(t) << ")";
  if (t.getRank() > mem.getRank())
    return op->emitOpError() << "tile " << shapeStr(t) << " has higher rank than " << tensorStr(tensor);
  return success();
}

LogicalResult LoadOp::verify() {
  auto t = cast<TileType>(getDest().getType());
  if (failed(checkWindow(*this, getSource(), getIndices().size(), t)))
    return failure();
  if (getTranspose() && (!t.isLds() || t.getRank() != 2 || getSource().getType().getRank() != 2))
    return emitOpError() << "a transposing load goes from a rank-2 tensor into a rank-2 LDS tile, got "
                         << tensorStr(getSource()) << " -> " << shapeStr(t);
  if (t.getElementType() != getSource().getType().getElementType())
    return emitOpError() << "element type of tile " << shapeStr(t) << " differs from "
                         << tensorStr(getSource()) << " (load does not convert: load into a "
                         << getSource().getType().getElementType() << " tile, then tile.copy)";
  return success();
}

LogicalResult WindowOp::verify() {
  int64_t rank = getSource().getType().getRank();
  if (static_cast<int64_t>(getOrigin().size()) != rank || static_cast<int64_t>(getSizes().size()) != rank)
    return emitOpError() << "a window of " << getSource().getType() << " needs " << rank
                         << " origin index(es) and " << rank << " size(s), got " << getOrigin().size()
                         << " and " << getSizes().size();
  return success();
}

/// tile.load_index and tile.load_scalar: one index per dimension of the tensor.
static LogicalResult verifyElementRead(Operation *op, TypedValue<MemRefType> source, ValueRange indices) {
  if (static_cast<int64_t>(indices.size()) != source.getType().getRank())
    return op->emitOpError() << "needs " << source.getType().getRank() << " indices into " << tensorStr(source)
                             << ", got " << indices.size();
  return success();
}

LogicalResult LoadIndexOp::verify() { return verifyElementRead(*this, getSource(), getIndices()); }

LogicalResult LoadScalarOp::verify() { return verifyElementRead(*this, getSource(), getIndices()); }

LogicalResult MaskOp::verify() {
  auto t = cast<TileType>(getTile().getType());
  if (t.getRank() != 2 || !t.getElementType().isF32())
    return emitOpError() << "masks a rank-2 f32 register tile of scores, got " << shapeStr(t);
  return success();
}

LogicalResult IotaOp::verify() {
  auto t = cast<TileType>(getDest().getType());
  if (static_cast<int64_t>(getAxis()) >= t.getRank())
    return emitOpError() << "axis " << getAxis() << " of a rank-" << t.getRank() << " tile " << shapeStr(t);
  return success();
}

LogicalResult ScatterOp::verify() {
  auto v = cast<TileType>(getValue().getType()), p = cast<TileType>(getPositions().getType());
  if (v.getRank() != 1 || v.getShape() != p.getShape())
    return emitOpError() << "scatters a rank-1 tile through positions of the same shape, got " << shapeStr(v)
                         << " and " << shapeStr(p);
  if (getDest().getType().getRank() != 1)
    return emitOpError() << "scatters into a rank-1 tensor, got " << tensorStr(getDest());
  return success();
}

LogicalResult GatherOp::verify() {
  auto t = cast<TileType>(getDest().getType());
  if (getSource().getType().getRank() != 2 || t.getRank() != 2)
    return emitOpError() << "gathers rows of a rank-2 tensor into a rank-2 tile, got "
                         << tensorStr(getSource()) << " and " << shapeStr(t);
  if (t.getElementType() != getSource().getType().getElementType())
    return emitOpError() << "element type of tile " << shapeStr(t) << " differs from " << tensorStr(getSource());
  return success();
}

LogicalResult StoreOp::verify() {
  auto t = cast<TileType>(getValue().getType());
  return checkWindow(*this, getDest(), getIndices().size(), t);
}

LogicalResult CopyOp::verify() {
  auto s = cast<TileType>(getSource().getType());
  auto d = cast<TileType>(getDest().getType());
  if (getTranspose()) {
    if (!s.isReg() || !d.isLds() || s.getRank() != 2 || d.getRank() != 2 || s.rows() != d.cols() ||
        s.cols() != d.rows())
      return emitOpError() << "transposing copies go from a rank-2 register tile to the LDS tile of the "
                              "swapped shape, got "
                           << shapeStr(s) << " -> " << shapeStr(d);
    return success();
  }
  // An LDS tile of one row (column) is read into every row (column) of a
  // register tile: a broadcast, as a map's [1, N] ([M, 1]) input.
  const bool broadcast = s.isLds() && d.isReg() && s.getRank() == 2 && d.getRank() == 2 &&
                         ((s.rows() == 1 && s.cols() == d.cols()) || (s.cols() == 1 && s.rows() == d.rows()));
  if (s.getShape() != d.getShape() && !broadcast)
    return emitOpError() << "copies between tiles of different shapes: " << shapeStr(s) << " -> "
                         << shapeStr(d) << " (only an LDS tile of one row or column broadcasts into registers)";
  if (s.isLds() && d.isLds())
    return emitOpError() << "copies LDS to LDS (" << shapeStr(s) << " -> " << shapeStr(d)
                         << "); one side must be a register tile";
  return success();
}

LogicalResult GemmOp::verify() {
  auto a = cast<TileType>(getA().getType());
  auto b = cast<TileType>(getB().getType());
  auto c = cast<TileType>(getC().getType());
  if (a.getRank() != 2 || b.getRank() != 2 || c.getRank() != 2)
    return emitOpError() << "needs rank-2 tiles, got A " << shapeStr(a) << ", B " << shapeStr(b)
                         << ", C " << shapeStr(c);
  int64_t m = a.rows(), k = a.cols();
  int64_t kb = getTransposeB() ? b.cols() : b.rows();
  int64_t n = getTransposeB() ? b.rows() : b.cols();
  if (k != kb || c.rows() != m || c.cols() != n)
    return emitOpError() << "shape mismatch: A " << shapeStr(a) << " * B" << (getTransposeB() ? "^T " : " ")
                         << shapeStr(b) << " does not give C " << shapeStr(c) << " (M=" << m
                         << ", K=" << k << " vs K=" << kb << ", N=" << n << ")";
  // A may be an f32 register tile (an accumulator of an earlier gemm), rounded
  // to B's 16-bit type for the matrix instruction.
  const bool accumulatorA = a.isReg() && a.getElementType().isF32() && b.getElementType().getIntOrFloatBitWidth() == 16 &&
                            isa<FloatType>(b.getElementType());
  if (a.getElementType() != b.getElementType() && !accumulatorA)
    return emitOpError() << "A and B element types differ: " << a.getElementType() << " vs "
                         << b.getElementType() << " (only an f32 register A may feed a 16-bit float B)";
  if (!c.getElementType().isF32())
    return emitOpError() << "accumulator C must be f32, got " << shapeStr(c);
  if (MatrixLayoutAttr l = getLayoutAttr(); l && l.getShape() != c.getShape())
    return emitOpError() << "layout " << l << " is not one of C " << shapeStr(c);
  return success();
}

LogicalResult AllocOp::verify() {
  TileType t = getType();
  if (getLdsAttr() && !t.isLds())
    return emitOpError() << "a register tile has no LDS placement, got " << getLdsAttr();
  if (AccessWidthsAttr w = getAccessAttr(); w && !t.isLds() && (w.getWrite() > 1 || w.getRead() > 1))
    return emitOpError() << "a register tile has no LDS write or read widths, got " << w;
  Attribute layout = getLayoutAttr();
  if (!layout)
    return success();
  if (!t.isReg())
    return emitOpError() << "an LDS tile has no register layout, got " << layout;
  // A rank-2 tile in a matrix layout is the accumulator itself; a rank-1 tile
  // holds one value per accumulator row.
  if (auto m = dyn_cast<MatrixLayoutAttr>(layout);
      m && (t.getRank() == 2 ? m.getShape() != t.getShape() : m.getShape()[0] != t.rows()))
    return emitOpError() << "layout " << m << " does not fit " << shapeStr(t);
  return success();
}

LogicalResult MapOp::verify() {
  auto dst = cast<TileType>(getDest().getType());
  size_t want = isBinary(getFn()) ? 2 : 1;
  if (getInputs().size() != want)
    return emitOpError() << "'" << stringifyMapFn(getFn()) << "' takes " << want
                         << " input tile(s), got " << getInputs().size();
  auto lhs = cast<TileType>(getInputs()[0].getType());
  if (lhs.getShape() != dst.getShape())
    return emitOpError() << "input " << shapeStr(lhs) << " and destination " << shapeStr(dst)
                         << " differ in shape";
  if (want == 2) {
    auto rhs = cast<TileType>(getInputs()[1].getType());
    bool same = rhs.getShape() == dst.getShape();
    bool rowBcast = rhs.getRank() == 1 && dst.getRank() == 2 && !getBroadcastCols() &&
                    rhs.rows() == dst.rows();
    bool colBcast = rhs.getRank() == 1 && dst.getRank() == 2 && getBroadcastCols() &&
                    rhs.rows() == dst.cols();
    // A [1, C] or [R, 1] tile, broadcast over the rows or columns of R x C.
    bool tileBcast = rhs.getRank() == 2 && dst.getRank() == 2 && !getBroadcastCols() &&
                     ((rhs.rows() == 1 && rhs.cols() == dst.cols()) || (rhs.cols() == 1 && rhs.rows() == dst.rows()));
    if (!same && !rowBcast && !colBcast && !tileBcast)
      return emitOpError() << "'" << stringifyMapFn(getFn()) << "': cannot broadcast rhs " << shapeStr(rhs)
                           << " to " << shapeStr(dst) << " (a rank-1 rhs needs one value per "
                           << (getBroadcastCols() ? "column: " + std::to_string(dst.cols())
                                                  : "row: " + std::to_string(dst.rows()))
                           << ")";
  }
  bool needsScalar = getFn() == MapFn::scale || getFn() == MapFn::add_scalar;
  if (needsScalar && !getScalar() && !getScalarValue())
    return emitOpError() << "'" << stringifyMapFn(getFn()) << "' needs a scalar";
  return success();
}

LogicalResult ReduceOp::verify() {
  auto s = cast<TileType>(getSource().getType());
  auto d = cast<TileType>(getDest().getType());
  if (s.getRank() == 2 && d.getRank() == 2) {
    // Into a [R, 1] (axis 1) or [1, C] (axis 0) tile.
    bool ok = getAxis() == 1 ? d.rows() == s.rows() && d.cols() == 1 : d.rows() == 1 && d.cols() == s.cols();
    if (!ok)
      return emitOpError() << "axis " << getAxis() << " reduction of " << shapeStr(s) << " goes into a "
                           << (getAxis() == 1 ? std::to_string(s.rows()) + "x1" : "1x" + std::to_string(s.cols()))
                           << " tile, got " << shapeStr(d);
    return success();
  }
  if (s.getRank() != 2 || d.getRank() != 1)
    return emitOpError() << "reduces a rank-2 tile into a rank-1 tile (or a rank-2 tile of extent 1 along the "
                            "axis), got "
                         << shapeStr(s) << " -> " << shapeStr(d);
  int64_t want = getAxis() == 1 ? s.rows() : s.cols();
  if (d.rows() != want)
    return emitOpError() << "axis " << getAxis() << " reduction of " << shapeStr(s) << " gives "
                         << want << " values, destination " << shapeStr(d) << " holds " << d.rows();
  return success();
}

LogicalResult ViewOp::verify() {
  if (getSource().getType() != getResult().getType())
    return emitOpError() << "view type " << getResult().getType() << " differs from its tile "
                         << getSource().getType();
  auto alloc = getSource().getDefiningOp<AllocOp>();
  if (!alloc || !alloc->hasAttr(attr::kBuffers))
    return emitOpError() << "views a tile that is not multi-buffered (its tile.alloc needs `buffers`)";
  return success();
}
