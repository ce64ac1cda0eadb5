"""A minimal third-party method plug-in: word-overlap retrieval, then the reasoner's answer step.

Its package registers it under the entry-point group `triplet_lens.methods` (pyproject.toml):

    [project.entry-points."triplet_lens.methods"]
    overlap = "examples.toy_plugin:method_info"
"""

from engine.methods.registry import MethodInfo


def method_info() -> MethodInfo:
    """What the registry lists: the engine class by module and name, and the view module."""
    return MethodInfo(
        name="overlap",
        title="Word overlap",
        module="examples.toy_plugin.method",
        cls="WordOverlap",
        baseline=False,  # not a baseline: it gets its own column on Compare
        view="examples.toy_plugin.view",
    )
