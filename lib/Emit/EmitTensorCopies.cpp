// Which asynchronous tile loads the HIP emitter issues as tensor copies
// (TMA, targets with TargetInfo::hasTensorCopy): docs/hardware.md, "Tensor
// copies". A tensor copy moves a box of a rank-2 tensor into shared memory
// in one instruction of one thread, already in the swizzled layout that
// tilec-allocate-lds chose, so the kernel passes one tensor map per copied
// tensor (encoded by the runtime from the manifest's tensor_map entry).
#include "Emit/HIPEmitter.h"

#include "Dialect/Tile/TileContract.h"

namespace tilec::hip {

namespace {

/// The swizzle span (bytes: 32, 64, 128; 0 for none) of a tensor copy that
/// writes LDS tile `a` exactly as Lds::index lays it out, and the box's
/// columns; nullopt when no tensor copy does. Lds::index XORs 16-byte groups
/// of a row with (row / PerPhase) % MaxPhase; the copy's S-byte swizzle XORs
/// address bits [4, 4 + log2(S / 16)) with the bits above bit 7, which is the
/// same when rows are S bytes apart, MaxPhase = S / 16 and PerPhase = 128 / S.
std::optional<std::pair<int64_t, int64_t>> copyLayout(tile::AllocOp a, int64_t elemBytes) {
  tile::TileType t = a.getType();
  tile::LdsPlacementAttr p = a.getLdsAttr();
  if (!p)
    return std::nullopt;
  const int64_t rowBytes = p.getRowStride() * elemBytes;
  const int64_t boxCols = p.getColBlock() > 0 ? p.getColBlock() : t.cols();
  if (boxCols != p.getRowStride() || t.cols() % boxCols != 0 || t.rows() > 256 || boxCols > 256 || rowBytes % 16 != 0)
    return std::nullopt;
  int64_t span = 0;
  if (p.swizzled()) {
    ArrayRef<int64_t> sw = p.getSwizzle();
    span = rowBytes;
    if (sw[0] * elemBytes != 16 || (span != 32 && span != 64 && span != 128) || sw[2] != span / 16 ||
        sw[1] != 128 / span)
      return std::nullopt;
  }
  // The copy swizzles by shared-memory address: each buffer starts where the
  // pattern does (8 rows of the span; 128 bytes, the copy's alignment, without).
  const int64_t align = span ? 8 * span : 128;
  if (p.getOffset() % align != 0 || p.getBufferBytes() % align != 0)
    return std::nullopt;
  return std::make_pair(span, boxCols);
}

/// Buffers of a placed LDS tile (1 unless multi-buffered).
int64_t bufferCount(tile::AllocOp a) {
  tile::LdsPlacementAttr p = a.getLdsAttr();
  return p && p.getBufferBytes() > 0 ? p.getBytes() / p.getBufferBytes() : 1;
}

} // namespace

void Emitter::planTensorCopies() {
  if (!target.hasTensorCopy)
    return;
  f.walk([&](tile::LoadOp l) {
    if (!l->hasAttr(tile::attr::kAsync) || l.getTranspose() || accessOf(l.getDest()).realign)
      return;
    tile::AllocOp a = rootAllocOf(l.getDest());
    auto arg = dyn_cast<BlockArgument>(rootTensorOf(l.getSource()));
    if (!a || !arg)
      return;
    auto mt = cast<MemRefType>(arg.getType());
    const int64_t elemBytes = std::max<int64_t>(1, mt.getElementTypeBitWidth() / 8);
    // The tensor map needs rows 16-byte aligned and a multiple of 16 bytes apart.
    auto div = f.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), tile::attr::kDivisibility);
    if (mt.getRank() != 2 || !div || div.getInt() * elemBytes % 16 != 0)
      return;
    std::optional<std::pair<int64_t, int64_t>> layout = copyLayout(a, elemBytes);
    if (!layout)
      return;
    const EmittedTensorMap box{arg.getArgNumber(), TensorMapBox{static_cast<int>(a.getType().rows()),
                                                                static_cast<int>(layout->second),
                                                                static_cast<int>(layout->first)}};
    // One tensor map per tensor: loads of another box shape copy cooperatively.
    auto [it, added] = tensorMaps.try_emplace(arg.getArgNumber(), box);
    if (added || it->second == box)
      tensorCopies[l] = box;
  });
  if (tensorCopies.empty())
    return;
  // Every asynchronously filled LDS buffer, copied by tensor copies or
  // cooperatively, may hold a group in flight (copy_groups' slot argument).
  int64_t copiedBuffers = 0;
  llvm::DenseSet<Operation *> counted;
  f.walk([&](Operation *op) {
    Value dest = !op->hasAttr(tile::attr::kAsync) ? Value()
                 : isa<tile::LoadOp>(op)           ? cast<tile::LoadOp>(op).getDest()
                 : isa<tile::GatherOp>(op)         ? cast<tile::GatherOp>(op).getDest()
                                                   : Value();
    if (tile::AllocOp a = dest ? rootAllocOf(dest) : nullptr; a && counted.insert(a).second)
      copiedBuffers += bufferCount(a);
  });
  copyGroupSlots = 1;
  while (copyGroupSlots < copiedBuffers)
    copyGroupSlots *= 2;
}

} // namespace tilec::hip
