"""Hypothesis profiles for the whole suite.

``ci`` (the default): every property test draws the same examples on every run (``derandomize``,
no example database), so a run is reproducible and a failure in CI is the one a developer sees.
``explore`` (``HYPOTHESIS_PROFILE=explore``): fresh random examples each run, to look for new
failures. Neither has a deadline: a test's wall time measures the machine, not the code.
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("explore", database=None, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
