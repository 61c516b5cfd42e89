// tilec-allocate-lds: place LDS tiles within the target's budget.
#include "Transforms/PassDetail.h"
#include "Transforms/Passes.h"

#include "Target/LdsBanks.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <map>
#include <numeric>

namespace tilec {
#define GEN_PASS_DEF_TILECALLOCATELDS
#include "Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;

namespace {

constexpr int64_t kAlign = 16;
/// The largest row padding tried, in bytes (a full bank cycle of 32 banks x 4).
constexpr int64_t kMaxRowPadBytes = 128;

/// Where element (row, col) of an LDS tile lives: rows `stride` elements
/// apart, columns permuted per row by an XOR swizzle on groups of `vec`
/// elements (docs/hardware.md section 3):
///   col' = ((col / vec) ^ ((row / perPhase) % maxPhase)) * vec + col % vec.
/// maxPhase = 1 is no swizzle. colBlock > 0: the columns are stored in
/// blocks of colBlock (= stride), blockElems apart (wgmma's MN-major operands).
struct LdsLayout {
  int64_t stride;
  int64_t vec = 1, perPhase = 1, maxPhase = 1;
  int64_t colBlock = 0, blockElems = 0;
  int64_t index(int64_t row, int64_t col) const {
    const int64_t block = colBlock > 0 ? col / colBlock : 0, within = colBlock > 0 ? col % colBlock : col;
    int64_t c = ((within / vec) ^ ((row / perPhase) % maxPhase)) * vec + within % vec;
    return block * blockElems + row * stride + c;
  }
};


/// An LDS tile's value and the views of its buffers (tile.view).
SmallVector<Value> tileAndViews(tile::AllocOp a) {
  SmallVector<Value> values = {a.getResult()};
  for (Operation *u : a->getUsers())
    if (auto v = dyn_cast<tile::ViewOp>(u))
      values.push_back(v.getResult());
  return values;
}

/// The canonical swizzled layout wgmma reads tile `t` in (tilec_atoms.h
/// wgmma_layout): rows of S bytes, the 16-byte chunks XORed with the row's
/// place in a 1024-byte group. A and B given as N x K (k along a row) have one
/// row of S = their k tile's bytes when that is 32, 64 or 128; wider k tiles
/// (attention's head_dim) and B given as K x N (n along a row) are stored in
/// column blocks of S = 128 bytes. nullopt when no warpgroup instruction
/// reads `a` or the shape has no such layout.
std::optional<LdsLayout> wgmmaLayout(tile::AllocOp a, const TargetInfo &target, int64_t elemBytes) {
  tile::TileType t = a.getType();
  for (Value v : tileAndViews(a))
    for (Operation *u : v.getUsers()) {
      auto g = dyn_cast<tile::GemmOp>(u);
      const MatrixInstr *mi = g ? matrixInstrOf(g, target) : nullptr;
      if (!mi || !mi->operandsInSharedMemory() || !(g.getA() == v || g.getB() == v))
        continue;
      const bool kAlongRows = g.getB() == v && !g.getTransposeB();
      const int64_t tileRowBytes = t.cols() * elemBytes;
      const int64_t rowBytes = kAlongRows || tileRowBytes > 128 ? 128 : tileRowBytes;
      if (rowBytes != 32 && rowBytes != 64 && rowBytes != 128)
        return std::nullopt;
      const int64_t stride = rowBytes / elemBytes;
      LdsLayout l{stride, 16 / elemBytes, 128 / rowBytes, rowBytes / 16};
      if (t.cols() > stride) {
        if (t.cols() % stride)
          return std::nullopt;
        l.colBlock = stride;
        l.blockElems = t.rows() * stride;
      }
      return l;
    }
  return std::nullopt;
}

/// The alignment wgmma's swizzled layouts need: the XOR pattern repeats every
/// 1024 bytes of the shared window.
constexpr int64_t kWgmmaAlign = 1024;

/// The longest run of consecutive elements of a row, up to `limit` (a power of
/// two), that `layout` keeps contiguous and aligned to its size at every
/// multiple of the run: rows start at multiples of it and a swizzle moves
/// whole groups of it.
int64_t contiguousRun(const LdsLayout &layout, int64_t limit) {
  int64_t w = limit;
  while (w > 1 && (layout.stride % w != 0 || (layout.maxPhase > 1 && layout.vec % w != 0)))
    w /= 2;
  return w;
}

/// MatrixInstr::kStepsPerRead of gemm `g` (its k tile, and the operands per
/// k step of one wave of its wave grid).
int64_t kStepsPerRead(tile::GemmOp g, const MatrixInstr &mi) {
  tile::MatrixLayoutAttr l = g.getLayoutAttr();
  if (!l)
    return 1;
  const int64_t tm = l.getShape()[0] / l.waveRows() / mi.m, tn = l.getShape()[1] / l.waveCols() / mi.n;
  return mi.kStepsPerRead(cast<tile::TileType>(g.getA().getType()).cols(), tm + tn);
}

/// Calls `inst` with each wave instruction (the lanes' accesses) that the
/// device prelude issues on LDS tile `tile` when its rows are `stride`
/// elements apart: the cooperative writes of load (thread t writes run
/// t + i*threads of `widths.load` elements, row-major, `widths.write` elements
/// per write; a staging copy and a gather write as load does), fill (one
/// element per write), and the operand reads of tile.gemm (per the chosen
/// instruction's lane layout, docs/hardware.md sections 1-2: `widths.read`
/// elements per read along a row, one element per read down a column).
/// `inst` returns false to stop the walk.
void forEachLdsInstruction(tile::AllocOp tile, const LdsLayout &layout, const AccessWidths &widths,
                           const TargetInfo &target, int waves,
                           llvm::function_ref<bool(const std::vector<LdsLaneAccess> &)> inst) {
  tile::TileType t = tile.getType();
  const int ws = target.waveSize;
  const int64_t eb = std::max<int64_t>(1, t.getElementType().getIntOrFloatBitWidth() / 8);
  const int64_t rows = t.rows(), cols = t.cols();
  std::vector<LdsLaneAccess> lanes;
  auto add = [&](int l, int64_t r, int64_t c, int64_t elems) {
    lanes.push_back({l, static_cast<uint32_t>(layout.index(r, c) * eb), static_cast<int>(elems * eb)});
  };
  bool stopped = false;
  auto flush = [&] {
    if (!lanes.empty() && !inst(lanes))
      stopped = true;
    lanes.clear();
  };
  // The tile and the views of its buffers (all buffers share the layout).
  SmallVector<Value> values = tileAndViews(tile);
  auto isTile = [&](Value v) { return llvm::is_contained(values, v); };
  SmallVector<Operation *> users;
  for (Value v : values)
    users.append(v.getUsers().begin(), v.getUsers().end());
  for (Operation *user : users) {
    Value dest;
    bool runs = false;  // written in runs (load, gather, staging copy), else element by element
    bool transposed = false;
    if (auto l = dyn_cast<tile::LoadOp>(user)) dest = l.getDest(), runs = true, transposed = l.getTranspose();
    else if (auto g = dyn_cast<tile::GatherOp>(user)) dest = g.getDest(), runs = true;
    else if (auto f = dyn_cast<tile::FillOp>(user)) dest = f.getDest();
    else if (auto c = dyn_cast<tile::CopyOp>(user); c && isStaging(c.getSource()))
      dest = c.getDest(), runs = true, transposed = c.getTranspose();  // as load_tile (transposed) writes
    if (dest && isTile(dest) && transposed) {
      // load_tile_transposed / commit_transposed (the prelude's block_row,
      // block_col): thread t takes blocks t, t + threads, ... of `write`
      // window rows by `load` window columns (the window is cols x rows;
      // blocks run down its rows first, or row-major when `write` is 1), and
      // writes each window column of its block as `write` elements along a
      // tile row, in the rotated order of the prelude's transpose_rotation.
      const int64_t threads = int64_t(waves) * ws, v = widths.load, kb = widths.write;
      const int64_t blocks = rows * cols / (v * kb);
      int64_t rotation = 1;  // the prelude's transpose_rotation: run j writes row c + (e ^ (j % rotation))
      while (rotation * 2 <= v && rotation * 2 * layout.stride * eb <= 128)
        rotation *= 2;
      for (int64_t base = 0; base < blocks; base += threads)
        for (int w = 0; w < waves; ++w)
          for (int64_t e = 0; e < v; ++e) {
            for (int l = 0; l < ws; ++l) {
              const int64_t blk = base + int64_t(w) * ws + l;
              const int64_t r = kb == 1 ? blk * v / rows : blk % (cols / kb) * kb;  // window row
              const int64_t c = kb == 1 ? blk * v % rows : blk / (cols / kb) * v;   // window column
              if (blk < blocks)
                add(l, c + (e ^ (c / v % rotation)), r, kb);
            }
            flush();
            if (stopped)
              return;
          }
      continue;
    }
    if (dest && isTile(dest)) {
      const int64_t run = runs ? widths.load : 1, write = runs ? widths.write : 1;
      const int64_t threads = int64_t(waves) * ws, n = rows * cols / run;
      for (int64_t base = 0; base < n; base += threads)
        for (int w = 0; w < waves; ++w)
          for (int64_t q = 0; q < run / write; ++q) {
            for (int l = 0; l < ws; ++l) {
              int64_t i = (base + int64_t(w) * ws + l) * run;
              if (i < rows * cols)
                add(l, i / cols, i % cols + q * write, write);
            }
            flush();
            if (stopped)
              return;
          }
      continue;
    }
    auto g = dyn_cast<tile::GemmOp>(user);
    if (!g)
      continue;
    const MatrixInstr *mi = matrixInstrOf(g, target);
    if (!mi || mi->operandsInSharedMemory())
      continue;  // wgmma reads its operands itself, no lane instructions
    auto c = cast<tile::TileType>(g.getC().getType());
    const int64_t wm = g.getLayoutAttr().waveRows(), wn = g.getLayoutAttr().waveCols(), wtm = c.rows() / wm,
                  wtn = c.cols() / wn;
    const int64_t kTile = cast<tile::TileType>(g.getA().getType()).cols();
    // Which operand this tile is, and whether its rows run along k.
    bool isA = isTile(g.getA());
    bool kAlongRows = !isA && !g.getTransposeB();
    int64_t perWave = isA ? wtm : wtn, sub = isA ? mi->m : mi->n;
    // mma.sync operands in a layout with 16-byte runs are read with ldmatrix
    // (the prelude's Mma16x8x16 / Mma16x8x32 read_a / read_b2): one x4 per
    // 16 x 16 (8-bit: 16 x 32) block of A, one per two 16 x 8 blocks of B (an
    // even count of them); lane l addresses 16 bytes (`run` elements) of one
    // row of 8 x 8 matrix l / 8.
    const bool ldmatrix = mi->family == MatrixFamily::MMA && widths.read * eb == 16 &&
                          (isA || (perWave / sub) % 2 == 0);
    if (ldmatrix) {
      const int64_t run = 16 / eb;
      for (int w = 0; w < waves; ++w) {
        int64_t origin = isA ? (w / wn) * wtm : (w % wn) * wtn;
        for (int64_t k0 = 0; k0 < kTile; k0 += mi->k)
          for (int64_t i = 0; i < perWave / sub; i += isA ? 1 : 2) {
            const int64_t mn0 = origin + i * sub;
            for (int l = 0; l < ws; ++l) {
              const int64_t lo = l % 8 + 8 * ((l / 8) % 2), hi = run * (l / 16);  // x4: matrix l/8's row l%8
              if (isA)
                add(l, mn0 + lo, k0 + hi, run);
              else if (kAlongRows)
                add(l, k0 + lo, mn0 + hi, run);  // B (K x N), .trans
              else
                add(l, mn0 + l % 8 + 8 * (l / 16), k0 + run * ((l / 8) % 2), run);  // B (N x K)
            }
            flush();
            if (stopped)
              return;
          }
      }
      continue;
    }
    // steps k steps at a time (MatrixInstr::kStepsPerRead): with 2, a lane's
    // elements of both steps run on from k0 + 2 * operandK(l, 0).
    const int64_t read = kAlongRows ? 1 : widths.read, steps = kStepsPerRead(g, *mi);
    const int elems = mi->operandElems(!isA) * static_cast<int>(steps);
    for (int w = 0; w < waves; ++w) {
      int64_t origin = isA ? (w / wn) * wtm : (w % wn) * wtn;
      for (int64_t k0 = 0; k0 < kTile; k0 += mi->k * steps)
        for (int64_t i = 0; i < perWave / sub; ++i)
          for (int r = 0; r < elems; r += static_cast<int>(read)) {
            for (int l = 0; l < ws; ++l) {
              int64_t mn = origin + i * sub + mi->operandMN(!isA, l, steps == 1 ? r : 0);
              int64_t k = k0 + (steps == 1 ? mi->operandK(!isA, l, r) : steps * mi->operandK(!isA, l, 0) + r);
              kAlongRows ? add(l, k, mn, 1) : add(l, mn, k, read);
            }
            flush();
            if (stopped)
              return;
          }
    }
  }
}

/// What `tile`'s accesses cost in a layout: modelled extra LDS cycles, and
/// wave instructions.
struct LdsCost {
  int64_t cycles = 0, instructions = 0;
  bool operator<(const LdsCost &o) const {
    return cycles != o.cycles ? cycles < o.cycles : instructions < o.instructions;
  }
};

/// The cost of `tile`'s accesses in `layout` at `widths`. The walk stops once
/// the cycles pass `cycleLimit` (the layout has lost: the cost returned is
/// then partial); `conflicts` false counts instructions only.
LdsCost modelCost(tile::AllocOp tile, const LdsLayout &layout, const AccessWidths &widths, const TargetInfo &target,
                  int waves, int64_t cycleLimit = INT64_MAX, bool conflicts = true) {
  LdsCost cost;
  forEachLdsInstruction(tile, layout, widths, target, waves, [&](const std::vector<LdsLaneAccess> &lanes) {
    if (conflicts)
      cost.cycles += ldsConflictCycles(lanes.data(), lanes.size(), target.waveSize, target.ldsBanks);
    ++cost.instructions;
    return cost.cycles <= cycleLimit;
  });
  return cost;
}

/// The run of the loads that fill LDS tile `a`.
struct LoadRun {
  int64_t elems = 1;
  bool realigned = false;  // read as realigned runs (realignedRunOf)
};

/// The run of every tile.load and tile.gather that fills LDS tile `a`
/// (directly, or through a staging tile that a tile.copy writes into it): the
/// shortest, realigned when a load's is (a realigned run reads aligned rows
/// correctly too) and no gather's run is under 4 bytes (gathers are never
/// realigned).
LoadRun tileLoadRun(tile::AllocOp a, int64_t elemBytes) {
  int64_t run = 0;
  bool realigned = false, narrowGather = false;
  auto take = [&](int64_t r) { run = run == 0 ? r : std::min(run, r); };
  auto visit = [&](tile::LoadOp l) {
    if (const int64_t r = realignedRunOf(l, elemBytes)) {
      realigned = true;
      take(r);
    } else {
      take(loadRunOf(l, elemBytes));
    }
  };
  for (Value v : tileAndViews(a))
    for (Operation *u : v.getUsers()) {
      if (auto l = dyn_cast<tile::LoadOp>(u); l && l.getDest() == v)
        visit(l);
      if (auto g = dyn_cast<tile::GatherOp>(u); g && g.getDest() == v) {
        const int64_t r = gatherRunOf(g, elemBytes);
        narrowGather |= r * elemBytes < 4;
        take(r);
      }
      if (auto c = dyn_cast<tile::CopyOp>(u); c && c.getDest() == v && isStaging(c.getSource()))
        if (tile::AllocOp src = allocOf(c.getSource()))
          for (Operation *su : src->getUsers())
            if (auto l = dyn_cast<tile::LoadOp>(su); l && l.getDest() == src.getResult())
              visit(l);
    }
  if (run == 0)
    run = 1;
  return {run, realigned && !narrowGather && run * elemBytes >= 4};
}

/// The longest read of a gemm operand along a row of `a` that the operand's
/// lane layout allows: the matrix instructions' run of consecutive k elements
/// per lane (MatrixInstr::operandKRun), at most 8 bytes, or 16 for an MFMA
/// that reads pairs of k steps at once (MatrixInstr::kStepsPerRead); 1 when
/// no gemm reads `a` along its rows. (16-byte reads of WMMA's 32-byte
/// operands let clang's scheduler hoist whole operands: gfx1151's attention
/// then needed 256 VGPRs and scratch where 8-byte reads need 233 and none.)
int64_t operandReadLimit(tile::AllocOp a, const TargetInfo &target, int64_t elemBytes) {
  int64_t limit = 0;
  for (Value v : tileAndViews(a))
    for (Operation *u : v.getUsers()) {
      auto g = dyn_cast<tile::GemmOp>(u);
      const MatrixInstr *mi = g ? matrixInstrOf(g, target) : nullptr;
      if (!mi || mi->operandsInSharedMemory() || !(g.getA() == v || g.getB() == v))
        continue;  // (wgmma reads its operands itself)
      // mma.sync reads its 16-bit operands with ldmatrix: rows of 16 bytes,
      // either operand in either orientation (.trans); its 8-bit operands
      // only along k (ldmatrix's .trans moves 16-bit elements), so a K x N B
      // is read element by element.
      if (mi->family == MatrixFamily::MMA) {
        const bool kAlongRow = g.getA() == v || g.getTransposeB();
        const int64_t w = elemBytes == 2 ? 8 : elemBytes == 1 && kAlongRow ? 16 : 1;
        limit = limit == 0 ? w : std::min(limit, w);
        continue;
      }
      if (!(g.getA() == v || g.getTransposeB()))
        continue;
      // WMMA's 32-byte operands are read element by element (the prelude's
      // read_operand: wider reads raised gfx1151's register pressure).
      // An MFMA reading pairs of k steps at once (kStepsPerRead) reads 16
      // bytes.
      const int64_t steps = kStepsPerRead(g, *mi);
      int64_t w = mi->operandKRun() * elemBytes > 8
                      ? 1
                      : std::min<int64_t>(std::max<int64_t>(1, 8 * steps / elemBytes),
                                          steps << llvm::countr_zero(uint64_t(mi->operandKRun())));
      limit = limit == 0 ? w : std::min(limit, w);
    }
  return limit == 0 ? 1 : limit;
}

/// The widths `layout` allows for tile accesses of at most `limits`.
AccessWidths widthsIn(const LdsLayout &layout, const AccessWidths &limits) {
  return {limits.load, contiguousRun(layout, limits.write), contiguousRun(layout, limits.read)};
}

int64_t alignTo(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

/// The candidate layouts of a tile with `cols` columns of `elemBytes` each,
/// cheapest in LDS first: unpadded, XOR swizzles (no extra bytes), then row
/// paddings up to a full bank cycle.
std::vector<LdsLayout> candidateLayouts(int64_t cols, int64_t elemBytes) {
  std::vector<LdsLayout> out = {{cols}};
  for (int64_t vec : {8, 4, 2, 1})  // wide groups first: they allow vector accesses
    for (int64_t perPhase : {1, 2, 4})
      for (int64_t maxPhase : {2, 4, 8, 16, 32})
        if (vec * maxPhase <= cols && cols % (vec * maxPhase) == 0)
          out.push_back({cols, vec, perPhase, maxPhase});
  for (int64_t pad = 1; pad * elemBytes <= kMaxRowPadBytes; ++pad)
    out.push_back({cols + pad});
  return out;
}

struct Buffer {
  std::string name;
  int64_t bytes;
};

struct AllocateLDS : tilec::impl::TilecAllocateLDSBase<AllocateLDS> {
  using TilecAllocateLDSBase::TilecAllocateLDSBase;

  void runOnOperation() override {
    func::FuncOp f = getOperation();
    const TargetInfo *target = targetOrError(f, arch);
    if (!target)
      return signalPassFailure();
    Builder b(&getContext());
    const int waves = numWavesOf(f);
    // Each block of LDS: a tile (all its buffers) or a reduction's scratch,
    // with its size and the span of the function's top-level ops that use it.
    struct Block {
      Operation *op;
      std::string name;
      int64_t bytes, first, last, offset = 0, align = kAlign;
      LdsLayout layout{0};       // an LDS tile's (not a reduction scratch's)
      int64_t bufferBytes = 0;  // bytes between buffers of a multi-buffered tile
    };
    std::vector<Block> blocks;
    bool badLayout = false;
    llvm::DenseMap<Operation *, int64_t> position;
    for (Operation &op : f.getBody().front())
      position[&op] = static_cast<int64_t>(position.size());
    auto span = [&](ArrayRef<Operation *> users, int64_t &first, int64_t &last) {
      first = INT64_MAX;
      last = -1;
      for (Operation *u : users) {
        Operation *anc = f.getBody().front().findAncestorOpInBlock(*u);
        int64_t p = anc ? position.lookup(anc) : 0;
        first = std::min(first, p);
        last = std::max(last, p);
      }
      if (last < 0)
        first = last = 0;
    };
    f.walk([&](tile::AllocOp a) {
      tile::TileType t = a.getType();
      if (!t.isLds())
        return;
      int64_t elemBytes = std::max<int64_t>(1, t.getElementType().getIntOrFloatBitWidth() / 8);
      LdsLayout layout{t.cols()};
      // The widest accesses the tile's users allow; the layout may narrow them.
      const LoadRun loadRun = t.getRank() == 2 ? tileLoadRun(a, elemBytes) : LoadRun{};
      int64_t run = loadRun.elems, write = run;
      if (t.getRank() == 2 && writtenTransposed(a)) {
        // (a shorter run than the tensor allows is as valid: it divides it)
        const TransposedBlock blk =
            transposedBlock(t.cols(), t.rows(), run, int64_t(waves) * target->waveSize, elemBytes);
        run = blk.run;
        write = blk.write;
      }
      const AccessWidths limits{run, write, t.getRank() == 2 ? operandReadLimit(a, *target, elemBytes) : 1};
      std::optional<LdsCost> best;  // the chosen layout's cost, when the search chose it
      const std::optional<LdsLayout> forWgmma = t.getRank() == 2 ? wgmmaLayout(a, *target, elemBytes) : std::nullopt;
      if (forWgmma) {
        layout = *forWgmma;  // the only layout wgmma reads (its cp.async writes are conflict-free in it)
      } else if (auto given = a->getAttrOfType<IntegerAttr>(tile::attr::kRowStride)) {
        layout.stride = given.getInt();  // the user's layout
        if (auto sw = a->getAttrOfType<DenseI64ArrayAttr>(tile::attr::kSwizzle); sw && sw.size() == 3) {
          if (sw[0] < 1 || sw[1] < 1 || sw[2] < 1) {
            a.emitOpError() << "swizzle [vec, per_phase, max_phase] of '" << a.displayName()
                            << "' must be positive, got [" << sw[0] << ", " << sw[1] << ", " << sw[2] << "]";
            badLayout = true;
            return;
          }
          layout = {layout.stride, sw[0], sw[1], sw[2]};
        }
      } else if (t.getRank() == 2) {
        // The layout with the fewest modelled bank conflicts, then the fewest
        // LDS instructions (wider accesses), then the least LDS: chosen by
        // counting against the target's bank model, not assumed. No layout
        // beats zero conflicts at the widest accesses.
        // A layout's instruction count depends on its widths only: counted once
        // per widths, it rules candidates out before their conflicts are.
        std::map<std::pair<int64_t, int64_t>, int64_t> instructionsAt;
        auto instructions = [&](const AccessWidths &w) {
          auto [it, added] = instructionsAt.try_emplace({w.write, w.read}, 0);
          if (added)
            it->second = modelCost(a, LdsLayout{t.cols()}, w, *target, waves, INT64_MAX,
                                   /*conflicts=*/false)
                             .instructions;
          return it->second;
        };
        const LdsCost ideal{0, instructions(limits)};
        for (const LdsLayout &cand : candidateLayouts(t.cols(), elemBytes)) {
          const AccessWidths widths = widthsIn(cand, limits);
          if (best && best->cycles == 0 && instructions(widths) >= best->instructions)
            continue;  // cannot beat a conflict-free layout with as few instructions
          LdsCost cost = modelCost(a, cand, widths, *target, waves, best ? best->cycles : INT64_MAX);
          if (!best || cost < *best) {
            best = cost;
            layout = cand;
          }
          if (!(ideal < *best))
            break;
        }
      }
      int64_t rowStride = layout.stride;
      if (rowStride < t.cols() && layout.colBlock == 0) {
        a.emitOpError() << "row_stride " << rowStride << " of '" << a.displayName()
                        << "' is smaller than its " << t.cols() << " columns";
        badLayout = true;
        return;
      }
      const int64_t align = forWgmma ? kWgmmaAlign : kAlign;
      int64_t bufferBytes =
          alignTo(t.rows() * (layout.colBlock > 0 ? t.cols() : rowStride) * elemBytes, align);
      auto buffersAttr = a->getAttrOfType<IntegerAttr>(tile::attr::kBuffers);
      const int64_t buffers = buffersAttr ? buffersAttr.getInt() : 1;
      int64_t bytes = bufferBytes * buffers;
      // The placement (written below, with the offset) carries the user's layout.
      a->removeAttr(tile::attr::kRowStride);
      a->removeAttr(tile::attr::kSwizzle);
      const AccessWidths widths = widthsIn(layout, limits);
      if (t.getRank() == 2)
        a->setAttr(pattr::kBankConflicts,
                   b.getI64IntegerAttr((best ? *best : modelCost(a, layout, widths, *target, waves)).cycles));
      auto setAccess = [&](tile::AllocOp op, const AccessWidths &w) {
        if (w.load > 1 || w.write > 1 || w.read > 1 || loadRun.realigned)
          op.setAccessAttr(tile::AccessWidthsAttr::get(&getContext(), w.load, loadRun.realigned, w.write, w.read));
      };
      setAccess(a, widths);
      SmallVector<Operation *> users;
      for (Operation *u : a->getUsers()) {
        users.push_back(u);
        if (auto v = dyn_cast<tile::ViewOp>(u))
          users.append(v->getUsers().begin(), v->getUsers().end());
      }
      // The staging tiles that feed this one load in the same runs.
      for (Operation *u : users)
        if (auto c = dyn_cast<tile::CopyOp>(u); c && rootAllocOf(c.getDest()) == a && isStaging(c.getSource()))
          setAccess(allocOf(c.getSource()), AccessWidths{widths.load, 1, 1});
      Block blk{a, a.displayName() + (buffers > 1 ? " x" + std::to_string(buffers) : ""), bytes, 0, 0, 0, align};
      blk.layout = layout;
      blk.bufferBytes = buffersAttr ? bufferBytes : 0;
      span(users, blk.first, blk.last);
      blocks.push_back(blk);
    });
    // Cross-wave row reductions exchange partial results through LDS.
    f.walk([&](tile::ReduceOp r) {
      auto src = allocOf(r.getSource());
      std::optional<std::pair<int64_t, int64_t>> grid = waveGridOf(src);
      if (!grid)
        return;
      int64_t across = r.getAxis() == 1 ? grid->second : grid->first;
      if (across <= 1)
        return;
      auto t = cast<tile::TileType>(r.getSource().getType());
      int64_t bytes = alignTo((r.getAxis() == 1 ? t.rows() : t.cols()) * across * 4, kAlign);
      Block blk{r, "reduction scratch of '" + src.displayName() + "'", bytes, 0, 0};
      span({r.getOperation()}, blk.first, blk.last);
      blocks.push_back(blk);
    });
    if (badLayout)
      return signalPassFailure();
    // Liveness-based placement: blocks whose spans of top-level ops overlap
    // get disjoint bytes; the others may share (first fit, largest first).
    // tilec-insert-barriers orders the accesses of blocks that share bytes.
    std::vector<Block *> order;
    for (Block &blk : blocks)
      order.push_back(&blk);
    std::stable_sort(order.begin(), order.end(), [](Block *x, Block *y) { return x->bytes > y->bytes; });
    std::vector<Block *> placed;
    int64_t offset = 0;
    for (Block *blk : order) {
      int64_t at = 0;
      for (bool moved = true; moved;) {
        moved = false;
        for (Block *o : placed)
          if (o->first <= blk->last && blk->first <= o->last && at < o->offset + o->bytes &&
              o->offset < at + blk->bytes) {
            at = alignTo(o->offset + o->bytes, blk->align);
            moved = true;
          }
      }
      blk->offset = at;
      placed.push_back(blk);
      offset = std::max(offset, at + blk->bytes);
    }
    std::vector<Buffer> bufferList;
    for (Block &blk : blocks) {
      bufferList.push_back({blk.name, blk.bytes});
      if (auto a = dyn_cast<tile::AllocOp>(blk.op)) {
        const LdsLayout &l = blk.layout;
        SmallVector<int64_t> swizzle;
        if (l.maxPhase > 1)
          swizzle = {l.vec, l.perPhase, l.maxPhase};
        a.setLdsAttr(tile::LdsPlacementAttr::get(&getContext(), blk.offset, blk.bytes, l.stride, blk.bufferBytes,
                                                 swizzle, l.colBlock));
      } else {
        blk.op->setAttr(pattr::kScratchOffset, b.getI64IntegerAttr(blk.offset));
      }
    }
    f->setAttr(tile::attr::kLdsBytes, b.getI64IntegerAttr(offset));
    if (offset > target->ldsBytesPerWorkgroup) {
      InFlightDiagnostic d = f.emitError();
      d << "LDS over budget on " << target->arch << ": " << offset << " bytes needed, "
        << target->ldsBytesPerWorkgroup << " available per workgroup (";
      llvm::interleaveComma(bufferList, d, [&](const Buffer &buf) {
        d << "'" << buf.name << "' " << buf.bytes << " B";
      });
      d << ")";
      signalPassFailure();
    }
  }
};

} // namespace
