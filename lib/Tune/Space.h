// The GEMM configuration space the autotuner searches, the problem it tunes
// for, and the matrix-instruction tiling the compiler will pick for a point.
// Pure C++ over lib/Target (no MLIR).
#pragma once

#include "Target/Target.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilec::tune {

/// The GEMM problem being tuned: C[M,N] = A[M,K] @ B[K,N].
struct GemmProblem {
  int64_t M = 0, N = 0, K = 0;
  ElemType in = ElemType::BF16;  ///< A and B
  ElemType out = ElemType::F32;  ///< C
};

/// One point of the space: the GEMM kernel's tuning parameters.
struct GemmTile {
  int64_t blockM = 128, blockN = 128, blockK = 32;
  int waves = 4;
  int stages = 2;
  int splitK = 1;  ///< split-K slices (kernels/gemm/Gemm.h); 1: none

  /// The registry's `-p` names and values: block_m, block_n, block_k, waves,
  /// stages, and split_k when it is above 1.
  std::map<std::string, std::string> params() const;
  /// "-p block_m=128 -p block_n=128 -p block_k=32 -p waves=4 -p stages=2" (then " -p split_k=S").
  std::string flags() const;
  bool operator==(const GemmTile &o) const {
    return blockM == o.blockM && blockN == o.blockN && blockK == o.blockK && waves == o.waves &&
           stages == o.stages && splitK == o.splitK;
  }
};

/// The values each tuning parameter may take. Defaults: the full space of the
/// issue (4 x 4 x 3 x 4 x 3 = 576 points).
struct GemmSpace {
  std::vector<int64_t> blockM = {32, 64, 128, 256};
  std::vector<int64_t> blockN = {32, 64, 128, 256};
  std::vector<int64_t> blockK = {16, 32, 64};
  std::vector<int> waves = {1, 2, 4, 8};
  std::vector<int> stages = {1, 2, 3};
  /// Split-K slices; the tuner widens this to kSkinnySplitK for M <= 64
  /// (unless split_k is given) when it ranks by the model.
  std::vector<int> splitK = {1};

  /// Every point, in a fixed order (block_m, block_n, block_k, waves, stages).
  std::vector<GemmTile> enumerate() const;
  size_t size() const;
  /// "block_m=32,64;block_n=...": identifies the space in cache keys.
  std::string signature() const;
  /// Restricts parameter `name` (block_m, ...) to one value; false for a
  /// name that is not a tuning parameter.
  bool pin(const std::string &name, int64_t value);
};

/// The split-K slice counts the model weighs for skinny problems (M <= 64).
inline const std::vector<int> kSkinnySplitK = {1, 2, 4, 8};
inline constexpr int64_t kSkinnyMaxM = 64;

/// The tuning parameters of the GEMM kernel, in `-p` order.
const std::vector<std::string> &gemmTuningParams();

/// The matrix instruction and wave grid (wm x wn waves over the block tile)
/// that tilec-select-matrix-instr chooses for a block tile.
// MatrixTiling and selectMatrixTiling live in lib/Target (Target.h): the
// compiler's tilec-select-matrix-instr and the tuner share them.


/// Smallest power of two >= v (v >= 1).
int64_t nextPowerOfTwo(int64_t v);

/// The shape class results are cached under: M, N and K each rounded up to a
/// power of two ("512x512x1024").
std::string shapeClass(const GemmProblem &p);

} // namespace tilec::tune
