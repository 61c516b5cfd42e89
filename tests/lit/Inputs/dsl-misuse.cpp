// A DSL program with a misuse: the gemm's K extents differ (A is 64x32, B is 16x64).
#include "tilec/dsl.hpp"

tilec::Kernel kernel() {
  using namespace tilec;
  using namespace tilec::dsl;
  KernelBuilder kb("bad_gemm", {.numWaves = 4});
  Tile a = kb.ldsTile("a", {64, 32}, DType::bf16);
  Tile b = kb.ldsTile("b", {16, 64}, DType::bf16);
  Tile acc = kb.regTile("acc", {64, 64}, DType::f32);
  kb.gemm(a, b, acc); // line 11: the misuse
  return kb.finish();
}
