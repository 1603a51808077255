"""Technology scaling (dualflow/synth/scaling.py): the paper's own worked example, the direction of every
figure from 180 nm to 10 nm, and clear errors for nodes and voltages the model lacks."""

import pytest

from dualflow.common.errors import ConfigError
from dualflow.synth import scaling


def test_energy_reproduces_the_papers_worked_example():
    # Stillmaker & Baas, section 4.2.1 as corrected by the authors' erratum: 1 pJ/op at 65 nm and
    # 1.3 V is 0.4571 / 2.604 x 1 pJ = 0.1755 pJ/op at HP 32 nm and 0.9 V
    s = scaling.scale_energy(1.0, "65", 1.3, "HP32", 0.9)
    assert s.value == pytest.approx(0.1755, abs=5e-4)
    assert "scaled from node 65 at 1.3 V to node HP32 at 0.9 V" in s.label


def test_every_figure_shrinks_from_180_nm_to_10_nm():
    for scale in (scaling.scale_delay, scaling.scale_energy, scaling.scale_leakage):
        assert 0 < scale(1.0, "180", 1.8, "HP10", 0.75).value < 1
    assert scaling.scale_area(1.0, "180", "HP10").value == pytest.approx(0.0055)
    assert scaling.scale_area(1.0, "LP7", "180").value == pytest.approx(320)


def test_lower_voltage_lowers_energy_at_one_node():
    low = scaling.scale_energy(1.0, "HP10", 0.8, "HP10", 0.7).value
    assert low < 1.0


def test_a_node_the_paper_lacks_is_a_clear_error():
    with pytest.raises(ConfigError, match="'8' is not in the scaling model.*HP10"):
        scaling.scale_energy(1.0, "180", 1.8, "8", 0.7)
    with pytest.raises(ConfigError, match="need a device class"):
        scaling.scale_area(1.0, "180", "45")
    with pytest.raises(ConfigError, match="positive number of volts"):
        scaling.scale_delay(1.0, "180", 0, "HP7", 0.7)
