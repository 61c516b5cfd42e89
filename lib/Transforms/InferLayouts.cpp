// tilec-infer-layouts: register layouts flow from the matrix instructions;
// the tiles they do not reach get a blocked layout. Where an op meets both
// kinds (a [1, N] bias broadcast onto an accumulator, an accumulator's column
// sums), its input is converted through LDS.
#include "Transforms/PassDetail.h"
#include "Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/bit.h"

namespace tilec {
#define GEN_PASS_DEF_TILECINFERLAYOUTS
#include "Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;

namespace {

struct InferLayouts : tilec::impl::TilecInferLayoutsBase<InferLayouts> {
  /// Tiles in a matrix instruction's accumulator layout (#tile.matrix): the
  /// accumulators of gemms, the tiles they reach, and row vectors of those
  /// (whose layout names the accumulator whose rows they follow).
  llvm::DenseMap<Value, tile::MatrixLayoutAttr> layouts;
  /// Tiles in a blocked layout (#tile.blocked): those no matrix instruction
  /// reaches. The layout does not depend on a tile's shape, so related tiles
  /// of any shape share it.
  llvm::DenseMap<Value, tile::BlockedLayoutAttr> blocked;
  std::vector<Value> blockedOrder;  // in the order they were assigned
  /// An input that `op` reads in another layout than the one it has: a map
  /// input that cannot take the map destination's layout (a [1, N] row or
  /// [M, 1] column broadcast onto an accumulator-layout tile, which no
  /// matrix-instruction layout holds, or a tile of the other kind of layout),
  /// or an accumulator-layout source of a reduction into a blocked tile.
  /// insertConversions reads `input` through LDS into a register tile of
  /// `shape` in the layout of `layoutOf`.
  struct Conversion {
    Operation *op;
    Value input, layoutOf;
    SmallVector<int64_t> shape;
  };
  std::vector<Conversion> conversions;  // in the order found
  llvm::DenseSet<std::pair<Operation *, Value>> converted;
  bool changed = false;
  bool failedFlag = false;

  void mixed(Operation *at, Value tile) {
    at->emitOpError() << "register tile '" << allocOf(tile).displayName()
                      << "' would need both a matrix-instruction layout and a blocked layout; conversions "
                         "between them are not supported yet (copy through an LDS tile)";
    failedFlag = true;
  }

  void assignBlocked(Operation *at, Value tile, tile::BlockedLayoutAttr l) {
    if (layouts.count(tile))
      return mixed(at, tile);
    auto it = blocked.find(tile);
    if (it == blocked.end()) {
      blocked[tile] = l;
      blockedOrder.push_back(tile);
      changed = true;
    } else if (it->second != l) {
      at->emitOpError() << "register tile '" << allocOf(tile).displayName() << "' would need two layouts ("
                        << it->second << " vs " << l << ")";
      failedFlag = true;
    }
  }

  void assign(Operation *at, Value tile, tile::MatrixLayoutAttr l) {
    if (blocked.count(tile))
      return mixed(at, tile);
    auto it = layouts.find(tile);
    if (it == layouts.end()) {
      layouts[tile] = l;
      changed = true;
    } else if (it->second != l) {
      at->emitOpError() << "register tile '" << allocOf(tile).displayName()
                        << "' would need two layouts (" << it->second.getInstr() << " vs " << l.getInstr()
                        << "); layout conversions are not supported yet";
      failedFlag = true;
    }
  }

  const TargetInfo *target = nullptr;

  /// The layout of a row vector of tiles laid out as `l`: it depends on the
  /// instruction, the wave grid and the row count only, so its parent shape is
  /// canonical (rows x the narrowest width the grid allows). Row vectors of S
  /// (BM x BN) and O (BM x D) in attention then share one layout. The rows of
  /// a warpgroup instruction's accumulator do not depend on its N: its row
  /// vectors name the narrowest one of its type.
  tile::MatrixLayoutAttr rowsOf(tile::MatrixLayoutAttr l) {
    const MatrixInstr *mi = target ? target->findInstr(l.getInstr()) : nullptr;
    llvm::StringRef instr = l.getInstr();
    if (mi && mi->waves > 1)
      for (const MatrixInstr *other : target->warpgroupInstrsFor(mi->aType))
        if (other->m == mi->m && other->n < mi->n) {
          mi = other;
          instr = other->name;
        }
    int64_t width = (mi ? mi->n : 1) * l.waveCols();
    return tile::MatrixLayoutAttr::get(l.getContext(), instr, l.getWaveGrid(), {l.getShape()[0], width});
  }

