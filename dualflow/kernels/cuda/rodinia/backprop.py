"""Rodinia backprop: one training step of a 3-layer perceptron, the input layer on the GPU
(layerforward's shared-memory column reduction, then adjust_weights), the rest on the host."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dualflow.kernels.compiled import CompiledWorkload

from ..sdk.compare import bit_exact

HID = 16  # hidden units: the block width (backprop.cu's WIDTH)
HEIGHT = 16  # input rows per block
OUT = 1  # output units
TARGET = np.float32(0.1)  # bpnn_randomize_row sets the target to 0.1
ETA = MOMENTUM = 0.3  # Rodinia's learning rate and momentum (double constants)

f32 = np.float32


def layer_sums(input_units: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """layerforward's hidden_partial_sum (blocks x HID) in the kernel's FP32 order: each weight
    times its row's input, then per block of HEIGHT rows a tree that adds rows 2^(i-1) apart onto
    the multiples of 2^i."""
    rows = weights[1:, 1:] * input_units[1:, None]  # (in, HID): rows 1..in, hidden units 1..HID
    tile = rows.reshape(-1, HEIGHT, HID)
    step = 2
    while step <= HEIGHT:
        tile[:, ::step] = tile[:, ::step] + tile[:, step // 2::step]
        step *= 2
    return tile[:, 0, :]


def squash(x):
    """The logistic function as Rodinia's host computes it: 1 / (1 + exp(-x)) in double, stored as float."""
    return f32(1.0 / (1.0 + np.exp(-np.float64(x))))


def host_backward(partial: np.ndarray, input_weights: np.ndarray, hidden_weights: np.ndarray,
                  hidden_prev_weights: np.ndarray) -> np.ndarray:
    """bpnn_train_cuda's host part between the two kernels: the hidden layer from the blocks' partial
    sums, the output layer, the output and hidden errors, the hidden-to-output weight update (in
    place on hidden_weights and hidden_prev_weights); returns hidden_delta (index 0 unused), the
    adjust_weights kernel's delta. As the C code: float variables and sums, double arithmetic where a
    double constant (1.0, ETA, MOMENTUM) takes part."""
    hidden = np.zeros(HID + 1, np.float32)
    hidden[0] = 1.0
    for j in range(1, HID + 1):
        total = f32(0.0)
        for value in partial[:, j - 1]:  # float sum over the blocks, in order
            total = f32(total + value)
        hidden[j] = squash(f32(total + input_weights[0, j]))
    output = np.zeros(OUT + 1, np.float32)
    for j in range(1, OUT + 1):  # bpnn_layerforward on the host
        total = f32(0.0)
        for k in range(HID + 1):
            total = f32(total + f32(hidden_weights[k, j] * hidden[k]))
        output[j] = squash(total)
    output_delta = np.zeros(OUT + 1, np.float32)
    for j in range(1, OUT + 1):  # bpnn_output_error
        o = float(output[j])  # o * (1.0 - o) is double in C, (t - o) float
        output_delta[j] = f32(o * (1.0 - o) * float(f32(TARGET - output[j])))
    hidden_delta = np.zeros(HID + 1, np.float32)
    for j in range(1, HID + 1):  # bpnn_hidden_error
        total = f32(0.0)
        for k in range(1, OUT + 1):
            total = f32(total + f32(output_delta[k] * hidden_weights[j, k]))
        h = float(hidden[j])
        hidden_delta[j] = f32(h * (1.0 - h) * float(total))
    for j in range(1, OUT + 1):  # bpnn_adjust_weights of the output layer
        for k in range(HID + 1):
            change = f32(ETA * float(output_delta[j]) * float(hidden[k]) + MOMENTUM * float(hidden_prev_weights[k, j]))
            hidden_weights[k, j] = f32(hidden_weights[k, j] + change)
            hidden_prev_weights[k, j] = change
    return hidden_delta


def adjusted(delta: np.ndarray, inputs: np.ndarray, weights: np.ndarray, prev: np.ndarray):
    """adjust_weights in the kernel's FP32 order: change = (0.3 * delta_j) * ly_i + 0.3 * oldw_ij,
    w += change, oldw = change, for rows 1..in; row 0 (bias, input 1): 0.3 * delta_j + 0.3 * oldw_0j."""
    eta, momentum = f32(ETA), f32(MOMENTUM)
    w, oldw = weights.copy(), prev.copy()
    change = (eta * delta[None, 1:]) * inputs[1:, None] + momentum * prev[1:, 1:]
    w[1:, 1:] = w[1:, 1:] + change
    oldw[1:, 1:] = change
    bias = eta * delta[1:] + momentum * prev[0, 1:]
    w[0, 1:] = w[0, 1:] + bias
    oldw[0, 1:] = bias
    return w, oldw


