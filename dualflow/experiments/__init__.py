"""Experiments built on the models: the paper's figures and the studies beyond them."""
