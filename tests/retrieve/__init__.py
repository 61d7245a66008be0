"""Tests of askkit.retrieve."""
