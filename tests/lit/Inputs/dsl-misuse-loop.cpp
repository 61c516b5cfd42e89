// A DSL program that misuses the DSL itself: a pipeline depth out of range.
#include "tilec/dsl.hpp"

tilec::Kernel kernel() {
  using namespace tilec;
  using namespace tilec::dsl;
  KernelBuilder kb("deep_loop", {.numWaves = 4});
  Tile acc = kb.regTile("acc", {64, 64}, DType::f32);
  kb.forLoop(0, 4, 1, {.numStages = 9}, [&](Index) { kb.fill(acc, 0.0); }); // line 9: the misuse
  return kb.finish();
}