  /// Propagates between two tiles related by `op` (same shape or rows-of).
  void relate(Operation *op, Value x, Value y) {
    auto tx = cast<tile::TileType>(x.getType()), ty = cast<tile::TileType>(y.getType());
    if (!tx.isReg() || !ty.isReg())
      return;
    if (auto it = blocked.find(x); it != blocked.end())
      return assignBlocked(op, y, it->second);
    if (auto it = blocked.find(y); it != blocked.end())
      return assignBlocked(op, x, it->second);
    if (tx.getRank() == ty.getRank() && tx.getShape() != ty.getShape()) {
      // A [1, N] or [M, 1] tile broadcast over (or reduced from) an M x N
      // one: only blocked layouts hold those as plain tiles.
      if (layouts.count(x) || layouts.count(y)) {
        op->emitOpError() << "broadcasts or reduces between " << tx << " and " << ty
                          << " in a matrix-instruction layout; use a rank-1 row vector there";
        failedFlag = true;
      }
      return;
    }
    if (tx.getRank() == ty.getRank()) {
      if (layouts.count(x)) assign(op, y, layouts[x]);
      if (layouts.count(y)) assign(op, x, layouts[y]);
    } else {
      Value full = tx.getRank() == 2 ? x : y, rows = tx.getRank() == 2 ? y : x;
      if (layouts.count(full)) {
        assign(op, rows, rowsOf(layouts[full]));
      } else if (layouts.count(rows)) {
        tile::MatrixLayoutAttr l = layouts[rows];
        assign(op, full, tile::MatrixLayoutAttr::get(l.getContext(), l.getInstr(), l.getWaveGrid(),
                                                     cast<tile::TileType>(full.getType()).getShape()));
      }
    }
  }

  /// A register tile that only moves data between global memory and LDS
  /// (loaded from a tensor, copied into LDS or stored): each thread holds
  /// elements t, t + threads, ... in row-major order.
  static bool isStaging(tile::AllocOp a) {
    return !a->use_empty() && llvm::all_of(a->getUsers(), [&](Operation *u) {
      if (auto l = dyn_cast<tile::LoadOp>(u))
        return l.getDest() == a.getResult();
      if (auto c = dyn_cast<tile::CopyOp>(u))
        return c.getSource() == a.getResult() && cast<tile::TileType>(c.getDest().getType()).isLds();
      return isa<tile::StoreOp>(u);
    });
  }

  /// Whether input `in` of `m` is read through a conversion (see
  /// conversions): a rank-2 register tile that is a row or column broadcast
  /// onto an accumulator-layout destination, or whose layout is of the other
  /// kind than the destination's.
  bool needsConversion(tile::MapOp m, Value in) {
    Value d = m.getDest();
    auto dt = cast<tile::TileType>(d.getType()), it = cast<tile::TileType>(in.getType());
    if (in == d || !dt.isReg() || !it.isReg() || dt.getRank() != 2 || it.getRank() != 2)
      return false;
    const bool dAcc = layouts.count(d), dBlocked = blocked.count(d);
    if (dt.getShape() != it.getShape())
      return dAcc && ((it.rows() == 1 && it.cols() == dt.cols()) || (it.cols() == 1 && it.rows() == dt.rows()));
    return (dAcc && blocked.count(in)) || (dBlocked && layouts.count(in));
  }

