// A user's program: define a kernel with the tilec DSL, JIT-compile it for
// gfx942 and print its code-object report. Built and run by ctest
// (docs_example), and against an installed tilec by find_package (docs_example_installed).
//
//   C[M,N] = A[M,K] @ B[K,N]; 64x64 tiles, 4 waves, k steps of 32.
//   LDS: A tile 64x32 bf16 + B tile 32x64 bf16, padded rows: ~9 KiB.
#include <tilec/tilec.hpp>

#include <cstdio>
#include <cstring>

tilec::Kernel myGemm() {
  using namespace tilec;
  using namespace tilec::dsl;
  constexpr int64_t BM = 64, BN = 64, BK = 32;

  KernelBuilder kb("my_gemm", {.numWaves = 4});
  Tensor A = kb.tensor("A", DType::bf16, 2);
  Tensor B = kb.tensor("B", DType::bf16, 2);
  Tensor C = kb.tensor("C", DType::f32, 2);
  kb.grid({GridExtent::ceilDiv(C, 0, BM), GridExtent::ceilDiv(C, 1, BN)});
  Index row = kb.blockId(0) * BM, col = kb.blockId(1) * BN;

  Tile a = kb.ldsTile("a", {BM, BK}, DType::bf16);
  Tile b = kb.ldsTile("b", {BK, BN}, DType::bf16);
  Tile acc = kb.regTile("acc", {BM, BN}, DType::f32);
  kb.fill(acc, 0.0);
  kb.forLoop(0, cdiv(A.dim(1), BK), 1, {.numStages = 2}, [&](Index kt) {
    kb.load(A, {row, kt * BK}, a);  // a[64,32] = A[row:, k:]
    kb.load(B, {kt * BK, col}, b);  // b[32,64] = B[k:, col:]
    kb.gemm(a, b, acc);             // acc[64,64] += a @ b
  });
  kb.store(acc, C, {row, col});
  return kb.finish();
}

int main() {
  tilec::Result<tilec::CompiledKernel> ck = tilec::compile(myGemm(), {.arch = "gfx942"});
  if (!ck) {
    std::fprintf(stderr, "%s\n", ck.error().c_str());
    return 1;
  }
  std::printf("%s", ck->report.toText().c_str());
  std::printf("code object: %zu bytes, kernel %s\n", ck->codeObject.size(), ck->name.c_str());
  // A real code object: an ELF with MFMA instructions and no scratch.
  bool elf = ck->codeObject.size() > 4 && std::memcmp(ck->codeObject.data(), "\x7f" "ELF", 4) == 0;
  if (!elf || ck->report.matrixInstructions == 0 || ck->report.scratchBytes != 0) {
    std::fprintf(stderr, "unexpected code object\n");
    return 1;
  }
  return 0;
}
