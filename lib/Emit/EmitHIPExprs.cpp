// The HIP emitter's expressions: index arithmetic (arith ops become `const
// int` lines) and tile.map's element functions (a lambda per map, applied by
// the device prelude's tl::map). The other operations are in EmitHIPOps.cpp.
#include "Emit/HIPEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace tilec::hip {

LogicalResult Emitter::emitArith(Operation &op) {
  auto bin = [&](const char *fmt) {
    std::string n = fresh("v");
    line() << "const int " << n << " = "
           << llvm::formatv(fmt, name(op.getOperand(0)), name(op.getOperand(1))) << ";\n";
    names[op.getResult(0)] = n;
    return success();
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](arith::ConstantOp c) -> LogicalResult {
        if (auto i = dyn_cast<IntegerAttr>(c.getValue())) {
          names[c] = std::to_string(i.getInt());
          return success();
        }
        if (auto fl = dyn_cast<FloatAttr>(c.getValue())) {
          names[c] = floatLiteral(fl.getValueAsDouble());
          return success();
        }
        return c.emitOpError() << "constant kind is not supported by the HIP emitter";
      })
      .Case([&](arith::AddIOp) { return bin("{0} + {1}"); })
      .Case([&](arith::SubIOp) { return bin("{0} - {1}"); })
      .Case([&](arith::MulIOp) { return bin("{0} * {1}"); })
      .Case([&](arith::DivUIOp) { return bin("{0} / {1}"); })
      .Case([&](arith::DivSIOp) { return bin("{0} / {1}"); })
      .Case([&](arith::RemUIOp) { return bin("{0} % {1}"); })
      .Case([&](arith::RemSIOp) { return bin("{0} % {1}"); })
      .Case([&](arith::CeilDivUIOp) { return bin("tl::cdiv({0}, {1})"); })
      .Case([&](arith::CeilDivSIOp) { return bin("tl::cdiv({0}, {1})"); })
      .Case([&](arith::MinUIOp) { return bin("tl::imin({0}, {1})"); })
      .Case([&](arith::MinSIOp) { return bin("tl::imin({0}, {1})"); })
      .Case([&](arith::MaxUIOp) { return bin("tl::imax({0}, {1})"); })
      .Case([&](arith::MaxSIOp) { return bin("tl::imax({0}, {1})"); })
      .Case([&](arith::IndexCastOp c) {
        names[c] = name(c.getIn());
        return success();
      })
      .Default([&](Operation *o) {
        return o->emitOpError() << "is not supported by the HIP emitter yet";
      });
}

LogicalResult Emitter::emitMap(tile::MapOp m) {
  // The scalar operand, the attribute, or both combined (a loop-invariant
  // product or sum that the compiler forms once).
  std::string s;
  Value sv = m.getScalarValue();
  std::optional<APFloat> a = m.getScalar();
  if (sv && a)
    s = "(" + name(sv) + (m.getFn() == tile::MapFn::scale ? " * " : " + ") + floatLiteral(a->convertToDouble()) + ")";
  else if (sv)
    s = name(sv);
  else if (a)
    s = floatLiteral(a->convertToDouble());
  // Functions beyond one IEEE operation are the prelude's (tilec_scalars.h,
  // "math"): built from the target's own instructions, never a library call.
  std::string fn;
  using F = tile::MapFn;
  switch (m.getFn()) {
  case F::copy: fn = "x"; break;
  case F::neg: fn = "-x"; break;
  case F::exp: fn = "tl::exp(x)"; break;
  case F::exp2: fn = "tl::exp2(x)"; break;
  case F::log: fn = "tl::log(x)"; break;
  case F::recip: fn = "tl::recip(x)"; break;
  case F::relu: fn = "__builtin_fmaxf(x, 0.0f)"; break;
  case F::silu: fn = "tl::silu(x)"; break;
  case F::sigmoid: fn = "tl::sigmoid(x)"; break;
  case F::gelu_tanh: fn = "tl::gelu_tanh(x)"; break;
  case F::scale: fn = "x * " + s; break;
  case F::add_scalar: fn = "x + " + s; break;
  case F::ceil: fn = "__builtin_ceilf(x)"; break;
  case F::sqrt: fn = "tl::sqrt(x)"; break;
  case F::rsqrt: fn = "tl::rsqrt(x)"; break;
  case F::abs: fn = "__builtin_fabsf(x)"; break;
  case F::tanh: fn = "tl::tanh(x)"; break;
  case F::add: fn = "x + y"; break;
  case F::sub: fn = "x - y"; break;
  case F::mul: fn = "x * y"; break;
  case F::div: fn = "tl::div(x, y)"; break;
  case F::max: fn = "__builtin_fmaxf(x, y)"; break;
  case F::min: fn = "__builtin_fminf(x, y)"; break;
  case F::sub_exp2: fn = "tl::sub_exp2(x, y)"; break;
  case F::safe_div: fn = "tl::safe_div(x, y)"; break;
  case F::eq: fn = "x == y ? 1.0f : 0.0f"; break;
  case F::neg_inf_where: fn = "y != 0.0f ? -__builtin_inff() : x"; break;
  case F::le: fn = "x <= y ? 1.0f : 0.0f"; break;
  case F::mul_add: fn = "__builtin_fmaf(x, y, d)"; break;
  }
  if (m.getBroadcastCols())
    return m.emitOpError() << "column broadcasts of rank-1 tiles are not supported by the HIP emitter yet (a [1, "
                              "N] tile broadcasts over the rows of a tile in a blocked layout)";
  bool binary = tile::MapOp::isBinary(m.getFn());
  // An update (mul_add) reads the destination's old value as `d`.
  const bool update = m.getFn() == F::mul_add;
  std::string capture = m.getScalarValue() ? "=" : "";
  line() << (update ? "tl::update(" : "tl::map(") << name(m.getDest());
  for (Value in : m.getInputs())
    os << ", " << name(in);
  os << ", [" << capture << "](" << (update ? "float d, " : "") << "float x" << (binary ? ", float y" : "")
     << ") { return " << fn << "; });\n";
  return success();
}

} // namespace tilec::hip
