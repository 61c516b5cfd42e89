// The HIP emitter's operations: each tile, memref and scf op becomes one call
// into the device prelude (its tile primitives) or a line of C++; index
// arithmetic and tile.map's element functions are in EmitHIPExprs.cpp.
#include "Emit/HIPEmitter.h"

#include "Dialect/Tile/TileContract.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace tilec::hip {

static std::string reduceOp(tile::ReduceKind k) {
  switch (k) {
  case tile::ReduceKind::sum: return "[](float x, float y) { return x + y; }";
  case tile::ReduceKind::max: return "[](float x, float y) { return __builtin_fmaxf(x, y); }";
  case tile::ReduceKind::min: return "[](float x, float y) { return __builtin_fminf(x, y); }";
  }
  return "";
}

/// The identity of a reduction (what replicas and lanes past a tile's edge
/// contribute).
static std::string reduceInit(tile::ReduceKind k) {
  switch (k) {
  case tile::ReduceKind::sum: return "0.0f";
  case tile::ReduceKind::max: return "(-__builtin_inff())";
  case tile::ReduceKind::min: return "__builtin_inff()";
  }
  return "";
}

/// The staged loads (register prefetches) of a loop's body and the body's
/// arith ops that compute their indices, in body order; false when a staged
/// load lies in a nested region or its tile is allocated in the loop, or an
/// index is not affine in the induction variable (the loop is then not
/// split).
static bool stagedLoadSlice(scf::ForOp loop, SmallVectorImpl<tile::LoadOp> &loads,
                            SmallVectorImpl<Operation *> &slice) {
  Block &body = *loop.getBody();
  bool ok = true;
  loop.walk([&](tile::LoadOp l) {
    auto t = cast<tile::TileType>(l.getDest().getType());
    auto dst = allocOf(l.getDest());
    if (t.isLds() || !isStaging(l.getDest()))
      return;
    ok &= l->getBlock() == &body && !loop->isAncestor(dst);
    loads.push_back(l);
  });
  llvm::DenseSet<Operation *> in;
  SmallVector<Value> work;
  for (tile::LoadOp l : loads)
    work.append(l.getIndices().begin(), l.getIndices().end());
  while (ok && !work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def || !loop->isAncestor(def) || in.contains(def))
      continue;  // the induction variable, or a value of the enclosing code
    // Affine in the induction variable (sums, differences, multiples by
    // constants): each window's inside test is then a set of linear
    // inequalities in it, so the iterations that pass form one interval.
    auto constant = [](Value x) { return getConstantIntValue(x).has_value(); };
    ok = def->getBlock() == &body &&
         (isa<arith::ConstantOp, arith::AddIOp, arith::SubIOp, arith::IndexCastOp>(def) ||
          (isa<arith::MulIOp>(def) && (constant(def->getOperand(0)) || constant(def->getOperand(1)))));
    in.insert(def);
    work.append(def->getOperands().begin(), def->getOperands().end());
  }
  for (Operation &op : body)
    if (in.contains(&op))
      slice.push_back(&op);
  return ok && !loads.empty();
}

LogicalResult Emitter::emitElementRead(Operation *op, StringRef type, Value source, ValueRange indices) {
  std::string n = fresh("v");
  line() << "const " << type << " " << n << " = " << name(source) << "_g.load(" << name(indices[0]) << ", "
         << (indices.size() > 1 ? name(indices[1]) : "0") << ");\n";
  names[op->getResult(0)] = n;
  return success();
}

