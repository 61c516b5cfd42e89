#!/usr/bin/env python3
"""Checks that includes and CMake link dependencies go down the layer stack.

The stack is described in docs/design.md, section 10 ("Layers"); ALLOWED below is
its executable form. Every #include of lib/, include/, kernels/ and tools/ is
resolved to a file of the repository (or to an external library: llvm, mlir,
clang, lld) and must point to a component that its own component may use; every
target_link_libraries of lib/ must name targets of such components. A violation
is reported as file:line with the rule it breaks, and the exit status is 1.

Usage: check-layers.py [REPO_ROOT]   (default: the folder above this script)
"""

import os
import re
import sys

# Components a component may include from or link (itself always). "include"
# is the public API (include/tilec); llvm/mlir/clang/lld are external headers.
ALLOWED = {
    "include": set(),
    "lib/Target": {"include"},
    "lib/Dialect": {"lib/Target", "llvm", "mlir"},
    # Builds tile IR from a recorded kernel (the public DSL's operation list).
    "lib/Import": {"lib/Dialect", "lib/Target", "include", "llvm", "mlir"},
    "lib/Transforms": {"lib/Dialect", "lib/Target", "llvm", "mlir"},
    "lib/Emit": {"lib/Dialect", "lib/Target", "include", "llvm", "mlir"},
    "lib/JIT": {"lib/Target", "include", "llvm", "clang", "lld"},
    # The emulator implements the prelude's hardware layer and compiles the
    # prelude's text: it may use those files of lib/Emit (PARTIAL), nothing
    # that brings in MLIR.
    "lib/Emu": {"lib/Target", "llvm"},
    "lib/Runtime": {"lib/Emu", "lib/Target", "include", "llvm"},
    "lib/Driver": {"lib/Dialect", "lib/Import", "lib/Transforms", "lib/Emit", "lib/JIT", "lib/Runtime", "lib/Target",
                   "include", "llvm", "mlir"},
    # The compiled-code cost model: reads assembly text and the target table.
    "lib/Model": {"lib/Target", "include"},
    # Kernel-agnostic: it tunes what it is given through the public API
    # (which lib/Driver implements), ranking candidates with lib/Model.
    "lib/Tune": {"lib/Driver", "lib/Model", "lib/Target", "include", "llvm"},
    # Loaded where no compiler is installed: libc, libstdc++ and libdl only.
    "lib/Rt": {"include"},
    # Kernels' target defaults may size themselves to the device (lib/Model's facts).
    "kernels": {"lib/Driver", "lib/Model", "lib/Target", "lib/Tune", "include", "llvm"},
    "tools": None,  # the top: anything
}

# Files of another component that a component may use although the rest of
# that component is out of its reach.
PARTIAL = {
    "lib/Emu": ["lib/Emit/Prelude.h", "lib/Emit/prelude/"],
}

# Known exceptions, each with the work that removes it.
KNOWN_EXCEPTIONS = set()

# CMake targets of each component.
TARGETS = {
    "tilec_target": "lib/Target",
    "tilec_dialect": "lib/Dialect",
    "tilec_import": "lib/Import",
    "tilec_transforms": "lib/Transforms",
    "tilec_emit": "lib/Emit",
    "tilec_emit_prelude": "lib/Emit/Prelude.h",  # the prelude's text alone
    "tilec_front": "lib/JIT",
    "tilec_jit": "lib/JIT",
    "tilec_emu": "lib/Emu",
    "tilec_runtime": "lib/Runtime",
    "tilec_lib": "lib/Driver",
    "tilec_tune": "lib/Tune",
    "tilec_model": "lib/Model",
    "tilec_bundle": "lib/Rt",
    "tilec_rt": "lib/Rt",
    "tilec_kernels": "kernels",
    "tilec_kernel_tuning": "kernels",
    "tilec_cli": "tools",
    "LLVM": "llvm",
    "MLIR": "mlir",
    "clang-cpp": "clang",
}

