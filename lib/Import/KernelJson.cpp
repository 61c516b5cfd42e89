// Reads a recorded kernel from JSON (Kernel::toJson's format, docs/design.md).
#include "Import/BuildKernel.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"

#include "llvm/ADT/bit.h"

namespace tilec::import {

namespace {

namespace json = llvm::json;

/// Reads with a path for messages ("ops[3].attrs[0]: expected an integer").
class Reader {
public:
  explicit Reader(llvm::StringRef bufferName) : bufferName(bufferName) {}

  llvm::Expected<Kernel> kernel(const json::Value &v) {
    const json::Object *o = object(v, "kernel");
    if (!o)
      return fail();
    std::optional<llvm::StringRef> format = o->getString("format");
    if (!format || *format != "tilec.kernel.v1")
      return fail("format", "expected \"tilec.kernel.v1\"");
    std::string name = string(*o, "kernel", "");
    int64_t numWaves = integer(*o, "num_waves", "");
    std::vector<GridDim> grid;
    for (auto [i, g] : llvm::enumerate(array(*o, "grid", ""))) {
      std::vector<int64_t> dims = ints(g, "grid[" + std::to_string(i) + "]");
      if (ok && dims.size() != 3)
        return fail("grid[" + std::to_string(i) + "]", "expected [arg, axis, tile]");
      if (ok)
        grid.push_back(GridDim{static_cast<int>(dims[0]), static_cast<int>(dims[1]), dims[2]});
    }
    std::vector<KernelArg> args;
    for (auto [i, a] : llvm::enumerate(array(*o, "args", ""))) {
      std::string at = "args[" + std::to_string(i) + "]";
      const json::Object *ao = object(a, at);
      if (!ao)
        return fail();
      KernelArg arg{string(*ao, "name", at), ArgKind::Tensor, dtype(*ao, at), static_cast<int>(integer(*ao, "rank", at)),
                    integer(*ao, "divisibility", at), static_cast<int>(integer(*ao, "value", at))};
      std::string kind = string(*ao, "kind", at);
      if (kind == "f32")
        arg.kind = ArgKind::F32;
      else if (kind == "i32")
        arg.kind = ArgKind::I32;
      else if (kind == "index")
        arg.kind = ArgKind::Index;
      else if (kind != "tensor" && ok)
        return fail(at + ".kind", "expected tensor, f32, i32 or index, got '" + kind + "'");
      args.push_back(std::move(arg));
    }
    record::Recording rec;
    for (auto [i, t] : llvm::enumerate(array(*o, "values", "")))
      rec.values.push_back(type(t, "values[" + std::to_string(i) + "]"));
    for (auto [i, l] : llvm::enumerate(array(*o, "locations", ""))) {
      std::string at = "locations[" + std::to_string(i) + "]";
      if (const json::Object *lo = object(l, at))
        rec.locations.push_back({string(*lo, "file", at), static_cast<int>(integer(*lo, "line", at))});
    }
    rec.functionLoc = static_cast<int>(integer(*o, "function_loc", ""));
    rec.returnLoc = static_cast<int>(integer(*o, "return_loc", ""));
    for (auto [i, op] : llvm::enumerate(array(*o, "ops", "")))
      rec.ops.push_back(operation(op, "ops[" + std::to_string(i) + "]"));
    if (!ok)
      return fail();
    return Kernel(std::move(name), static_cast<int>(numWaves), std::move(grid), std::move(args), std::move(rec));
  }

private:
  llvm::Error fail(const std::string &at = "", const std::string &msg = "") {
    if (ok && !msg.empty())
      note(at, msg);
    return llvm::createStringError(llvm::inconvertibleErrorCode(), bufferName + ": " + error);
  }
  void note(const std::string &at, const std::string &msg) {
    if (!ok)
      return;
    ok = false;
    error = (at.empty() ? "" : at + ": ") + msg;
  }
  static std::string join(const std::string &at, llvm::StringRef key) {
    return at.empty() ? key.str() : at + "." + key.str();
  }

  const json::Object *object(const json::Value &v, const std::string &at) {
    if (const json::Object *o = v.getAsObject())
      return o;
    note(at, "expected an object");
    return nullptr;
  }
  const json::Value *field(const json::Object &o, llvm::StringRef key, const std::string &at) {
    if (const json::Value *v = o.get(key))
      return v;
    note(join(at, key), "missing");
    return nullptr;
  }
  std::string string(const json::Object &o, llvm::StringRef key, const std::string &at) {
    const json::Value *v = field(o, key, at);
    if (v && v->getAsString())
      return v->getAsString()->str();
    if (v)
      note(join(at, key), "expected a string");
    return "";
  }
  int64_t integer(const json::Value &v, const std::string &at) {
    if (std::optional<int64_t> i = v.getAsInteger())
      return *i;
    note(at, "expected an integer");
    return 0;
  }
  int64_t integer(const json::Object &o, llvm::StringRef key, const std::string &at) {
    const json::Value *v = field(o, key, at);
    return v ? integer(*v, join(at, key)) : 0;
  }
  llvm::ArrayRef<json::Value> array(const json::Value &v, const std::string &at) {
    if (const json::Array *a = v.getAsArray())
      return a->empty() ? llvm::ArrayRef<json::Value>() : llvm::ArrayRef<json::Value>(&a->front(), a->size());
    note(at, "expected an array");
    return {};
  }
  llvm::ArrayRef<json::Value> array(const json::Object &o, llvm::StringRef key, const std::string &at) {
    const json::Value *v = field(o, key, at);
    return v ? array(*v, join(at, key)) : llvm::ArrayRef<json::Value>();
  }
  std::vector<int64_t> ints(const json::Value &v, const std::string &at) {
    std::vector<int64_t> out;
    for (auto [i, x] : llvm::enumerate(array(v, at)))
      out.push_back(integer(x, at + "[" + std::to_string(i) + "]"));
    return out;
  }
  DType dtype(const json::Object &o, const std::string &at) {
    std::string s = string(o, "dtype", at);
    if (std::optional<DType> t = parseDType(s))
      return *t;
    note(join(at, "dtype"), "unknown element type '" + s + "'");
    return DType::f32;
  }

