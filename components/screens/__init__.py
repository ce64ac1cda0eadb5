"""Whole-page parts built from every floor below: a method page, the save and export controls of a
run. Only pages/ and app.py import them."""
