// A DSL program that is not valid C++: `undeclared_tile` does not exist.
#include "tilec/dsl.hpp"

tilec::Kernel kernel() {
  using namespace tilec::dsl;
  KernelBuilder kb("broken", {.numWaves = 4});
  kb.fill(undeclared_tile, 0.0);
  return kb.finish();
}
