"""The energy model prices only the modes it models: a mode it does not (tests/dummy_mode.py) is
refused by the energy table and by the RTL power model, not priced as BASE or D-FLOW."""

import pytest
from dummy_mode import refused, with_mode

from dualflow.common.errors import ConfigError
from dualflow.energy import energy_table
from dualflow.energy.rtl_events import rtl_figures
from dualflow.machine import preset


def test_the_energy_table_refuses_a_mode_it_does_not_price():
    with pytest.raises(ConfigError, match=refused("the energy table")):
        energy_table(with_mode(preset("paper-rtx3080")))


def test_the_rtl_power_model_refuses_a_mode_it_has_no_core_of():
    config = with_mode(preset("paper-rtx3080"))
    with pytest.raises(ConfigError, match=refused("the RTL power model")):
        rtl_figures(config)
    with pytest.raises(ConfigError, match=refused("the RTL power model")):
        rtl_figures(config, runs=[])  # before looking for runs of the mode, or of another
