"""scim-edge: offline question answering over Wikipedia with a self-correcting loop."""

__version__ = "0.1.0"