  /// Spreads layouts over map/reduce/copy relations until nothing changes.
  void propagate(func::FuncOp f) {
    do {
      changed = false;
      f.walk([&](Operation *op) {
        if (auto m = dyn_cast<tile::MapOp>(op)) {
          for (Value in : m.getInputs()) {
            auto it = cast<tile::TileType>(in.getType());
            if (it.getRank() == 1 && m.getBroadcastCols() &&
                cast<tile::TileType>(m.getDest().getType()).getRank() == 2)
              continue; // column vectors get no accumulator layout
            if (converted.contains({op, in}))
              continue;
            if (needsConversion(m, in)) {
              auto dt = cast<tile::TileType>(m.getDest().getType());
              conversions.push_back({m, in, m.getDest(), SmallVector<int64_t>(dt.getShape())});
              converted.insert({op, in});
              continue;
            }
            relate(op, m.getDest(), in);
          }
        } else if (auto r = dyn_cast<tile::ReduceOp>(op)) {
          Value src = r.getSource(), dst = r.getDest();
          if (converted.contains({op, src}))
            return;
          if (layouts.count(src) && blocked.count(dst)) {
            // Accumulator tiles reduce along rows only: the source is read
            // into the blocked layout of the destination.
            auto st = cast<tile::TileType>(src.getType());
            conversions.push_back({r, src, dst, SmallVector<int64_t>(st.getShape())});
            converted.insert({op, src});
            return;
          }
          if (r.getAxis() == 1 || blocked.count(src) || blocked.count(dst))
            relate(op, src, dst);
        } else if (auto c = dyn_cast<tile::CopyOp>(op)) {
          relate(op, c.getSource(), c.getDest());
        } else if (auto s = dyn_cast<tile::ScatterOp>(op)) {
          relate(op, s.getValue(), s.getPositions());
        }
      });
    } while (changed && !failedFlag);
  }

  /// The accumulator layout of the target's first 16-bit instruction that
  /// tiles `t` over the waves (rows spread over them where it can).
  std::optional<tile::MatrixLayoutAttr> defaultLayout(tile::TileType t, int waves) {
    if (!target)
      return std::nullopt;
    for (ElemType e : {ElemType::BF16, ElemType::F16}) {
      std::vector<const MatrixInstr *> instrs = target->instrsFor(e);
      if (instrs.empty())
        continue;
      // Rows spread over the waves (wn = 1) when an instruction allows it, so
      // that row reductions stay inside a wave; else the GEMM tiling's grid.
      std::optional<MatrixTiling> tiling;
      for (const MatrixInstr *mi : instrs)
        if (!tiling && t.rows() % (int64_t(waves) * mi->m) == 0 && t.cols() % mi->n == 0)
          tiling = MatrixTiling{mi, waves, 1};
      if (!tiling)
        tiling = selectMatrixTiling(*target, e, t.rows(), t.cols(), instrs.front()->k, waves);
      if (!tiling)
        return std::nullopt;
      return tile::MatrixLayoutAttr::get(t.getContext(), tiling->instr->name, {tiling->wm, tiling->wn},
                                         t.getShape());
    }
    return std::nullopt;
  }

  /// Elements per global access of a tile.load or tile.store of `tile`: the
  /// widest run the tensor's divisibility allows (up to 16 bytes); 0 (no
  /// limit) when the op does not touch global memory through `tile` or the
  /// tile has one column.
  static int64_t globalRunOf(Operation *op, Value tile) {
    Value tensor;
    if (auto l = dyn_cast<tile::LoadOp>(op); l && l.getDest() == tile)
      tensor = l.getSource();
    else if (auto st = dyn_cast<tile::StoreOp>(op); st && st.getValue() == tile)
      tensor = st.getDest();
    auto t = cast<tile::TileType>(tile.getType());
    if (!tensor || t.cols() == 1)
      return 0;  // a tile of one column holds runs of one element whatever vec is
    ValueRange indices = isa<tile::LoadOp>(op) ? cast<tile::LoadOp>(op).getIndices() : cast<tile::StoreOp>(op).getIndices();
    int64_t elemBytes = std::max<int64_t>(1, cast<MemRefType>(tensor.getType()).getElementTypeBitWidth() / 8);
    return tilec::globalRunOf(tensor, indices, t, elemBytes);
  }

