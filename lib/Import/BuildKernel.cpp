// Builds tile IR from a recorded kernel with MLIR's builders.
//
// The recording names operations and attributes as the dialect does; this
// file knows how values, types and attribute kinds map to MLIR, and nothing
// about any one tile operation except the loop (scf.for owns a region), the
// index constant (its attribute has the result's type) and the enum
// attributes (whose MLIR type the recording does not name).
#include "Import/BuildKernel.h"

#include "Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;

namespace tilec::import {

namespace {

Type elementType(DType t, MLIRContext &ctx) {
  Builder b(&ctx);
  switch (t) {
  case DType::f32: return b.getF32Type();
  case DType::f16: return b.getF16Type();
  case DType::bf16: return b.getBF16Type();
  case DType::fp8e4m3fnuz: return b.getFloat8E4M3FNUZType();
  case DType::fp8e5m2fnuz: return b.getFloat8E5M2FNUZType();
  case DType::e4m3: return b.getFloat8E4M3FNType();
  case DType::e5m2: return b.getFloat8E5M2Type();
  case DType::i32: return b.getI32Type();
  case DType::i8: return b.getI8Type();
  }
  return {};
}

/// The MLIR type of a recorded value; null, after an error at `loc`, for a
/// tile type the dialect rejects (e.g. a zero dimension).
Type typeOf(const record::Type &t, MLIRContext &ctx, Location loc) {
  Builder b(&ctx);
  switch (t.kind) {
  case record::Type::Index: return b.getIndexType();
  case record::Type::I32: return b.getI32Type();
  case record::Type::F32: return b.getF32Type();
  case record::Type::Tensor:
    return MemRefType::get(SmallVector<int64_t>(t.rank, ShapedType::kDynamic), elementType(t.dtype, ctx));
  case record::Type::Tile:
    return tile::TileType::getChecked([&] { return emitError(loc); }, &ctx, llvm::ArrayRef<int64_t>(t.shape),
                                      elementType(t.dtype, ctx),
                                      t.space == dsl::Space::lds ? tile::MemorySpace::lds : tile::MemorySpace::reg);
  }
  return {};
}

/// Builds one kernel; the first error stops it.
class RecordingImporter {
public:
  RecordingImporter(const Kernel &kernel, MLIRContext &ctx) : kernel(kernel), rec(kernel.recording()), ctx(ctx) {}

