"""Widgets of the scim-edge TUI, one per module."""
