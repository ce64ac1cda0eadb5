"""One view module per method (the contract: base.py). A method's registry entry names its module
(`MethodInfo.view`); `base.view_for(result_or_name)` looks it up, with generic defaults."""
