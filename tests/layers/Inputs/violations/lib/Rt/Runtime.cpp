// The bundle runtime using LLVM (fixture).
#include <llvm/Support/Error.h>
