// The HIP emitter's state and helpers shared by its two halves: the kernel
// (EmitHIP.cpp: signature, tensor views, register-tile types) and its
// operations (EmitHIPOps.cpp: one prelude call per tile op).
#pragma once

#include "Emit/EmitHIP.h"

#include "Dialect/Tile/TileDialect.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilec::hip {

using namespace mlir;

/// C++ spelling of a tile or tensor element type.
FailureOr<std::string> cType(Operation *at, Type t);

/// The device prelude's type of a matrix instruction's operand elements.
std::optional<StringRef> preludeOperandType(ElemType t);

/// A C++ float literal for `v`; infinities and NaN through builtins.
std::string floatLiteral(double v);

/// What the report says of LDS tile `a`: its role as a gemm operand and its
/// access widths (tilec-allocate-lds's choice).
EmittedLdsTile ldsTileReport(tile::AllocOp a, int64_t writeVec, int64_t readVec);

class Emitter {
public:
  Emitter(func::FuncOp f, const TargetInfo &t, const EmitOptions &o) : f(f), target(t), options(o) {}
  FailureOr<EmittedKernel> run();

private:
  func::FuncOp f;
  const TargetInfo &target;
  EmitOptions options;
  std::string body;
  std::vector<EmittedLdsTile> ldsTiles;  // the LDS tiles as declared, for the report
  llvm::raw_string_ostream os{body};
  llvm::DenseMap<Value, std::string> names;  // SSA value -> C expression
  int indent = 1;
  int counter = 0;
  int threads = 0;
  int ptxVersion = 0;  // the newest PTX ISA version (times 10) an instruction of the kernel needs
  /// Staged loads being emitted in a loop copy whose windows were tested to lie
  /// inside their tensors (the interior loop of a pipelined AMD loop).
  llvm::DenseSet<Operation *> loadsInside;
  /// Tensor copies (planTensorCopies): the tile.load ops issued as tensor
  /// copies, with their tensor map; the tensor map of each copied tensor,
  /// by argument number; and the mbarriers of the kernel's copy groups (0: the
  /// kernel has no tensor copies, and its copy groups are cp.async's alone).
  llvm::DenseMap<Operation *, EmittedTensorMap> tensorCopies;
  std::map<unsigned, EmittedTensorMap> tensorMaps;
  int copyGroupSlots = 0;

  llvm::raw_ostream &line() { return os.indent(indent * 2); }
  std::string fresh(StringRef prefix) { return (prefix + llvm::Twine(counter++)).str(); }
  std::string name(Value v) { return names.lookup(v); }

  FailureOr<std::string> atomType(Operation *at, StringRef instr);
  /// Chooses the async tile loads issued as tensor copies (EmitTensorCopies.cpp).
  void planTensorCopies();
  /// The kernel's copy groups where they complete on mbarriers ("tl_copies"),
  /// as the argument of async_wait, and after the other arguments of an
  /// asynchronous load.
  std::string copyGroups() const { return copyGroupSlots ? "tl_copies" : ""; }
  std::string copyGroupsArg() const { return copyGroupSlots ? ", tl_copies" : ""; }
  /// The gemm right after zero fill `f` of its accumulator when that gemm
  /// absorbs the fill: its instruction ignores the accumulator input
  /// (MatrixInstr::canIgnoreAccumulator), so the pair is emitted as one
  /// C = A * B (tl::gemm_overwrite) without zeroing C's registers first.
  tile::GemmOp gemmOverwriting(tile::FillOp f);
  FailureOr<std::string> regTileType(tile::AllocOp a);
  LogicalResult emitBlock(Block &b);
  LogicalResult emitOp(Operation &op);
  LogicalResult emitArith(Operation &op);
  LogicalResult emitMap(tile::MapOp m);
  /// tile.load_index / tile.load_scalar: one element of `source`, read by
  /// every thread, as a `type` named for `op`'s result.
  LogicalResult emitElementRead(Operation *op, StringRef type, Value source, ValueRange indices);
};

} // namespace tilec::hip
