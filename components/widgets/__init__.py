"""Small pieces the pages draw with: inputs, tables, stepper, answer box, evidence, calls."""