LogicalResult Emitter::emitOp(Operation &op) {
  if (isa<arith::ArithDialect>(op.getDialect()))
    return emitArith(op);
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](memref::DimOp d) -> LogicalResult {
        std::optional<int64_t> idx = d.getConstantIndex();
        if (!idx)
          return d.emitOpError() << "needs a constant dimension index";
        names[d] = name(d.getSource()) + "_d" + std::to_string(*idx);
        return success();
      })
      .Case([&](tile::LoadIndexOp l) { return emitElementRead(l, "int", l.getSource(), l.getIndices()); })
      .Case([&](tile::LoadScalarOp l) { return emitElementRead(l, "float", l.getSource(), l.getIndices()); })
      .Case([&](tile::WindowOp w) {
        std::string n = fresh("w");
        bool two = w.getOrigin().size() > 1;
        line() << "const auto " << n << "_g = " << name(w.getSource()) << "_g.window(" << name(w.getOrigin()[0])
               << ", " << (two ? name(w.getOrigin()[1]) : "0") << ", " << name(w.getSizes()[0]) << ", "
               << (two ? name(w.getSizes()[1]) : "1") << ");\n";
        line() << "const int " << n << "_d0 = " << n << "_g.rows, " << n << "_d1 = " << n << "_g.cols;\n";
        names[w] = n;
        return success();
      })
      .Case([&](tile::MaskOp m) {
        int64_t window = m.getWindow() ? *m.getWindow() : 0;
        line() << "tl::mask<" << (m.getCausal() ? "true" : "false") << ", " << window << ">("
               << name(m.getTile()) << ", " << name(m.getRow()) << ", " << name(m.getCol()) << ", "
               << name(m.getColEnd()) << ");\n";
        return success();
      })
      .Case([&](tile::IotaOp io) {
        line() << "tl::iota<" << io.getAxis() << ">(" << name(io.getDest()) << ", "
               << (io.getOffset() ? name(io.getOffset()) : std::string("0")) << ");\n";
        return success();
      })
      .Case([&](tile::BlockIdOp b) {
        std::string n = fresh("bid");
        line() << "const int " << n << " = tl::block_id(" << b.getDim() << ");\n";
        names[b] = n;
        return success();
      })
      .Case([&](tile::AllocOp a) -> LogicalResult {
        tile::TileType t = a.getType();
        std::string n = a.getName() ? a.getName()->str() : fresh("t");
        for (char &c : n)
          if (!isalnum(static_cast<unsigned char>(c)))
            c = '_';
        n = "t_" + n;
        names[a] = n;
        if (t.isLds()) {
          FailureOr<std::string> ct = cType(a, t.getElementType());
          tile::LdsPlacementAttr p = a.getLdsAttr();
          if (failed(ct))
            return failure();
          if (!p)
            return a.emitOpError() << "LDS tile '" << a.displayName()
                                   << "' is not placed; run tilec-allocate-lds first";
          // tl::Lds<T, rows, cols, row stride[, vec, per phase, max phase[, write, read[, col block]]]>
          std::string swizzle;
          const AccessWidths w = accessOf(a);
          if (ArrayRef<int64_t> sw = p.getSwizzle(); !sw.empty())
            swizzle = llvm::formatv(", {0}, {1}, {2}", sw[0], sw[1], sw[2]).str();
          if (w.write > 1 || w.read > 1 || p.getColBlock() > 0)
            swizzle = (swizzle.empty() ? std::string(", 1, 1, 1") : swizzle) +
                      llvm::formatv(", {0}, {1}", w.write, w.read).str();
          if (p.getColBlock() > 0)
            swizzle += llvm::formatv(", {0}", p.getColBlock()).str();
          ldsTiles.push_back(ldsTileReport(a, w.write, w.read));
          line() << "const tl::Lds<" << *ct << ", " << t.rows() << ", " << t.cols() << ", " << p.getRowStride()
                 << swizzle << "> " << n << "{(" << *ct << " *)(tl_lds + " << p.getOffset() << ")};  // "
                 << a.displayName() << "\n";
          return success();
        }
        if (isa_and_nonnull<tile::StagingLayoutAttr>(a.getLayoutAttr())) {
          FailureOr<std::string> ct = cType(a, t.getElementType());
          if (failed(ct))
            return failure();
          const AccessWidths w = accessOf(a);
          const int64_t run = w.load;
          const bool realign = w.realign;
          // Committed transposed: blocks of as many rows as the LDS tile's writes are wide.
          int64_t block = 1;
          for (Operation *u : a->getUsers())
            if (auto c = dyn_cast<tile::CopyOp>(u); c && c.getTranspose())
              block = accessOf(c.getDest()).write;
          line() << "tl::Staging<" << *ct << ", " << t.rows() << ", " << t.cols() << ", " << threads
                 << (run > 1 || block > 1 || realign ? ", " + std::to_string(run) : std::string())
                 << (block > 1 || realign ? ", " + std::to_string(block) : std::string())
                 << (realign ? ", true" : "") << "> " << n << ";  // "
                 << a.displayName() << "\n";
          return success();
        }
        FailureOr<std::string> ty = regTileType(a);
        if (failed(ty))
          return failure();
        line() << *ty << " " << n << ";  // " << a.displayName() << "\n";
        return success();
      })
      .Case([&](tile::FillOp fl) {
        auto t = cast<tile::TileType>(fl.getDest().getType());
        std::string v = floatLiteral(fl.getValue().convertToDouble());
        if (gemmOverwriting(fl))
          return success();  // the gemm after it writes C whole
        if (t.isLds())
          line() << "tl::fill_lds<" << threads << ">(" << name(fl.getDest()) << ", tl::from_f32<"
                 << *cType(fl, t.getElementType()) << ">(" << v << "));\n";
        else
          line() << "tl::fill(" << name(fl.getDest()) << ", " << v << ");\n";
        return success();
      })
      .Case([&](tile::LoadOp l) -> LogicalResult {
        std::string c = l.getIndices().size() > 1 ? name(l.getIndices()[1]) : "0";
        if (!cast<tile::TileType>(l.getDest().getType()).isLds()) {
          if (layoutOf<tile::BlockedLayoutAttr>(l.getDest())) {
            // Each lane loads the runs it holds, one global access per run.
            line() << "tl::load_tile(" << name(l.getDest()) << ", " << name(l.getSource()) << "_g, "
                   << name(l.getIndices()[0]) << ", " << c << ");\n";
            return success();
          }
          if (layoutOf<tile::MatrixLayoutAttr>(l.getDest())) {
            // Each lane loads the elements (or rows) it holds.
            line() << "tl::load_acc(" << name(l.getDest()) << ", " << name(l.getSource()) << "_g, "
                   << name(l.getIndices()[0]) << ", " << c << ");\n";
            return success();
          }
          if (!isStaging(l.getDest()))
            return l.emitOpError() << "register tile has no layout; run tilec-infer-layouts first";
          // AMD, in a loop: the prefetch loads stay where they are issued,
          // ahead of the matrix work that hides their latency, unless a
          // gemm's schedule interleaves them with its matrix instructions.
          bool pinned = false;
          if (auto loop = l->getParentOfType<scf::ForOp>(); loop && target.vendor == Vendor::AMD) {
            pinned = true;
            loop.walk([&](tile::GemmOp g) { pinned &= !g->hasAttr(pattr::kInterleaveVmem); });
          }
          const bool inside = loadsInside.contains(l);
          line() << (inside ? (pinned ? "tl::load_staging<true, true>(" : "tl::load_staging<false, true>(")
                     : pinned ? "tl::load_staging<true>("
                              : "tl::load_staging(")
                 << name(l.getDest()) << ", " << name(l.getSource()) << "_g, " << name(l.getIndices()[0]) << ", "
                 << c << ");\n";
          return success();
        }
        const AccessWidths w = accessOf(l.getDest());
        const int64_t run = w.load;
        const bool realign = w.realign;
        if (auto copy = tensorCopies.find(l); copy != tensorCopies.end()) {
          line() << "tl::load_tile_tma<" << threads << ", " << run << ", " << copy->second.box.boxCols << ">("
                 << name(l.getDest()) << ", " << name(l.getSource()) << "_g, "
                 << name(f.getArgument(copy->second.arg)) << "_tmap, " << name(l.getIndices()[0]) << ", " << c
                 << copyGroupsArg() << ");\n";
          return success();
        }
        const bool async = l->hasAttr(tile::attr::kAsync);
        line() << (async ? "tl::load_tile_async<"
                   : l.getTranspose()              ? "tl::load_tile_transposed<"
                                                   : "tl::load_tile<")
               << threads << (run > 1 || realign ? ", " + std::to_string(run) : std::string())
               << (realign ? ", true" : "") << ">("
               << name(l.getDest()) << ", "
               << name(l.getSource()) << "_g, " << name(l.getIndices()[0]) << ", " << c
               << (async ? copyGroupsArg() : std::string()) << ");\n";
        return success();
      })
      .Case([&](tile::GatherOp g) -> LogicalResult {
        if (!cast<tile::TileType>(g.getDest().getType()).isLds())
          return g.emitOpError() << "gathers into register tiles are not supported by the HIP emitter yet";
        const int64_t run = accessOf(g.getDest()).load;
        line() << (g->hasAttr(tile::attr::kAsync) ? "tl::gather_tile_async<" : "tl::gather_tile<") << threads
               << (run > 1 ? ", " + std::to_string(run) : std::string()) << ">("
               << name(g.getDest()) << ", "
               << name(g.getSource()) << "_g, " << name(g.getIds()) << "_g, "
               << name(g.getIdsOffset()) << ", " << name(g.getCol())
               << (g->hasAttr(tile::attr::kAsync) ? copyGroupsArg() : std::string()) << ");\n";
        return success();
      })
      .Case([&](tile::ScatterOp s) {
        line() << "tl::scatter(" << name(s.getValue()) << ", " << name(s.getPositions()) << ", "
               << name(s.getDest()) << "_g);\n";
        return success();
      })
      .Case([&](tile::StoreOp s) -> LogicalResult {
        if (!cast<tile::TileType>(s.getValue().getType()).isReg())
          return s.emitOpError() << "stores from LDS tiles are not supported by the HIP emitter yet";
        std::string c = s.getIndices().size() > 1 ? name(s.getIndices()[1]) : "0";
        line() << "tl::store_tile(" << name(s.getValue()) << ", " << name(s.getDest()) << "_g, "
               << name(s.getIndices()[0]) << ", " << c << ");\n";
        return success();
      })
      .Case([&](tile::CopyOp c) -> LogicalResult {
        auto src = cast<tile::TileType>(c.getSource().getType());
        if (!src.isReg()) {
          // LDS -> an accumulator-layout register tile: each lane reads the
          // elements it holds (e.g. rows gathered into LDS).
          const bool dstAcc = layoutOf<tile::MatrixLayoutAttr>(c.getDest()) &&
                              cast<tile::TileType>(c.getDest().getType()).getRank() == 2;
          if (c.getTranspose() || (!layoutOf<tile::BlockedLayoutAttr>(c.getDest()) && !dstAcc))
            return c.emitOpError() << "copies from LDS to registers need a register tile in an accumulator "
                                      "or blocked layout, untransposed";
          line() << "tl::copy_from_lds(" << name(c.getDest()) << ", " << name(c.getSource()) << ");\n";
          return success();
        }
        auto dstType = cast<tile::TileType>(c.getDest().getType());
        if (dstType.isReg()) {
          // Register to register (same layout): a conversion of element type.
          FailureOr<std::string> ct = cType(c, dstType.getElementType());
          if (failed(ct))
            return failure();
          line() << "tl::map(" << name(c.getDest()) << ", " << name(c.getSource())
                 << ", [](float x) { return tl::round_to<" << *ct << ">(x); });\n";
          return success();
        }
        if (isStaging(c.getSource())) {
          line() << (c.getTranspose() ? "tl::commit_transposed(" : "tl::commit(") << name(c.getDest()) << ", "
                 << name(c.getSource()) << ");\n";
          return success();
        }
        if (c.getTranspose()) {
          line() << "tl::copy_transposed(" << name(c.getDest()) << ", " << name(c.getSource()) << ");\n";
          return success();
        }
        line() << "tl::copy(" << name(c.getDest()) << ", " << name(c.getSource()) << ");\n";
        return success();
      })
      .Case([&](tile::GemmOp g) -> LogicalResult {
        tile::MatrixLayoutAttr layout = g.getLayoutAttr();
        if (!layout)
          return g.emitOpError() << "has no matrix instruction; run the tilec pipeline first";
        FailureOr<std::string> atom = atomType(g, layout.getInstr());
        if (failed(atom))
          return failure();
        auto a = cast<tile::TileType>(g.getA().getType());
        auto c = cast<tile::TileType>(g.getC().getType());
        auto zeroFill = dyn_cast_or_null<tile::FillOp>(g->getPrevNode());
        const bool overwrite = zeroFill && gemmOverwriting(zeroFill) == g;
        line() << "// " << name(g.getC()) << "[" << c.rows() << "," << c.cols() << "] " << (overwrite ? "=" : "+=") << " "
               << name(g.getA()) << "[" << a.rows() << "," << a.cols() << "] @ " << name(g.getB())
               << (g.getTransposeB() ? "^T" : "") << " (" << layout.getInstr() << ")\n";
        std::string sched;
        auto vmem = g->getAttrOfType<IntegerAttr>(pattr::kInterleaveVmem);
        bool setprio = g->hasAttr(pattr::kSetprio);
        if (vmem || setprio) {
          std::string flags = vmem && setprio ? "tl::sched_interleave | tl::sched_setprio"
                              : vmem          ? "tl::sched_interleave"
                                              : "tl::sched_setprio";
          sched = ", tl::Schedule<" + flags + (vmem ? ", " + std::to_string(vmem.getInt()) : "") + ">";
        }
        // An A in registers (tilec-infer-layouts kept it there: its
        // accumulator layout is the instruction's operand layout).
        // A warpgroup gemm left running only issues here (its loop emits
        // the waits).
        const char *fn = a.isReg()                                   ? "tl::gemm_acc_a<"
                         : g->hasAttr(pattr::kMatrixGroupsInFlight) ? "tl::gemm_issue<"
                         : overwrite                                  ? "tl::gemm_overwrite<"
                                                                      : "tl::gemm<";
        line() << fn << *atom << ", " << (g.getTransposeB() ? "true" : "false") << sched << ">("
               << name(g.getC()) << ", " << name(g.getA()) << ", " << name(g.getB()) << ");\n";
        return success();
      })
      .Case([&](tile::MapOp m) { return emitMap(m); })
      .Case([&](tile::ReduceOp r) -> LogicalResult {
        std::string scratch = "nullptr";
        if (auto off = r->getAttrOfType<IntegerAttr>(pattr::kScratchOffset))
          scratch = "(float *)(tl_lds + " + std::to_string(off.getInt()) + ")";
        if (layoutOf<tile::BlockedLayoutAttr>(r.getSource())) {
          auto d = cast<tile::TileType>(r.getDest().getType());
          if (r.getAxis() == 0 && d.getRank() != 2)
            return r.emitOpError() << "column reductions of a blocked tile go into a [1, N] tile, got " << d;
          line() << (r.getAxis() == 1 ? "tl::reduce_rows(" : "tl::reduce_cols(") << name(r.getDest()) << ", "
                 << name(r.getSource()) << ", " << reduceOp(r.getKind()) << ", " << reduceInit(r.getKind()) << ", "
                 << (r.getAccumulate() ? "true" : "false") << ", " << scratch << ");\n";
          return success();
        }
        if (r.getAxis() != 1)
          return r.emitOpError() << "column reductions are not supported by the HIP emitter yet";
        line() << "tl::reduce_rows(" << name(r.getDest()) << ", " << name(r.getSource()) << ", "
               << reduceOp(r.getKind()) << ", " << (r.getAccumulate() ? "true" : "false") << ", "
               << scratch << ");\n";
        return success();
      })
      .Case([&](tile::ViewOp v) -> LogicalResult {
        auto alloc = v.getSource().getDefiningOp<tile::AllocOp>();
        tile::LdsPlacementAttr p = alloc ? alloc.getLdsAttr() : nullptr;
        if (!p || p.getBufferBytes() == 0)
          return v.emitOpError() << "views a tile without placed buffers; run tilec-allocate-lds first";
        int64_t eb = std::max<int64_t>(1, alloc.getType().getElementType().getIntOrFloatBitWidth() / 8);
        std::string n = name(v.getSource()) + "_" + fresh("b");
        line() << "const auto " << n << " = " << name(v.getSource()) << ".buffer(" << name(v.getIndex()) << ", "
               << p.getBufferBytes() / eb << ");\n";
        names[v] = n;
        return success();
      })
      .Case([&](tile::BarrierOp bar) {
        if (auto g = bar->getAttrOfType<IntegerAttr>(tile::attr::kWaveGroup)) {
          line() << "if (tl::thread_id() / " << threads / 2 << " == " << g.getInt()
                 << ") tl::barrier();  // ping-pong: wave group " << g.getInt() << " of 2 only\n";
          return success();
        }
        line() << "tl::barrier();\n";
        return success();
      })
      .Case([&](scf::ForOp loop) -> LogicalResult {
        if (loop.getNumResults())
          return loop.emitOpError() << "loops with results are not supported by the HIP emitter yet";
        std::string iv = fresh("i");
        names[loop.getInductionVar()] = iv;
        auto pending = loop->getAttrOfType<IntegerAttr>(tile::attr::kAsyncPending);
        if (auto st = loop->getAttrOfType<IntegerAttr>(tile::attr::kNumStages); st && loop->hasAttr("tile.pipelined"))
          line() << "// software-pipelined: " << st.getInt() << " LDS buffers per tile, "
                 << (pending ? "filled by asynchronous copies; at most " + std::to_string(pending.getInt()) +
                                   " copy groups still in flight at the top of an iteration"
                             : std::string("the next tile prefetched into registers"))
                 << "\n";
        if (auto sc = loop->getAttrOfType<DictionaryAttr>(tile::attr::kSchedule)) {
          std::string on;
          for (NamedAttribute e : sc)
            if (auto bv = dyn_cast<BoolAttr>(e.getValue()); bv && bv.getValue())
              on += (on.empty() ? "" : ", ") + e.getName().str();
          if (!on.empty())
            line() << "// wavefront schedule: " << on << "\n";
        }
        // On AMD, a loop over a tile's S LDS buffers filled from registers,
        // counting up from a constant >= 0: the body is emitted S times per
        // iteration (the later copies under a test of the trip count), so
        // that clang sees each copy's buffer index as a constant (the
        // counter is a multiple of S there) and folds the buffers' offsets
        // into the LDS accesses' immediates.
        auto stages = loop->getAttrOfType<IntegerAttr>(tile::attr::kNumStages);
        auto lower = getConstantIntValue(loop.getLowerBound());
        const int unroll = stages && stages.getInt() > 1 && loop->hasAttr("tile.pipelined") && !pending &&
                                   target.vendor == Vendor::AMD && lower && *lower >= 0
                               ? (int)stages.getInt()
                               : 1;
        const std::string ub = name(loop.getUpperBound()), step = name(loop.getStep());
        if (unroll == 1) {
          line() << "for (int " << iv << " = " << name(loop.getLowerBound()) << "; " << iv << " < " << ub << "; "
                 << iv << " += " << step << ") {\n";
        } else {
          const std::string base = fresh("u");
          line() << "// unrolled by its " << unroll << " LDS buffers\n";
          // The counter's steps as constants where the loop's step is one.
          auto constStep = getConstantIntValue(loop.getStep());
          auto times = [&](int n) { return constStep ? std::to_string(n * *constStep) : std::to_string(n) + " * " + step; };
          SmallVector<tile::LoadOp> staged;
          SmallVector<Operation *> slice;
          // Emits the loop's S copies per iteration from `base` on; Interior:
          // every copy runs, its staged loads untested.
          auto emitCopies = [&](bool interior) -> LogicalResult {
            ++indent;
            line() << "__builtin_assume(" << base << " >= 0);\n";
            if (interior)
              for (tile::LoadOp l : staged)
                loadsInside.insert(l);
            for (int u = 0; u < unroll; ++u) {
              iv = fresh("i");
              names[loop.getInductionVar()] = iv;
              line() << "const int " << iv << " = " << (u ? base + " + " + times(u) : base) << ";\n";
              line() << (u && !interior ? "if (" + iv + " < " + ub + ") {\n" : std::string("{\n"));
              ++indent;
              if (failed(emitBlock(*loop.getBody())))
                return failure();
              --indent;
              line() << "}\n";
            }
            loadsInside.clear();
            --indent;
            line() << "}\n";
            return success();
          };
          // The split is for loops of one gemm (GEMM, MoE experts): in a loop
          // of more (attention's S and P V, with its softmax between them)
          // a third copy of the body costs registers the wave32 targets do
          // not have (gfx1151 spills). It is a count, not a register budget:
          // MoE's gate/up loop (two gemms) holds fewer registers than the
          // GEMM's and is not split either (docs/perf/notes.md, "Which AMD
          // loops take the interior/rest split").
          int gemms = 0;
          loop.getBody()->walk([&](tile::GemmOp) { ++gemms; });
          if (gemms != 1 || !stagedLoadSlice(loop, staged, slice)) {
            line() << "for (int " << base << " = " << name(loop.getLowerBound()) << "; " << base << " < " << ub << "; "
                   << base << " += " << times(unroll) << ") {\n";
            return emitCopies(false);
          }
          // A loop with staged loads runs in two parts. The interior loop
          // takes the iterations from the first whose copies all run and
          // whose staged loads all read windows inside their tensors; there
          // the loads skip their bounds tests (tl::load_staging's Inside).
          // The rest (the last tiles, whose prefetches reach past the end,
          // and ragged edges) runs the tested body after it, one copy per
          // iteration (a few iterations: the code stays small). The main
          // loop holds no test and no branch around the tested loads.
          line() << "int " << base << " = " << name(loop.getLowerBound()) << ";\n";
          // Whether the iteration from `first` on is interior: the index
          // arithmetic of its staged loads, evaluated for each copy.
          const std::string first = fresh("u"), interior = first + "_interior", end = first + "_end",
                            stride = first + "_stride";
          line() << "const auto " << interior << " = [&](int " << first << ") {\n";
          ++indent;
          std::vector<std::string> tests;
          for (int u = 0; u < unroll; ++u) {
            names[loop.getInductionVar()] = u ? "(" + first + " + " + times(u) + ")" : first;
            for (Operation *op : slice)
              if (failed(emitArith(*op)))
                return failure();
            for (tile::LoadOp l : staged)
              tests.push_back("tl::staging_inside(" + name(l.getDest()) + ", " + name(l.getSource()) + "_g, " +
                              name(l.getIndices()[0]) + ", " +
                              (l.getIndices().size() > 1 ? name(l.getIndices()[1]) : "0") + ")");
          }
          for (size_t t = 0; t < tests.size(); ++t)
            line() << (t ? "     & " : "return ") << tests[t] << (t + 1 < tests.size() ? "\n" : ";\n");
          --indent;
          line() << "};\n";
          // The interior iterations are one interval (the indices are
          // affine), so a binary search from the first finds where it ends,
          // once, before the loops: the interior loop is counted and tests
          // nothing per iteration.
          line() << "const int " << stride << " = " << times(unroll) << ";\n";
          line() << "int " << end << " = " << base << ";\n";
          line() << "if (" << base << " + " << times(unroll - 1) << " < " << ub << " && " << interior << "(" << base
                 << ")) {\n";
          ++indent;
          line() << "int lo = 0, hi = (" << ub << " - " << base << " - " << times(unroll - 1) << " - 1) / " << stride
                 << ";  // the last interior iteration lies in [lo, hi]\n";
          line() << "while (lo < hi) {\n";
          line() << "  const int mid = lo + (hi - lo + 1) / 2;\n";
          line() << "  if (" << interior << "(" << base << " + mid * " << stride << "))\n";
          line() << "    lo = mid;\n";
          line() << "  else\n";
          line() << "    hi = mid - 1;\n";
          line() << "}\n";
          line() << end << " = " << base << " + (lo + 1) * " << stride << ";\n";
          --indent;
          line() << "}\n";
          line() << "// interior: the staged loads' windows lie inside their tensors, no bounds tests\n";
          line() << "for (; " << base << " < " << end << "; " << base << " += " << stride << ") {\n";
          if (failed(emitCopies(true)))
            return failure();
          iv = fresh("i");
          names[loop.getInductionVar()] = iv;
          line() << "// the rest: bounds-tested loads, one copy per iteration\n";
          line() << "for (int " << iv << " = " << base << "; " << iv << " < " << ub << "; " << iv << " += " << step
                 << ") {\n";
          ++indent;
          if (failed(emitBlock(*loop.getBody())))
            return failure();
          --indent;
          line() << "}\n";
          return success();
        }
        ++indent;
        if (pending)  // this iteration's copies have landed once at most `pending` groups are in flight
          line() << "tl::async_wait<" << pending.getInt() << ">(" << copyGroups() << ");\n";
        LogicalResult r = emitBlock(*loop.getBody());
        SmallVector<std::pair<tile::GemmOp, int64_t>> running;  // gemms left running, and the groups they keep
        for (Operation &op : *loop.getBody())
          if (auto g = dyn_cast<tile::GemmOp>(op))
            if (auto n = g->getAttrOfType<IntegerAttr>(pattr::kMatrixGroupsInFlight))
              running.push_back({g, n.getInt()});
        for (auto [g, n] : running)
          line() << "tl::gemm_wait<" << n << ">(" << name(g.getC()) << ");  // at most " << n
                 << " group(s) of its matrix instructions still running\n";
        --indent;
        line() << "}\n";
        for (auto [g, n] : running)
          if (n > 0)
            line() << "tl::gemm_wait<0>(" << name(g.getC()) << ");\n";
        if (pending)  // copies issued for iterations past the end
          line() << "tl::async_wait<0>(" << copyGroups() << ");\n";
        return r;
      })
      .Case([&](scf::YieldOp) { return success(); })
      .Case([&](func::ReturnOp) { return success(); })
      .Default([&](Operation *o) {
        return o->emitOpError() << "is not supported by the HIP emitter yet";
      });
}

} // namespace tilec::hip
