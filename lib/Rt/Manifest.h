// The bundle manifest (DIR/manifest.json): what `tilec --emit=bundle` writes
// and libtilec_rt reads. The format is documented in docs/runtime.md; this
// file is its one definition (fields, JSON spelling, validation).
//
// Plain C++ and nlohmann/json, no LLVM: libtilec_rt links it.
#pragma once

#include "tilec/tensor_map.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tilec::bundle {

/// The newest format this reader reads. Bumped when a reader of an older
/// version would misread the manifest: version 2 adds tensor maps (a
/// parameter an older reader would not pass). A manifest is written with the
/// oldest version that describes it (requiredFormatVersion).
inline constexpr int kFormatVersion = 2;
inline constexpr const char *kFormatName = "tilec-bundle";
inline constexpr const char *kManifestFile = "manifest.json";
inline constexpr const char *kHeaderFile = "tilec_kernels.h";

/// One kernel argument as the caller passes it: a tensor (a pointer followed
/// by one int per dimension, row-major extents) or an f32 / i32 scalar.
struct ArgSpec {
  enum Kind { Tensor, F32, I32 } kind = Tensor;
  std::string name;           ///< the DSL's argument name ("" when it has none)
  std::string dtype;          ///< tensors: bf16, f16, f32, i32, f8E4M3FNUZ, ...; scalars: f32 / i32
  int rank = 0;               ///< tensors: number of dimensions
  /// tensors: innermost extent multiple and alignment in elements (<= 16
  /// bytes); i32 scalars: the value's multiple (absent from the JSON: 1)
  int64_t divisibility = 1;
  /// Rank-2 tensors the kernel reads with tensor copies (NVIDIA TMA): the
  /// kernel takes a tensor map right after the tensor's extents; the launch
  /// encodes it from the tensor.
  TensorMapBox tensorMap;
};

/// One grid axis, as tilec::GridDim: extent ceil(args[arg].shape[dim] / tile);
/// with dim == -1, ceil(value of scalar args[arg] / tile); with arg == -1
/// the constant `tile`.
struct GridAxis {
  int arg = -1;
  int dim = -1;
  int64_t tile = 1;
};

/// One kernel compiled for one target.
struct KernelEntry {
  std::string name;             ///< launch name: the kernel's name without the target
  std::string kernel;           ///< the shipped kernel it was built from (gemm, attention, ...)
  std::map<std::string, std::string> params;  ///< its -p parameters
  std::string target;           ///< gfx942, sm_90a, ...
  std::string vendor;           ///< amd | nvidia (vendorOf(target))
  std::string entry;            ///< the code object's kernel symbol
  std::string codeObject;       ///< file name inside the bundle
  std::string sha256;           ///< of the code object, lower-case hex
  std::string tilecVersion;     ///< the tilec that compiled it
  std::map<std::string, std::string> compileOptions;  ///< e.g. jit=auto
  int blockSize = 0;            ///< threads per block (one-dimensional)
  int64_t ldsBytes = 0;         ///< LDS / shared memory of one block
  /// Shared memory passed at launch (CompiledKernel::dynamicLdsBytes): NVIDIA
  /// kernels take the shared memory they address dynamically (ldsBytes less
  /// the static section ptxas reserves); AMD code objects declare it (0).
  int64_t dynamicSharedBytes = 0;
  std::vector<ArgSpec> args;    ///< in kernel-argument order
  std::vector<GridAxis> grid;   ///< 1 to 3 axes
};

struct Manifest {
  int formatVersion = kFormatVersion;
  std::string tilecVersion;     ///< the tilec that last wrote the bundle
  std::vector<KernelEntry> kernels;

  /// The entry of `name` for `target`, or nullptr.
  const KernelEntry *find(const std::string &name, const std::string &target) const;
  /// Adds `entry`, replacing the one of the same name and target.
  void put(KernelEntry entry);
};

/// The oldest format version that describes `m`: 2 when an argument takes a
/// tensor map, else 1.
int requiredFormatVersion(const Manifest &m);
/// "nvidia" for sm_*, "amd" for gfx*, "" for anything else.
std::string vendorOf(const std::string &target);
/// Bytes of one element of `dtype` as MLIR spells it (bf16, f32, i8,
/// f8E4M3FNUZ): the first number in the name is its bit width.
int64_t elementBytes(const std::string &dtype);
/// The code-object file name of a kernel entry: symbol, target and a short
/// content hash, so that a new build never overwrites a file an older
/// manifest names.
std::string codeObjectFileName(const KernelEntry &entry);
/// "ceil(C.shape[0] / 128)", "ceil(seq_len / 64)", "4": how axis `g` of the
/// grid follows from the arguments `args`.
std::string gridExpression(const GridAxis &g, const std::vector<ArgSpec> &args);
/// The argument's name, or "argN" when the DSL gave it none.
std::string argLabel(const std::vector<ArgSpec> &args, int index);

/// Parses and validates manifest text. Returns "" or the first problem,
/// naming the field ("kernels[1].args[0].rank: expected an integer >= 1").
std::string parse(const std::string &text, Manifest &out);
/// The manifest as JSON text (2-space indented, keys sorted).
std::string serialize(const Manifest &m);
/// One entry as the manifest's `kernels` array holds it (a JSON object, the
/// same writer as serialize).
std::string serializeEntry(const KernelEntry &entry);

/// SHA-256 of `size` bytes at `data`, lower-case hex.
std::string sha256Hex(const void *data, size_t size);

} // namespace tilec::bundle
