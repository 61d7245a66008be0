"""The notebooks in notebooks/, run top to bottom with nbclient."""
