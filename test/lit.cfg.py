# lit configuration for the emb tests: IR round trips and verifier errors
# (Dialect/), passes (Passes/) and model files (Frontend/).
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "EMB"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs",
                   "unit", "e2e", "fuzz"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.emb_obj_root, "test")
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["emb-opt", "embc", "embrun", "emb-parity", "emb-plot"], [os.path.join(config.emb_obj_root, "bin")])
config.substitutions.append(("%examples", os.path.join(config.emb_src_root, "examples")))
