# Writes the device prelude into a C++ source as a raw string literal.
file(READ ${INPUT} content)
file(WRITE ${OUTPUT} "// Generated from lib/Emit/prelude/tilec_prelude.h; do not edit.\n#include <string>\nnamespace tilec {\nconst std::string &devicePreludeText() {\n  static const std::string text = R\"tilec_prelude(${content})tilec_prelude\";\n  return text;\n}\n} // namespace tilec\n")
