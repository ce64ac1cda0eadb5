"""Drawing graphs: the interactive vis-network page, its layout, the static SVG, colours."""