  record::Type type(const json::Value &v, const std::string &at) {
    record::Type t;
    const json::Object *o = object(v, at);
    if (!o)
      return t;
    std::string kind = string(*o, "type", at);
    if (kind == "index")
      t.kind = record::Type::Index;
    else if (kind == "i32")
      t.kind = record::Type::I32;
    else if (kind == "f32")
      t.kind = record::Type::F32;
    else if (kind == "tensor") {
      t.kind = record::Type::Tensor;
      t.dtype = dtype(*o, at);
      t.rank = static_cast<int>(integer(*o, "rank", at));
    } else if (kind == "tile") {
      t.kind = record::Type::Tile;
      t.dtype = dtype(*o, at);
      if (const json::Value *shape = field(*o, "shape", at))
        t.shape = ints(*shape, join(at, "shape"));
      std::string space = string(*o, "space", at);
      if (space != "lds" && space != "reg")
        note(join(at, "space"), "expected lds or reg, got '" + space + "'");
      t.space = space == "lds" ? dsl::Space::lds : dsl::Space::reg;
    } else {
      note(join(at, "type"), "expected index, i32, f32, tensor or tile, got '" + kind + "'");
    }
    return t;
  }

  record::Attr attribute(const json::Value &v, const std::string &at) {
    record::Attr a;
    const json::Object *o = object(v, at);
    if (!o)
      return a;
    a.name = string(*o, "name", at);
    if (o->get("unit")) {
      a.kind = record::Attr::Unit;
    } else if (const json::Value *b = o->get("bool")) {
      a.kind = record::Attr::Bool;
      if (std::optional<bool> on = b->getAsBoolean())
        a.i = *on;
      else
        note(join(at, "bool"), "expected true or false");
    } else if (const json::Value *i = o->get("int")) {
      a.kind = record::Attr::Int;
      a.i = integer(*i, join(at, "int"));
    } else if (const json::Value *f = o->get("float")) {
      a.kind = record::Attr::Float;
      a.f = number(*f, join(at, "float"));
    } else if (o->get("string")) {
      a.kind = record::Attr::String;
      a.s = string(*o, "string", at);
    } else if (const json::Value *list = o->get("ints")) {
      a.kind = record::Attr::Ints;
      a.ints = ints(*list, join(at, "ints"));
    } else if (o->get("enum")) {
      a.kind = record::Attr::Enum;
      a.s = string(*o, "enum", at);
    } else if (const json::Value *dict = o->get("dict")) {
      a.kind = record::Attr::Dict;
      for (auto [k, f] : llvm::enumerate(array(*dict, join(at, "dict"))))
        a.fields.push_back(attribute(f, join(at, "dict") + "[" + std::to_string(k) + "]"));
    } else {
      note(at, "expected one of unit, bool, int, float, string, ints, enum or dict");
    }
    return a;
  }

  /// A finite number, or the bit pattern of a non-finite one ("0x7FF0...").
  double number(const json::Value &v, const std::string &at) {
    if (std::optional<double> d = v.getAsNumber())
      return *d;
    uint64_t bits = 0;
    if (std::optional<llvm::StringRef> s = v.getAsString();
        s && s->starts_with_insensitive("0x") && !s->drop_front(2).getAsInteger(16, bits))
      return llvm::bit_cast<double>(bits);
    note(at, "expected a number or the bit pattern \"0x...\" of a non-finite one");
    return 0;
  }

  record::Op operation(const json::Value &v, const std::string &at) {
    record::Op op;
    const json::Object *o = object(v, at);
    if (!o)
      return op;
    op.name = string(*o, "op", at);
    for (auto [g, group] : llvm::enumerate(array(*o, "operands", at))) {
      std::vector<int> ids;
      for (int64_t id : ints(group, join(at, "operands") + "[" + std::to_string(g) + "]"))
        ids.push_back(static_cast<int>(id));
      op.operands.push_back(std::move(ids));
    }
    if (const json::Value *results = field(*o, "results", at))
      for (int64_t id : ints(*results, join(at, "results")))
        op.results.push_back(static_cast<int>(id));
    for (auto [k, a] : llvm::enumerate(array(*o, "attrs", at)))
      op.attrs.push_back(attribute(a, join(at, "attrs") + "[" + std::to_string(k) + "]"));
    op.loc = static_cast<int>(integer(*o, "loc", at));
    return op;
  }

  std::string bufferName;
  bool ok = true;
  std::string error;
};

} // namespace

llvm::Expected<Kernel> kernelFromJson(llvm::StringRef text, llvm::StringRef bufferName) {
  llvm::Expected<json::Value> v = json::parse(text);
  if (!v)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   bufferName + ": not a recorded kernel (invalid JSON): " +
                                       llvm::toString(v.takeError()));
  return Reader(bufferName).kernel(*v);
}

} // namespace tilec::import
