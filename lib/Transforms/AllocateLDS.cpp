// tilec-allocate-lds: place LDS tiles within the target's budget.
#include "Transforms/PassDetail.h"
#include "Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

namespace tilec {
#define GEN_PASS_DEF_TILECALLOCATELDS
#include "Transforms/Passes.h.inc"
} // namespace tilec

using namespace mlir;
using namespace tilec;

namespace {

constexpr int64_t kAlign = 16;
/// Row padding of rank-2 LDS tiles: 16 bytes shifts consecutive rows by four
/// banks, so the column-strided operand reads of a wave spread over the 32
/// banks of amd-targets.md section 3 instead of hitting one.
constexpr int64_t kRowPadBytes = 16;

int64_t alignTo(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

struct Buffer {
  std::string name;
  int64_t bytes;
};

struct AllocateLDS : tilec::impl::TilecAllocateLDSBase<AllocateLDS> {
  using TilecAllocateLDSBase::TilecAllocateLDSBase;

  void runOnOperation() override {
    func::FuncOp f = getOperation();
    const TargetInfo *target = lookupTarget(arch);
    if (!target) {
      f.emitError() << "unknown target '" << arch << "' (known: " << knownTargetsList() << ")";
      return signalPassFailure();
    }
    Builder b(&getContext());
    std::vector<Buffer> buffers;
    int64_t offset = 0;
    f.walk([&](tile::AllocOp a) {
      tile::TileType t = a.getType();
      if (!t.isLds())
        return;
      int64_t elemBytes = std::max<int64_t>(1, t.getElementType().getIntOrFloatBitWidth() / 8);
      int64_t rowStride = t.cols();
      if (t.getRank() == 2 && !a->hasAttr(pattr::kRowStride))
        rowStride += kRowPadBytes / elemBytes;
      else if (auto given = a->getAttrOfType<IntegerAttr>(pattr::kRowStride))
        rowStride = given.getInt();
      if (rowStride < t.cols()) {
        a.emitOpError() << "row_stride " << rowStride << " of '" << a.displayName()
                        << "' is smaller than its " << t.cols() << " columns";
        return signalPassFailure();
      }
      int64_t bytes = alignTo(t.rows() * rowStride * elemBytes, kAlign);
      a->setAttr(pattr::kOffset, b.getI64IntegerAttr(offset));
      a->setAttr(pattr::kRowStride, b.getI64IntegerAttr(rowStride));
      buffers.push_back({a.displayName(), bytes});
      offset += bytes;
    });
    // Cross-wave row reductions exchange partial results through LDS.
    f.walk([&](tile::ReduceOp r) {
      auto src = allocOf(r.getSource());
      auto grid = src ? src->getAttrOfType<DenseI64ArrayAttr>(pattr::kWaveGrid) : nullptr;
      if (!grid)
        return;
      int64_t across = r.getAxis() == 1 ? grid[1] : grid[0];
      if (across <= 1)
        return;
      auto t = cast<tile::TileType>(r.getSource().getType());
      int64_t bytes = alignTo((r.getAxis() == 1 ? t.rows() : t.cols()) * across * 4, kAlign);
      r->setAttr(pattr::kScratchOffset, b.getI64IntegerAttr(offset));
      buffers.push_back({"reduction scratch of '" + src.displayName() + "'", bytes});
      offset += bytes;
    });
    f->setAttr(tile::attr::kLdsBytes, b.getI64IntegerAttr(offset));
    if (offset > target->ldsBytesPerWorkgroup) {
      InFlightDiagnostic d = f.emitError();
      d << "LDS over budget on " << target->arch << ": " << offset << " bytes needed, "
        << target->ldsBytesPerWorkgroup << " available per workgroup (";
      llvm::interleaveComma(buffers, d, [&](const Buffer &buf) {
        d << "'" << buf.name << "' " << buf.bytes << " B";
      });
      d << ")";
      signalPassFailure();
    }
  }
};

} // namespace
