"""The SIMT core in Amaranth HDL (BASE and DFLOW modes). Built by the RTL issue; empty until then."""
