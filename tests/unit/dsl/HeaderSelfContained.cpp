// The DSL's umbrella header compiles on its own, with only the standard library
// (house rule 7): this file includes nothing else. IndexTest calls it.
#include "tilec/dsl.hpp"

namespace tilec::test {

Kernel selfContainedKernel() {
  dsl::KernelBuilder kb("self_contained");
  dsl::Tensor x = kb.tensor("x", DType::f32, 1);
  dsl::Tile t = kb.regTile("t", {64}, DType::f32);
  kb.load(x, {kb.blockId(0) * 64}, t);
  kb.store(t, x, {kb.blockId(0) * 64});
  return kb.finish();
}

} // namespace tilec::test