  /// The blocked layout of a component rooted at `t`: runs of `vec` elements
  /// (the widest every global access of the component allows), lanes along
  /// the row as far as the row reaches, the rest of the wave over rows, and
  /// waves over rows first (a row reduction then stays inside a wave), the
  /// remaining waves along the row.
  tile::BlockedLayoutAttr blockedLayout(tile::TileType t, int64_t vec, int64_t lanes, int64_t waves) {
    int64_t rows = t.rows(), cols = t.getRank() == 2 ? t.cols() : 1;
    vec = std::max<int64_t>(1, std::min(vec, int64_t(llvm::bit_floor(uint64_t(cols)))));
    int64_t tc = std::min<int64_t>(lanes, llvm::bit_floor(uint64_t(std::max<int64_t>(1, cols / vec))));
    int64_t tr = lanes / tc;
    int64_t wr = std::min<int64_t>(waves, llvm::bit_floor(uint64_t(std::max<int64_t>(1, rows / tr))));
    return tile::BlockedLayoutAttr::get(t.getContext(), vec, {tr, tc}, {wr, waves / wr});
  }

  /// Gives the register tiles no matrix instruction reaches a blocked
  /// layout, one connected component at a time, largest root first.
  void assignBlockedLayouts(func::FuncOp f) {
    const int64_t lanes = target ? target->waveSize : 64, waves = numWavesOf(f);
    for (bool assigned = true; assigned && !failedFlag;) {
      assigned = false;
      tile::AllocOp root;
      f.walk([&](tile::AllocOp a) {
        tile::TileType t = a.getType();
        if (!t.isReg() || layouts.count(a.getResult()) || blocked.count(a.getResult()) || isStaging(a))
          return;
        if (!root || t.getRank() > root.getType().getRank() ||
            (t.getRank() == root.getType().getRank() && t.getNumElements() > root.getType().getNumElements()))
          root = a;
      });
      if (!root)
        break;
      assigned = true;
      // Provisionally with runs of one element, to find the component.
      size_t first = blockedOrder.size(), firstConversion = conversions.size();
      assignBlocked(root, root.getResult(), blockedLayout(root.getType(), 1, lanes, waves));
      propagate(f);
      // Without global accesses, runs of 4: 16 bytes of f32 registers.
      int64_t vec = 0;
      for (size_t i = first; i < blockedOrder.size(); ++i)
        for (Operation *user : blockedOrder[i].getUsers())
          if (int64_t run = globalRunOf(user, blockedOrder[i]))
            vec = vec ? std::min(vec, run) : run;
      vec = vec ? vec : 4;
      // Where no access can move more than one element and every tile of the
      // component has the root's shape or holds one value per row, a matrix
      // instruction's accumulator layout that tiles the root is kept: it
      // gains nothing on memory access there, and it holds fewer row partials
      // per lane (moe_gate at 64 experts: no scratch on gfx1151, 180 bytes in
      // a blocked layout).
      bool plain = vec == 1;
      for (size_t i = first; plain && i < blockedOrder.size(); ++i) {
        auto t = cast<tile::TileType>(blockedOrder[i].getType());
        plain = t.getShape() == root.getType().getShape() || t.getRank() == 1;
      }
      if (std::optional<tile::MatrixLayoutAttr> acc = plain ? defaultLayout(root.getType(), int(waves)) : std::nullopt) {
        for (size_t i = first; i < blockedOrder.size(); ++i)
          blocked.erase(blockedOrder[i]);
        blockedOrder.resize(first);
        for (size_t i = firstConversion; i < conversions.size(); ++i)
          converted.erase({conversions[i].op, conversions[i].input});
        conversions.resize(firstConversion);
        layouts[root.getResult()] = *acc;
        propagate(f);
        continue;
      }
      tile::BlockedLayoutAttr l = blockedLayout(root.getType(), vec, lanes, waves);
      for (size_t i = first; i < blockedOrder.size(); ++i)
        blocked[blockedOrder[i]] = l;
    }
  }

