"""Reference copies of the datasets' official scoring functions (see README.md)."""
