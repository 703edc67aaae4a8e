"""Assay: a self-hosted workbench for evaluating LLMs and the prompts that drive them."""

__version__ = "0.1.0"