  void runOnOperation() override {
    func::FuncOp f = getOperation();
    if (auto arch = f->getAttrOfType<StringAttr>(tile::attr::kTarget))
      target = lookupTarget(arch.getValue().str());
    f.walk([&](tile::GemmOp g) {
      tile::MatrixLayoutAttr l = g.getLayoutAttr();
      if (!l) {
        g.emitOpError() << "has no matrix instruction; run tilec-select-matrix-instr first";
        failedFlag = true;
        return;
      }
      assign(g, g.getC(), l);
    });
    propagate(f);
    // Tiles no matrix instruction reaches (elementwise and reduction work
    // on loaded data) take a blocked layout.
    if (!failedFlag)
      assignBlockedLayouts(f);

    f.walk([&](tile::AllocOp a) {
      tile::TileType t = a.getType();
      if (!t.isReg())
        return;
      if (auto bl = blocked.find(a.getResult()); bl != blocked.end()) {
        a.setLayoutAttr(bl->second);
        return;
      }
      auto it = layouts.find(a.getResult());
      if (it == layouts.end() && isStaging(a)) {
        a.setLayoutAttr(tile::StagingLayoutAttr::get(&getContext()));
        return;
      }
      if (it == layouts.end() && failedFlag)
        return; // one diagnostic
      if (it == layouts.end()) {
        a.emitOpError() << "register tile '" << a.displayName()
                        << "' gets no layout";
        failedFlag = true;
        return;
      }
      a.setLayoutAttr(it->second);
    });
    if (failedFlag)
      return signalPassFailure();
    insertConversions();
    convertRegisterOperands(f);
  }

  /// Reads each of `conversions` into a register tile of its shape and
  /// layout, right before the op: every lane writes the elements it holds
  /// into an LDS tile of the input's shape (f32, so that nothing is rounded),
  /// and reads back those the new layout puts on it, a one-row or one-column
  /// input broadcast over the other axis. The LDS tile is marked for the
  /// report; a remark says what the conversion costs.
  /// Ops that read one input in one layout share its LDS tile and its
  /// converted tile (each copies into them right before it reads).
  void insertConversions() {
    llvm::DenseMap<Operation *, Value> ldsOf;                                // input -> its LDS tile
    llvm::DenseMap<std::pair<Operation *, Attribute>, Value> convertedOf;    // (input, layout) -> register tile
    for (const Conversion &c : conversions) {
      tile::AllocOp source = allocOf(c.input), like = allocOf(c.layoutOf);
      auto it = cast<tile::TileType>(c.input.getType());
      auto wideType = tile::TileType::get(&getContext(), c.shape, Float32Type::get(&getContext()), tile::MemorySpace::reg);
      Attribute layout = like.getLayoutAttr();
      if (auto m = dyn_cast<tile::MatrixLayoutAttr>(layout))  // the matrix layout names its tile's shape
        layout = tile::MatrixLayoutAttr::get(&getContext(), m.getInstr(), m.getWaveGrid(), c.shape);
      OpBuilder ab(source);
      ab.setInsertionPointAfter(source);
      Value &lds = ldsOf[source.getOperation()];
      if (!lds) {
        auto alloc = ab.create<tile::AllocOp>(
            source.getLoc(), tile::TileType::get(&getContext(), it.getShape(), ab.getF32Type(), tile::MemorySpace::lds),
            ab.getStringAttr(source.displayName() + ".cvt"), Attribute(), nullptr, nullptr);
        alloc->setAttr(pattr::kLayoutConversion, ab.getUnitAttr());
        lds = alloc.getResult();
      }
      Value &wide = convertedOf[{source.getOperation(), layout}];
      if (!wide)
        wide = ab.create<tile::AllocOp>(source.getLoc(), wideType,
                                        ab.getStringAttr(source.displayName() + ".as_" + like.displayName()), layout,
                                        nullptr, nullptr)
                   .getResult();
      OpBuilder b(c.op);
      b.create<tile::CopyOp>(c.op->getLoc(), c.input, lds);
      b.create<tile::CopyOp>(c.op->getLoc(), lds, wide);
      c.op->replaceUsesOfWith(c.input, wide);
      const int64_t threads = int64_t(target ? target->waveSize : 64) * numWavesOf(c.op->getParentOfType<func::FuncOp>());
      c.op->emitRemark() << "'" << source.displayName() << "' " << shapeOf(it) << " (" << source.getLayoutAttr()
                         << ") is read in the layout of '" << like.displayName() << "' (" << layout << "), as a "
                         << shapeOf(wideType) << " tile, through "
                         << it.getNumElements() * 4 << " bytes of LDS: " << registersPerLane(wideType, layout, threads)
                         << " more registers per lane";
    }
  }

