"""The timing model runs only the modes it builds: another (tests/dummy_mode.py) is refused by
both engines before a launch, not run as BASE or D-FLOW."""

import pytest
from dummy_mode import refused, with_mode

from dualflow.common.errors import ConfigError
from dualflow.machine.config import GpuConfig
from dualflow.models.timing.device import ENGINES, TimingDevice
from dualflow.models.timing.gpu import Gpu


@pytest.mark.parametrize("engine", ENGINES)
def test_each_engine_refuses_a_mode_the_timing_model_does_not_build(engine):
    with pytest.raises(ConfigError, match=refused("the timing model")):
        TimingDevice(with_mode(GpuConfig(num_sms=1)), engine=engine)


def test_the_reference_gpu_refuses_it_too():
    with pytest.raises(ConfigError, match=refused("the timing model")):
        Gpu(with_mode(GpuConfig(num_sms=1)))
