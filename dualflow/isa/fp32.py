"""FP32 facts the instruction set fixes (docs/isa.md "FP32 semantics"), shared by the golden model
(``dualflow/models/fp32.py``) and the RTL's FP units (``dualflow/rtl/fp/``)."""

#: The only NaN an arithmetic instruction produces.
CANONICAL_NAN = 0x7FFFFFFF
