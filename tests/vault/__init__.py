"""Tests of askkit.vault."""
