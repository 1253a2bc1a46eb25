"""processors layer of ufo_mobile (see DESIGN.md)."""
