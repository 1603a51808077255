"""The SIMT core in Amaranth HDL (BASE and DFLOW modes), one component per block; docs/rtl.md."""
