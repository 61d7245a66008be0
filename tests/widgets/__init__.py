"""Tests of askkit.widgets."""
