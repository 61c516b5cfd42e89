# -*- Python -*-
# lit configuration for tilec's IR and command-line tests.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "tilec"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tilec_obj_root, "tests", "lit")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "Inputs"]

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.tilec_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["tilec-opt", "tilec-pch", "tilec-model", "tilec", "FileCheck", "not", "count"], tool_dirs)
config.substitutions.append(("%prelude", os.path.join(config.tilec_src_root, "lib", "Emit", "prelude")))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
# Tests never touch the user's cache.
config.environment["TILEC_CACHE_DIR"] = os.path.join(config.test_exec_root, "cache")
