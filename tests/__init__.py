"""The test suite; its folders follow the code's."""
