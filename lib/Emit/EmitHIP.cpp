// Emits HIP C++ from target-annotated tile IR. Every tile op becomes one call
// into the device prelude (tilec_prelude.h), instantiated with the layouts and
// LDS placement the passes chose, so the kernel text stays readable.
#include "Emit/HIPEmitter.h"

#include "Dialect/Tile/TileContract.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>

using namespace mlir;

namespace tilec {
namespace hip {

/// C++ spelling of a tile or tensor element type.
FailureOr<std::string> cType(Operation *at, Type t) {
  if (t.isF32()) return std::string("float");
  if (t.isF16()) return std::string("tl::f16");
  if (t.isBF16()) return std::string("tl::bf16");
  if (t.isFloat8E4M3FNUZ()) return std::string("tl::fp8e4m3fnuz");
  if (t.isFloat8E5M2FNUZ()) return std::string("tl::fp8e5m2fnuz");
  if (t.isFloat8E4M3FN()) return std::string("tl::fp8e4m3");
  if (t.isFloat8E5M2()) return std::string("tl::fp8e5m2");
  if (t.isInteger(32)) return std::string("int");
  if (t.isIndex()) return std::string("int");
  return at->emitOpError() << "element type " << t << " is not supported by the HIP emitter yet";
}

/// The device prelude's type of a matrix instruction's operand elements.
std::optional<StringRef> preludeOperandType(ElemType t) {
  switch (t) {
  case ElemType::BF16: return StringRef("tl::bf16");
  case ElemType::F16: return StringRef("tl::f16");
  case ElemType::FP8E4M3FNUZ: return StringRef("tl::fp8e4m3fnuz");
  case ElemType::FP8E5M2FNUZ: return StringRef("tl::fp8e5m2fnuz");
  case ElemType::FP8E4M3FN: return StringRef("tl::fp8e4m3");
  case ElemType::FP8E5M2: return StringRef("tl::fp8e5m2");
  default: return std::nullopt;
  }
}

/// A C++ float literal for `v`; infinities and NaN through builtins.
std::string floatLiteral(double v) {
  if (std::isnan(v))
    return "__builtin_nanf(\"\")";
  if (std::isinf(v))
    return v < 0 ? "(-__builtin_inff())" : "__builtin_inff()";
  // Nine significant digits identify every f32 (the literal's type): the
  // value the kernel computes with is v rounded to f32, exactly.
  char buf[32];
  snprintf(buf, sizeof buf, "%.9g", static_cast<double>(static_cast<float>(v)));
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s + "f";
}

/// What the report says of LDS tile `a`: its role (a gemm operand, or a
/// layout conversion's) and its access widths (tilec-allocate-lds's choice).
EmittedLdsTile ldsTileReport(tile::AllocOp a, int64_t writeVec, int64_t readVec) {
  const int64_t eb = std::max<int64_t>(1, a.getType().getElementType().getIntOrFloatBitWidth() / 8);
  EmittedLdsTile r;
  r.name = a.displayName();
  tile::LdsPlacementAttr placement = a.getLdsAttr();
  auto conflicts = a->getAttrOfType<IntegerAttr>(pattr::kBankConflicts);
  r.bytes = placement ? placement.getBytes() : 0;
  r.bankConflicts = conflicts ? conflicts.getInt() : 0;
  r.writeBytes = static_cast<int>(writeVec * eb);
  SmallVector<Value> values = {a.getResult()};
  for (Operation *u : a->getUsers())
    if (auto v = dyn_cast<tile::ViewOp>(u))
      values.push_back(v.getResult());
  if (a->hasAttr(pattr::kLayoutConversion))
    r.role = "conversion";
  for (Value v : values)
    for (Operation *u : v.getUsers())
      if (auto g = dyn_cast<tile::GemmOp>(u); g && (g.getA() == v || g.getB() == v)) {
        r.role = g.getA() == v ? "A" : "B";
        r.readBytes = static_cast<int>(readVec * eb);
      }
  return r;
}

tile::GemmOp Emitter::gemmOverwriting(tile::FillOp f) {
  auto g = dyn_cast_or_null<tile::GemmOp>(f->getNextNode());
  if (!g || g.getC() != f.getDest() || !f.getValue().isZero() || cast<tile::TileType>(g.getA().getType()).isReg() ||
      g->hasAttr(pattr::kMatrixGroupsInFlight) || g->hasAttr(pattr::kInterleaveVmem) || g->hasAttr(pattr::kSetprio))
    return nullptr;
  const MatrixInstr *mi = matrixInstrOf(g, target);
  return mi && mi->canIgnoreAccumulator() ? g : nullptr;
}

FailureOr<std::string> Emitter::atomType(Operation *at, StringRef instrName) {
  const MatrixInstr *mi = target.findInstr(instrName);
  if (!mi)
    return at->emitOpError() << "matrix instruction '" << instrName << "' is not available on " << target.arch;
  std::optional<StringRef> in = preludeOperandType(mi->aType);
  if (mi->atom.empty() || !in)
    return at->emitOpError() << "matrix instruction " << instrName << " has no device-prelude atom yet";
  ptxVersion = std::max(ptxVersion, mi->ptxVersion);
  if (mi->atomTakesN)
    return std::string(llvm::formatv("tl::{0}<{1}, {2}>", StringRef(mi->atom), *in, mi->n));
  return std::string(llvm::formatv("tl::{0}<{1}>", StringRef(mi->atom), *in));
}

FailureOr<std::string> Emitter::regTileType(tile::AllocOp a) {
  if (auto bl = dyn_cast_or_null<tile::BlockedLayoutAttr>(a.getLayoutAttr())) {
    // A rank-1 register tile holds one value per row: an R x 1 tile.
    tile::TileType t = a.getType();
    if (bl.getLanes()[0] * bl.getLanes()[1] != target.waveSize ||
        bl.getWaves()[0] * bl.getWaves()[1] != numWavesOf(f))
      return a.emitOpError() << "blocked layout " << bl << " does not cover " << numWavesOf(f) << " waves of "
                             << target.waveSize << " lanes";
    return std::string(llvm::formatv("tl::Blocked<{0}, {1}, tl::BlockedLayout<{2}, {3}, {4}, {5}, {6}>>", t.rows(),
                                      t.getRank() == 2 ? t.cols() : 1, bl.getVec(), bl.getLanes()[0],
                                      bl.getLanes()[1], bl.getWaves()[0], bl.getWaves()[1]));
  }
  auto layout = dyn_cast_or_null<tile::MatrixLayoutAttr>(a.getLayoutAttr());
  if (!layout)
    return a.emitOpError() << "register tile '" << a.displayName()
                           << "' has no layout; run the tilec pipeline before emitting HIP";
  // Register tiles hold f32 values; a bf16/f16 tile holds values rounded to
  // its type (tile.copy into it rounds), an i32 tile integers (exact up to
  // 2^24 in magnitude: ids, counts, positions).
  Type elem = a.getType().getElementType();
  if (!isa<FloatType>(elem) && !elem.isInteger(32))
    return a.emitOpError() << "register tiles must have a float or i32 element type, got " << a.getType();
  FailureOr<std::string> atom = atomType(a, layout.getInstr());
  if (failed(atom))
    return failure();
  std::string acc = llvm::formatv("tl::Acc<{0}, {1}, {2}, {3}, {4}>", *atom, layout.getShape()[0],
                                  layout.getShape()[1], layout.waveRows(), layout.waveCols());
  // A rank-1 tile holds one value per row of the accumulator.
  return a.getType().getRank() == 2 ? acc : "tl::Rows<" + acc + ">";
}
LogicalResult Emitter::emitBlock(Block &b) {
  for (Operation &op : b)
    if (failed(emitOp(op)))
      return failure();
  return success();
}

FailureOr<EmittedKernel> Emitter::run() {
  EmittedKernel out;
  out.numWaves = numWavesOf(f);
  out.waveSize = target.waveSize;
  threads = out.numWaves * target.waveSize;
  out.name = (f.getSymName() + "_" + target.arch).str();
  if (auto lds = f->getAttrOfType<IntegerAttr>(tile::attr::kLdsBytes))
    out.ldsBytes = lds.getInt();
  if (auto grid = f->getAttrOfType<ArrayAttr>(tile::attr::kGrid))
    for (Attribute a : grid) {
      auto d = cast<DenseI64ArrayAttr>(a);
      out.grid.push_back({d[0], d[1], d[2]});
    }

  // Which tensors are written: the others are passed as const.
  llvm::DenseSet<Value> written;
  f.walk([&](tile::StoreOp s) { written.insert(rootTensorOf(s.getDest())); });

  planTensorCopies();
  // The copy groups' mbarriers (8 bytes each) follow the planned LDS.
  const int64_t copyBarriersAt = (out.ldsBytes + 7) / 8 * 8;
  if (copyGroupSlots && copyBarriersAt + 8 * copyGroupSlots > target.ldsBytesPerWorkgroup) {
    tensorCopies.clear();  // no room for them: cp.async alone
    tensorMaps.clear();
    copyGroupSlots = 0;
  }
  if (copyGroupSlots)
    out.ldsBytes = copyBarriersAt + 8 * copyGroupSlots;
  std::string params, views;
  llvm::raw_string_ostream ps(params), vs(views);
  for (BlockArgument arg : f.getArguments()) {
    std::string n = "arg" + std::to_string(arg.getArgNumber());
    // The DSL's argument names, when they are C identifiers that cannot
    // collide with the emitter's own (v12, i3, bid0, t_..., tl_...).
    if (auto nm = f.getArgAttrOfType<StringAttr>(arg.getArgNumber(), tile::attr::kArgName)) {
      static const llvm::Regex ident("^[A-Za-z][A-Za-z0-9_]*$"), generated("^((v|i|b|bid|arg)[0-9]+|t_.*|tl_.*|tl)$");
      if (ident.match(nm.getValue()) && !generated.match(nm.getValue()))
        n = nm.str();
    }
    names[arg] = n;
    if (!params.empty())
      ps << ", ";
    if (auto mt = dyn_cast<MemRefType>(arg.getType())) {
      FailureOr<std::string> ct = cType(f, mt.getElementType());
      if (failed(ct))
        return failure();
      bool isConst = !written.count(arg);
      ps << (isConst ? "const " : "") << *ct << " *" << n;
      out.paramTypes.push_back((isConst ? "const " : "") + *ct + " *");
      for (int64_t d = 0; d < mt.getRank(); ++d) {
        ps << ", int " << n << "_d" << d;
        out.paramTypes.push_back("int");
      }
      if (auto m = tensorMaps.find(arg.getArgNumber()); m != tensorMaps.end()) {
        ps << ", TL_TMA_MAP " << n << "_tma";
        vs << "  const auto " << n << "_tmap = TL_TMA_REF(" << n << "_tma, " << out.name << "_param_"
           << out.paramTypes.size() << ");\n";
        out.paramTypes.push_back("tl::hw::tma_map");
        out.tensorMaps.push_back(m->second);
      }
      vs << "  const tl::Global<" << *ct << ", " << llvm::format_hex(target.bufferRsrcFlags, 10)
         << "u> " << n << "_g(" << n << ", " << n << "_d0, "
         << (mt.getRank() > 1 ? n + "_d1" : std::string("1")) << ");\n";
    } else if (arg.getType().isF32()) {
      ps << "float " << n;
      out.paramTypes.push_back("float");
    } else if (arg.getType().isIndex() || arg.getType().isInteger(32)) {
      ps << "int " << n;
      out.paramTypes.push_back("int");
    } else {
      return f.emitError() << "kernel argument type " << arg.getType()
                           << " is not supported by the HIP emitter yet";
    }
  }
  if (failed(emitBlock(f.getBody().front())))
    return failure();

  const bool elementwiseMath =
      f.walk([](Operation *op) {
         return isa<tile::MapOp, tile::ReduceOp, tile::MaskOp, tile::IotaOp, tile::ScatterOp>(op)
                    ? WalkResult::interrupt()
                    : WalkResult::advance();
       }).wasInterrupted();
  if (!elementwiseMath)
    out.jitOptions = {"-O2", "-fno-slp-vectorize"};
  // Where the vector ALU reads and rescales accumulators inside the loop that
  // accumulates them (attention's softmax: S scaled, masked, exponentiated;
  // O rescaled every key step), accumulators in AGPRs cost two
  // v_accvgpr moves per value per step. On targets with AGPRs the kernel then
  // asks for an occupancy of 2 waves per SIMD, which caps its registers at the
  // 256 arch VGPRs, where clang selects the MFMAs' VGPR form. A kernel that
  // LDS keeps at one wave still gets the VGPR form (clang's "failed to meet
  // occupancy target" warning is expected then, and silenced for this kernel).
  const bool vgprAccumulators =
      options.vgprAccumulators && target.hasAgprs && f.walk([](scf::ForOp loop) {
                           bool gemm = false, valu = false;
                           loop.getBody()->walk([&](Operation *op) {
                             gemm |= isa<tile::GemmOp>(op);
                             valu |= isa<tile::MapOp, tile::ReduceOp>(op);
                           });
                           return gemm && valu ? WalkResult::interrupt() : WalkResult::advance();
                         }).wasInterrupted();
  // An instruction newer than the compiler's default PTX ISA version (8.0)
  // raises the kernel's: clang then writes that .version for ptxas.
  if (ptxVersion > 0)
    out.jitOptions.push_back("--cuda-feature=+ptx" + std::to_string(ptxVersion));

  std::string src;
  llvm::raw_string_ostream ss(src);
  ss << "// Generated by tilec for " << target.arch << " (" << target.marketing << "): "
     << out.numWaves << " waves of " << target.waveSize << " lanes, " << out.ldsBytes
     << " bytes of LDS.\n";
  if (!elementwiseMath)
    ss << "// Compiled with -O2 -fno-slp-vectorize (no elementwise register arithmetic to vectorize).\n";
  if (ptxVersion > 0)
    ss << "// Compiled for PTX ISA " << ptxVersion / 10 << "." << ptxVersion % 10 << " (its matrix instructions).\n";
  ss << "#include \"tilec_prelude.h\"\n\n";
  if (vgprAccumulators)
    ss << "// Accumulators in arch VGPRs (the vector ALU rescales them in the loop): occupancy 2 requested.\n"
          "#pragma clang diagnostic push\n#pragma clang diagnostic ignored \"-Wpass-failed\"\n";
  ss << "extern \"C\" __global__ TL_LAUNCH_BOUNDS(" << threads << ")"
     << (vgprAccumulators ? " TL_VGPR_ACCUMULATORS" : "") << " void " << out.name << "(" << params << ") {\n";
  if (vgprAccumulators)
    ss << "#pragma clang diagnostic pop\n";
  if (out.ldsBytes > 0)
    ss << "  TL_LDS(tl_lds, " << out.ldsBytes << ");\n";
  if (copyGroupSlots)
    ss << "  TL_COPY_GROUPS(tl_copies, " << copyGroupSlots << ", " << copyBarriersAt
       << ");  // tensor copies complete on mbarriers\n";
  ss << views << body << "}\n";
  out.source = std::move(src);
  out.ldsTiles = std::move(ldsTiles);
  out.vgprAccumulators = vgprAccumulators;
  return out;
}

} // namespace hip

FailureOr<EmittedKernel> emitHIP(func::FuncOp kernel, const TargetInfo &target, const EmitOptions &options) {
  return hip::Emitter(kernel, target, options).run();
}

} // namespace tilec
