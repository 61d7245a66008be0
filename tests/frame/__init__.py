"""Tests of askkit.frame."""
