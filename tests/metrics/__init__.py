"""Tests of askkit.metrics."""
