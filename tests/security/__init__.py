"""Keys, endpoints, markup, traces."""