EXTERNAL_PREFIXES = {"llvm": "llvm", "llvm-c": "llvm", "mlir": "mlir", "clang": "clang", "lld": "lld"}
SOURCE_EXT = (".h", ".hpp", ".cpp", ".cc", ".inc")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def component(rel):
    """The component a repository path belongs to, or None."""
    parts = rel.split("/")
    if parts[0] == "lib" and len(parts) > 2:
        return "lib/" + parts[1]
    if parts[0] in ("include", "kernels", "tools"):
        return parts[0]
    return None


def external(name):
    return EXTERNAL_PREFIXES.get(name.split("/")[0])


def resolve(root, rel, name):
    """The repository path an include names, trying the includer's folder and
    the include roots the build uses (lib/, include/, kernels/)."""
    for base in (os.path.dirname(rel), "lib", "include", "kernels"):
        cand = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def may_use(user, used_rel, used_comp):
    if used_comp == user:
        return True
    allowed = ALLOWED[user]
    if allowed is None or used_comp in allowed:
        return True
    return any(used_rel.startswith(p) for p in PARTIAL.get(user, []))


def check_includes(root):
    errors = []
    for top in ("include", "lib", "kernels", "tools"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith(SOURCE_EXT):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), root)
                user = component(rel)
                if user is None:
                    continue
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
                    for lineno, line in enumerate(fh, 1):
                        m = INCLUDE_RE.match(line)
                        if not m:
                            continue
                        name = m.group(2)
                        ext = external(name)
                        if ext:
                            used_rel, used = name, ext
                        else:
                            used_rel = resolve(root, rel, name) if m.group(1) == '"' else None
                            used = component(used_rel) if used_rel else None
                            if used is None:
                                continue  # the standard library, a generated file, another package
                        if may_use(user, used_rel, used) or (rel, used_rel) in KNOWN_EXCEPTIONS:
                            continue
                        errors.append(f"{rel}:{lineno}: {user} must not include {used_rel} ({used}): "
                                      f"{user} may use {describe(user)}")
    return errors


def describe(comp):
    allowed = sorted(ALLOWED[comp] or [])
    extra = PARTIAL.get(comp, [])
    return ", ".join(allowed + extra) if allowed or extra else "nothing outside itself"


LINK_RE = re.compile(r"target_link_libraries\s*\(\s*(\S+)(.*?)\)", re.S)
GENEX_RE = re.compile(r"\$<[^<>]*,([A-Za-z0-9_\-]+)>")


def link_names(args):
    """Target names in target_link_libraries' arguments (generator expressions unwrapped)."""
    flat = args
    while True:
        unwrapped = re.sub(r"\$<(?:BUILD_INTERFACE|LINK_LIBRARY:[A-Z_]+,|TARGET_FILE):?([^<>]*)>", r" \1 ", flat)
        if unwrapped == flat:
            break
        flat = unwrapped
    return re.findall(r"[A-Za-z0-9_\-]+", flat)


def check_links(root):
    errors = []
    for dirpath, _, files in os.walk(os.path.join(root, "lib")):
        if "CMakeLists.txt" not in files:
            continue
        rel = os.path.relpath(os.path.join(dirpath, "CMakeLists.txt"), root)
        text = open(os.path.join(root, rel), encoding="utf-8").read()
        for m in LINK_RE.finditer(text):
            target = m.group(1)
            user = TARGETS.get(target)
            if user is None or user not in ALLOWED:
                continue
            lineno = text.count("\n", 0, m.start()) + 1
            for name in link_names(m.group(2)):
                used = TARGETS.get(name)
                if used is None:
                    continue
                used_comp = used if used in ALLOWED or used in EXTERNAL_PREFIXES.values() else component(used)
                if may_use(user, used, used_comp) or (target, name) in KNOWN_EXCEPTIONS:
                    continue
                errors.append(f"{rel}:{lineno}: {target} ({user}) must not link {name} ({used_comp}): "
                              f"{user} may use {describe(user)}")
    return errors


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    errors = check_includes(root) + check_links(root)
    for e in errors:
        print(e)
    if errors:
        print(f"check-layers: {len(errors)} dependencies go up the layer stack (docs/design.md, section 10)")
        return 1
    print("check-layers: every include and link of lib/, include/, kernels/ and tools/ goes down the stack")
    return 0


if __name__ == "__main__":
    sys.exit(main())
