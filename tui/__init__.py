"""The scim-edge terminal UI (Textual): `tui.app.make_app()` builds it."""
