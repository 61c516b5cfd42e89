// The CPU wavefront emulator: runs the HIP text that tilec emits for AMD GPUs
// on the host, with the instruction semantics of docs/hardware.md sections 1-5,
// and checks it (global out-of-bounds, LDS races, LDS bank conflicts, barrier
// deadlocks).
//
// Execution model
// - The kernel text is compiled for the host with the emulator prelude
//   (tilec_hw_emu.h + the tile primitives as "tilec_prelude.h") by a clang 19
//   subprocess into a shared object, then dlopen'ed. Images are cached in
//   memory by source hash and on disk ($TILEC_CACHE_DIR, $XDG_CACHE_HOME/tilec
//   or ~/.cache/tilec, subfolder emu/).
// - Workgroups run in parallel, one per host thread at a time
//   (std::thread::hardware_concurrency workers). Lanes are fibers
//   (Boost.Context fcontext) scheduled cooperatively on their workgroup's thread.
// - A wave's lanes run in lockstep at LDS granularity: every lane performs its
//   k-th LDS access before any lane of the wave performs its (k+1)-th, so
//   communication between lanes of one wave through LDS sees program order, as
//   on the hardware. Barriers, ds_bpermute and matrix instructions are
//   collective: a wave's collective executes when none of its lanes can run
//   any further; lanes that have returned are inactive (they contribute zeros
//   and receive nothing).
// - LDS is not cleared: each workgroup's LDS starts filled with the poison byte
//   0xFF (NaN as f32, bf16 and f16; -1 as an integer), as the hardware leaves
//   whatever a previous workgroup wrote there.
// - The f16/bf16 matrix instructions of a target whose TargetInfo says so
//   (gfx90a, CDNA2) flush subnormal inputs (A, B, the f32 C) and subnormal f32
//   results to zero of the same sign; other targets keep them.
// - Asynchronous copies (cp.async, targets with TL_HW_HAS_ASYNC_COPY): each
//   lane keeps a queue of copy groups. copy_async reads the global bytes when
//   it is issued (the buffer-load path: zeros unless the access lies wholly
//   below num_records, the same bounds and alignment checks) and adds the LDS
//   write to the lane's open group; async_commit closes the group;
//   async_wait<N> performs the LDS writes of the lane's oldest groups until at
//   most N remain, as LDS accesses of that lane at that point (race checker
//   and bank model see them there). A lane that returns performs its
//   remaining copies, committed or not, in issue order: the GPU completes
//   them too, and no later access of the lane can observe the difference.
//   Data copied but not yet waited for is therefore absent from LDS, as it may
//   be on the GPU.
//
// Checkers (counts and the first few messages of each kind in LaunchReport)
// - Global out-of-bounds: a buffer access whose offset is below num_records
//   (so the hardware would perform it, docs/hardware.md section 4) but whose
//   address lies outside every allocation made with Emulator::allocate. The
//   load returns 0, the store is dropped. Offsets at or past num_records are
//   the legal ragged-edge mechanism and are not reported; an access that
//   straddles num_records is reported (section 4: keep accesses wholly in or out).
//   LDS accesses outside the kernel's LDS are reported the same way.
// - Uninitialized LDS reads: an LDS read that includes a byte no lane of the
//   workgroup has written since the workgroup started (written-ness is tracked
//   per byte). The read returns the poison bytes.
// - Misaligned LDS accesses: an LDS access whose address is not a multiple of
//   its size (b16/b32/b64/b128). The emitted text accesses LDS through
//   naturally aligned types, so the compiler selects ds_read/ds_write_b64/b128
//   and assumes the alignment; the hardware needs it unless the unaligned
//   access mode is on (RuntimeMemory.cpp cites the sources). The access is performed.
// - LDS races: two accesses to the same LDS byte from lanes of different waves,
//   at least one a write, with no barrier between them. Lanes of one wave are
//   ordered by program order (they execute in lockstep), so never race.
//   An LDS access (by any lane) to a byte that some lane's queued
//   asynchronous copy will still write is a race too: on the GPU the copy may
//   land before or after it ("LDS read of bytes an asynchronous copy has not
//   completed (cp.async not yet waited for)").
// - LDS bank conflicts (section 3 phase model): the k-th LDS access of each
//   lane of a wave since the wave's last convergence point (barrier or
//   wave-collective op) forms one instruction. Its lanes are split into
//   phases (wave64: b32 2x32, b64 4x16, b128 8x8 in the listed lane groups;
//   wave32: 1x32, 2x16, 4x8); a phase takes as many cycles as the largest
//   number of distinct dwords mapped to one of the 32 banks (equal dwords
//   broadcast). bankConflictCycles sums (cycles - 1) over all phases.
// - Deadlock: a barrier that can never complete because some waves of the
//   workgroup have returned while others wait at it (HIP requires every thread
//   to reach __syncthreads). The workgroup is abandoned; the launch finishes.
//   Lanes of one wave that return early while the rest of the wave waits at a
//   barrier are fine (s_barrier is a wave-level instruction).
#pragma once

#include "Target/Target.h"

