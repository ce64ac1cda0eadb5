"""AppTest tests of the pages and components."""
