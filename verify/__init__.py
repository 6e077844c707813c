"""verify: re-execute course notebooks on real JAX and prove their saved outputs still hold.

Import nothing heavy here so that `python -m verify.cli` starts fast.
"""

HARNESS_VERSION = "1.0.0"
METADATA_KEY = "course"

__all__ = ["HARNESS_VERSION", "METADATA_KEY"]