  /// The f32 registers per lane a register tile of type `t` takes in `layout`
  /// (a blocked layout's footprint may exceed the tile: lanes past its edge
  /// hold copies).
  static int64_t registersPerLane(tile::TileType t, Attribute layout, int64_t threads) {
    if (auto b = dyn_cast<tile::BlockedLayoutAttr>(layout)) {
      const int64_t rows = t.rows(), cols = t.getRank() == 2 ? t.cols() : 1;
      auto cdiv = [](int64_t x, int64_t y) { return (x + y - 1) / y; };
      return cdiv(rows, b.laneRows() * b.waveRows()) * cdiv(cols, b.laneCols() * b.waveCols() * b.getVec()) * b.getVec();
    }
    return (t.getNumElements() + threads - 1) / threads;
  }

  static std::string shapeOf(tile::TileType t) {
    std::string s = "[";
    for (int64_t d : t.getShape())
      s += (s.size() > 1 ? ", " : "") + std::to_string(d);
    return s + "]";
  }

  /// Whether gemm `g` reads its A operand `a` (a register tile) in place: the
  /// accumulator layout `a` has (of the gemm that produced it) holds, lane by
  /// lane, the A operand of `g`'s matrix instruction (accumulatorHoldsOperandA),
  /// and both split their rows alike over waves that each hold whole rows
  /// (wave grids [w, 1]), so every wave finds the rows it multiplies.
  bool readsAInPlace(tile::GemmOp g, Value a) {
    auto it = layouts.find(a);
    tile::MatrixLayoutAttr gl = g.getLayoutAttr();
    if (!target || it == layouts.end() || !gl)
      return false;
    tile::MatrixLayoutAttr l = it->second;
    const MatrixInstr *acc = target->findInstr(l.getInstr());
    const MatrixInstr *use = target->findInstr(gl.getInstr());
    auto t = cast<tile::TileType>(a.getType());
    return acc && use && accumulatorHoldsOperandA(*acc, *use) && l.getWaveGrid() == gl.getWaveGrid() &&
           gl.waveCols() == 1 && l.getShape() == t.getShape();
  }

  /// A gemm operand in registers holds the accumulator layout of the gemm
  /// that produced it. Where that is the operand layout of the matrix
  /// instruction (readsAInPlace: mma.sync's P of attention), the gemm reads it
  /// from registers; otherwise (docs/hardware.md sections 1-2) it is
  /// converted through LDS, by a copy into an LDS tile (of B's element type:
  /// the copy rounds an f32 accumulator) right before the gemm (the only
  /// place a conversion is needed). Gemms that read the same register tile
  /// (one loop split in two) share that LDS tile: each copies into it right
  /// before it reads it.
  void convertRegisterOperands(func::FuncOp f) {
    llvm::DenseMap<std::pair<Operation *, Type>, Value> converted;  // (register tile, LDS type) -> LDS tile
    auto inPlace = [&](tile::GemmOp g, Value a) { return readsAInPlace(g, a); };
    for (RegisterOperandConversion &c : registerOperandConversions(f, inPlace)) {
      Value &lds = converted[{c.source.getOperation(), c.lds}];
      if (!lds) {
        OpBuilder ab(c.source);
        ab.setInsertionPointAfter(c.source);
        lds = ab.create<tile::AllocOp>(c.source.getLoc(), c.lds, ab.getStringAttr(c.source.displayName() + ".lds"),
                                       /*layout=*/Attribute(), /*lds=*/nullptr, /*access=*/nullptr);
      }
      OpBuilder(c.gemm).create<tile::CopyOp>(c.gemm.getLoc(), c.operand->get(), lds);
      c.operand->set(lds);
    }
  }
};

} // namespace
