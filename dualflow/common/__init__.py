"""The bottom layer every other part builds on: the project's errors (``errors``), crash-safe file
writes (``atomic_write``), the folder of generated builds (``build_dir``) and the checkout's
commit for data files that say where they came from (``provenance``)."""