  OwningOpRef<ModuleOp> build() {
    OpBuilder b(&ctx);
    Location funcLoc = loc(rec.functionLoc);
    OwningOpRef<ModuleOp> module = ModuleOp::create(funcLoc);

    SmallVector<Type> argTypes;
    for (const KernelArg &a : kernel.args()) {
      if (!validValue(a.value, funcLoc, "argument '" + a.name + "'"))
        return nullptr;
      Type t = typeOf(rec.values[a.value], ctx, funcLoc);
      if (!t)
        return nullptr;
      argTypes.push_back(t);
    }
    b.setInsertionPointToEnd(module->getBody());
    auto func = b.create<func::FuncOp>(funcLoc, kernel.name(), b.getFunctionType(argTypes, {}));
    func->setAttr(tile::attr::kKernel, b.getUnitAttr());
    func->setAttr(tile::attr::kNumWaves, b.getI64IntegerAttr(kernel.numWaves()));
    SmallVector<Attribute> grid;
    for (const GridDim &g : kernel.grid())
      grid.push_back(b.getDenseI64ArrayAttr({g.arg, g.axis, g.tile}));
    func->setAttr(tile::attr::kGrid, b.getArrayAttr(grid));
    Block *entry = func.addEntryBlock();
    for (auto [i, a] : llvm::enumerate(kernel.args())) {
      if (a.divisibility > 1)
        func.setArgAttr(i, tile::attr::kDivisibility, b.getI64IntegerAttr(a.divisibility));
      func.setArgAttr(i, tile::attr::kArgName, b.getStringAttr(a.name));
      define(a.value, entry->getArgument(i));
    }

    b.setInsertionPointToEnd(entry);
    SmallVector<scf::ForOp> loops;
    for (const record::Op &op : rec.ops) {
      Location l = loc(op.loc);
      if (op.name == "scf.yield") {
        if (loops.empty())
          return error(l, "scf.yield closes no loop"), nullptr;
        b.setInsertionPointAfter(loops.pop_back_val());
        continue;
      }
      std::optional<SmallVector<SmallVector<Value>>> operands = operandsOf(op, l);
      if (!operands)
        return nullptr;
      Operation *built = nullptr;
      if (op.name == "scf.for") {
        if (operands->size() < 3 || op.results.size() != 1 || llvm::any_of(llvm::ArrayRef(*operands).take_front(3),
                                                                          [](auto &g) { return g.size() != 1; }))
          return error(l, "scf.for takes a lower bound, an upper bound and a step, and defines its induction "
                          "variable"), nullptr;
        auto loop = b.create<scf::ForOp>(l, (*operands)[0][0], (*operands)[1][0], (*operands)[2][0]);
        if (!setAttrs(loop, op, l))
          return nullptr;
        if (!define(op.results[0], loop.getInductionVar(), l))
          return nullptr;
        if (failed(verify(loop, /*verifyRecursively=*/false)))
          return nullptr;
        loops.push_back(loop);
        b.setInsertionPoint(loop.getBody()->getTerminator());
        continue;
      }
      if (op.name == "arith.constant") {
        // An index constant: its value attribute's type is the result's.
        if (op.attrs.size() != 1 || op.attrs[0].kind != record::Attr::Int || op.results.size() != 1)
          return error(l, "arith.constant takes one integer 'value' and defines one index"), nullptr;
        built = b.create<arith::ConstantIndexOp>(l, op.attrs[0].i);
      } else {
        OperationName name(op.name, &ctx);
        if (!name.isRegistered())
          return error(l, "unknown operation '" + op.name + "'"), nullptr;
        OperationState state(l, name);
        SmallVector<int32_t> segments;
        for (const SmallVector<Value> &group : *operands) {
          state.addOperands(group);
          segments.push_back(static_cast<int32_t>(group.size()));
        }
        if (name.hasTrait<OpTrait::AttrSizedOperandSegments>())
          state.addAttribute("operandSegmentSizes", b.getDenseI32ArrayAttr(segments));
        for (int r : op.results) {
          if (!validValue(r, l, "result of " + op.name))
            return nullptr;
          Type t = typeOf(rec.values[r], ctx, l);
          if (!t)
            return nullptr;
          state.addTypes(t);
        }
        for (const record::Attr &a : op.attrs) {
          Attribute attr = attribute(a, l);
          if (!attr)
            return nullptr;
          state.addAttribute(a.name, attr);
        }
        built = b.create(state);
      }
      // Each operation is checked as it is built, so the first error is the
      // one reported, at its own file:line.
      if (failed(verify(built, /*verifyRecursively=*/false)))
        return nullptr;
      for (auto [r, value] : llvm::zip_equal(op.results, built->getResults()))
        if (!define(r, value, l))
          return nullptr;
    }
    if (!loops.empty())
      return error(loc(rec.returnLoc), "a loop body is not closed (scf.yield missing)"), nullptr;
    b.create<func::ReturnOp>(loc(rec.returnLoc));
    // The whole: dominance, terminators and the function's own attributes.
    if (failed(verify(*module)))
      return nullptr;
    return module;
  }

private:
  Location loc(int i) const {
    if (i < 0 || i >= static_cast<int>(rec.locations.size()))
      return UnknownLoc::get(&ctx);
    const record::Location &l = rec.locations[i];
    return FileLineColLoc::get(&ctx, l.file, l.line, 1);
  }

