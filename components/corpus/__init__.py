"""The Corpora page's actions: add, extract, drop, back up, restore."""
