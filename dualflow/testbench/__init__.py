"""cocotb benches: each RTL block against a Python model (``blocks``), and the whole core against
the golden model's retirement trace (``core``, ``cosim``, ``workload_cosim``, ``faults``)."""
