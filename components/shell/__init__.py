"""The app around the pages: sidebar, theme, state, first page, warm-up, runner, settings."""