class Backprop(CompiledWorkload):
    suite = "rodinia"
    name = "backprop"
    description = ("perceptron training step (Rodinia backprop): layerforward multiplies 16x16 weight tiles by the "
                   "inputs and sums columns with a shared-memory tree (a barrier per level); adjust_weights "
                   "updates every weight with momentum")
    cuda_source = Path(__file__).with_name("backprop.cu")
    cuda_flags = ("-ffp-contract=off",)
    sizes = {
        # 4 blocks of 16 x 16
        "tiny": {"layer_size": 64},
        # 128 blocks
        "small": {"layer_size": 2048},
        # Rodinia's run script `backprop 65536`: 4096 blocks, 1,048,576 threads per launch
        "paper": {"layer_size": 65536},
    }
    tolerance = ("bit-exact against numpy FP32 in the kernels' operation order (no FMA): the blocks' partial sums, "
                 "the adjusted input weights and their changes; the host steps between the kernels are shared")

    def generate(self, rng, layer_size):
        if layer_size <= 0 or layer_size % HEIGHT:
            raise ValueError(f"backprop: layer_size must be a positive multiple of {HEIGHT}, not {layer_size}")
        # bpnn_randomize_weights / load(): rand() / RAND_MAX in [0, 1]; input unit 0 is never read
        return {"input_units": rng.random(layer_size + 1, dtype=np.float32),
                "input_weights": rng.random((layer_size + 1, HID + 1), dtype=np.float32),
                "hidden_weights": rng.random((HID + 1, OUT + 1), dtype=np.float32)}

    def execute(self, dev, module, inputs, layer_size):
        blocks = layer_size // HEIGHT
        grid, block = (1, blocks), (HEIGHT, HID)
        weights = inputs["input_weights"]
        input_cuda = dev.upload(inputs["input_units"])
        input_hidden_cuda = dev.upload(weights)
        partial_cuda = dev.alloc(4 * blocks * HID)
        dev.launch(module["bpnn_layerforward"], grid=grid, block=block,
                   params=[input_cuda, input_hidden_cuda, partial_cuda, layer_size, HID])
        partial = dev.copy_out(partial_cuda, blocks * HID, np.float32).reshape(blocks, HID)

        hidden_weights = inputs["hidden_weights"].copy()
        hidden_prev = np.zeros_like(hidden_weights)
        delta = host_backward(partial, weights, hidden_weights, hidden_prev)

        hidden_delta_cuda = dev.upload(delta)
        prev_cuda = dev.upload(np.zeros_like(weights))  # input_prev_weights start at zero
        dev.copy_in(input_hidden_cuda, weights)  # layerforward overwrote them with its tile sums
        dev.launch(module["bpnn_adjust_weights"], grid=grid, block=block,
                   params=[hidden_delta_cuda, HID, input_cuda, layer_size, input_hidden_cuda, prev_cuda])
        shape = weights.shape
        return {"partial_sum": partial,
                "input_weights": dev.copy_out(input_hidden_cuda, weights.size, np.float32).reshape(shape),
                "input_prev_weights": dev.copy_out(prev_cuda, weights.size, np.float32).reshape(shape)}

    def reference(self, inputs, layer_size):
        units, weights = inputs["input_units"], inputs["input_weights"]
        partial = layer_sums(units, weights)
        hidden_weights = inputs["hidden_weights"].copy()
        delta = host_backward(partial, weights, hidden_weights, np.zeros_like(hidden_weights))
        w, oldw = adjusted(delta, units, weights, np.zeros_like(weights))
        return {"partial_sum": partial, "input_weights": w, "input_prev_weights": oldw}

    def check(self, outputs, expected, layer_size):
        sums = bit_exact(self.name, "partial sums", outputs["partial_sum"], expected["partial_sum"])
        count = bit_exact(self.name, "input weights", outputs["input_weights"], expected["input_weights"])
        bit_exact(self.name, "weight changes", outputs["input_prev_weights"], expected["input_prev_weights"])
        return f"{sums} partial sums, {count} adjusted weights and their changes bit-exact"