  void error(Location l, const Twine &msg) { emitError(l) << "recorded kernel: " << msg; }

  bool validValue(int vid, Location l, const std::string &what) {
    if (vid >= 0 && vid < static_cast<int>(rec.values.size()))
      return true;
    error(l, what + " names value " + std::to_string(vid) + ", which is not in the recording");
    return false;
  }

  bool define(int vid, Value v, std::optional<Location> l = std::nullopt) {
    if (!validValue(vid, l.value_or(v.getLoc()), "a definition") )
      return false;
    if (values.count(vid)) {
      error(l.value_or(v.getLoc()), "value " + std::to_string(vid) + " is defined twice");
      return false;
    }
    values[vid] = v;
    return true;
  }

  std::optional<SmallVector<SmallVector<Value>>> operandsOf(const record::Op &op, Location l) {
    SmallVector<SmallVector<Value>> groups;
    for (const std::vector<int> &group : op.operands) {
      SmallVector<Value> &g = groups.emplace_back();
      for (int vid : group) {
        auto it = values.find(vid);
        if (it == values.end()) {
          error(l, op.name + " uses value " + std::to_string(vid) + " before its definition");
          return std::nullopt;
        }
        g.push_back(it->second);
      }
    }
    return groups;
  }

  bool setAttrs(Operation *op, const record::Op &r, Location l) {
    for (const record::Attr &a : r.attrs) {
      Attribute attr = attribute(a, l);
      if (!attr)
        return false;
      op->setAttr(a.name, attr);
    }
    return true;
  }

  /// The MLIR attribute a recorded one stands for. An enum names its case;
  /// which enum it belongs to follows from the attribute's name.
  Attribute attribute(const record::Attr &a, Location l) {
    Builder b(&ctx);
    switch (a.kind) {
    case record::Attr::Unit: return b.getUnitAttr();
    case record::Attr::Bool: return b.getBoolAttr(a.i != 0);
    case record::Attr::Int: return b.getI64IntegerAttr(a.i);
    case record::Attr::Float: return b.getF64FloatAttr(a.f);
    case record::Attr::String: return b.getStringAttr(a.s);
    case record::Attr::Ints: return b.getDenseI64ArrayAttr(a.ints);
    case record::Attr::Dict: {
      SmallVector<NamedAttribute> fields;
      for (const record::Attr &f : a.fields) {
        Attribute attr = attribute(f, l);
        if (!attr)
          return {};
        fields.push_back(b.getNamedAttr(f.name, attr));
      }
      return b.getDictionaryAttr(fields);
    }
    case record::Attr::Enum: {
      Attribute attr;
      if (a.name == "fn") {
        if (auto fn = tile::symbolizeMapFn(a.s))
          attr = tile::MapFnAttr::get(&ctx, *fn);
      } else if (a.name == "kind") {
        if (auto kind = tile::symbolizeReduceKind(a.s))
          attr = tile::ReduceKindAttr::get(&ctx, *kind);
      } else if (a.name == "matrix_scope") {
        if (auto scope = tile::symbolizeMatrixScope(a.s))
          attr = tile::MatrixScopeAttr::get(&ctx, *scope);
      } else {
        error(l, "no enum attribute is named '" + a.name + "'");
        return {};
      }
      if (!attr)
        error(l, "'" + a.s + "' is not a case of enum attribute '" + a.name + "'");
      return attr;
    }
    }
    return {};
  }

  const Kernel &kernel;
  const record::Recording &rec;
  MLIRContext &ctx;
  llvm::DenseMap<int, Value> values;
};

} // namespace

OwningOpRef<ModuleOp> buildTileIR(const Kernel &kernel, MLIRContext &ctx) {
  if (!kernel.ok()) {
    emitError(UnknownLoc::get(&ctx)) << kernel.error();
    return nullptr;
  }
  return RecordingImporter(kernel, ctx).build();
}

} // namespace tilec::import