#include "llvm/Support/Error.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tilec::emu {

/// One kernel argument. Pointers must come from Emulator::allocate.
struct Arg {
  enum Kind { Pointer, Int, Float } kind = Int;
  void *ptr = nullptr;
  int64_t i = 0;
  float f = 0.0f;

  static Arg pointer(void *p) { return {Pointer, p, 0, 0.0f}; }
  static Arg integer(int64_t v) { return {Int, nullptr, v, 0.0f}; }
  static Arg real(float v) { return {Float, nullptr, 0, v}; }
};

struct LaunchConfig {
  std::array<int, 3> grid = {1, 1, 1};  ///< workgroups per axis
  int threadsPerBlock = 64;
};

struct LaunchReport {
  int64_t outOfBounds = 0;          ///< global (and LDS) accesses outside any allocation
  int64_t races = 0;                ///< racy LDS accesses (per access, not per byte)
  int64_t uninitializedLdsReads = 0;  ///< LDS reads of bytes the workgroup never wrote (per access)
  int64_t misalignedLdsAccesses = 0;  ///< LDS accesses whose address is not a multiple of their size
  int64_t bankConflictCycles = 0;   ///< extra LDS cycles, section 3 phase model
  int64_t ldsAccesses = 0;          ///< LDS accesses, counted per lane
  int64_t ldsInstructions = 0;      ///< LDS accesses grouped per wave instruction
  int64_t invalidInstructions = 0;  ///< instructions the target lacks (e.g. WMMA on wave64)
  bool deadlock = false;
  std::vector<std::string> messages;  ///< the first few findings of each kind
  double seconds = 0;                 ///< wall time of the launch
  /// Hardware-layer operations executed, summed over lanes: buffer loads and
  /// stores, LDS accesses, barriers, ds_bpermute and matrix instructions (one
  /// per participating lane). Index queries (thread_id, ...) are not counted.
  int64_t laneInstructions = 0;
  int64_t workgroups = 0;
  int64_t lanes = 0;

  /// No out-of-bounds access, race, uninitialized or misaligned LDS access,
  /// deadlock or invalid instruction.
  bool clean() const {
    return outOfBounds == 0 && races == 0 && uninitializedLdsReads == 0 && misalignedLdsAccesses == 0 && !deadlock &&
           invalidInstructions == 0;
  }
  /// One line: "out_of_bounds=0 races=0 uninitialized_lds=0 misaligned_lds=0 bank_conflicts=12 deadlock=0".
  std::string summary() const;
};

/// A compiled kernel: a host shared object and its entry point.
class KernelImage {
public:
  ~KernelImage();
  const std::string &name() const { return name_; }
  const std::vector<std::string> &paramTypes() const { return paramTypes_; }

private:
  friend class Emulator;
  std::string name_;
  std::vector<std::string> paramTypes_;
  void *handle_ = nullptr;
  void (*entry_)(const void *args) = nullptr;  ///< unpacks RawArg[] into the typed call
  void *(*tlsProbe_)() = nullptr;               ///< address inside the module's TLS block
  std::string path_;
};

class Emulator {
public:
  /// Wave size, LDS banks and the matrix instructions' subnormal handling come
  /// from `target` (wave 64 for gfx942/gfx90a, 32 for gfx1151).
  explicit Emulator(const TargetInfo &target);
  ~Emulator();
  Emulator(const Emulator &) = delete;
  Emulator &operator=(const Emulator &) = delete;

  /// Tracked allocations (zero-filled, 256-byte aligned) for the out-of-bounds checker.
  void *allocate(size_t bytes);
  void release(void *p);

  /// Compiles `hipSource` (which includes "tilec_prelude.h") for the host and
  /// loads kernel `kernelName`. `paramTypes` are the C types of its parameters
  /// in order (EmittedKernel::paramTypes); empty: parsed from the signature.
  /// Compiler failures return an error carrying the compiler's log.
  llvm::Expected<std::shared_ptr<KernelImage>> load(const std::string &hipSource, const std::string &kernelName,
                                                   const std::vector<std::string> &paramTypes = {});

  /// Runs the grid to completion. An llvm::Error only for infrastructure
  /// failures (bad arguments or configuration); checker findings are in the report.
  llvm::Expected<LaunchReport> launch(const KernelImage &kernel, const LaunchConfig &config,
                                      const std::vector<Arg> &args);

  const TargetInfo &target() const { return target_; }
  /// Where compiled images are cached on disk ("" when disabled).
  const std::string &cacheDir() const { return cacheDir_; }

  struct Allocation {
    uintptr_t begin, end;
  };

private:
  TargetInfo target_;
  std::string cacheDir_;
  std::mutex mutex_;
  std::map<uintptr_t, size_t> allocations_;
  std::map<std::string, std::shared_ptr<KernelImage>> images_;
};

/// The parameter types of `kernelName`'s definition in `source`
/// ("const tl::bf16 *", "int", ...), or an error when the signature is not found.
llvm::Expected<std::vector<std::string>> parseParamTypes(const std::string &source, const std::string &kernelName);

} // namespace tilec::emu
