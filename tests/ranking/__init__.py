"""Tests of askkit.ranking: kimun's ranking stage, value for value."""
