"""Random programs for co-simulation: the structured-program generator (``generator``), its use
on the RTL core (``core_programs``: programs that fit a ``CoreParams``, in its form) and the
programs that fault on purpose (``fault_programs``)."""
