"""The pieces every prompt is built from: the `Prompt` record, tagged sections, the message list.

Text that comes from the user's documents or questions always sits inside a tagged section
(`<document>...</document>`), and any of our section tags appearing inside that text are
neutralized first, so an instruction written in a document cannot close its section and pose as ours.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Prompt:
    name: str
    purpose: str  # one line, shown in the app's prompt viewer
    system: str


#: Section tags our prompts use; neutralized in any untrusted text.
SECTION_TAGS = (
    "document",
    "documents",
    "context",
    "question",
    "entities",
    "facts",
    "triplets",
    "propositions",
    "passages",
    "reasoning",
    "title",
)
_TAG_RE = re.compile(r"<(\s*/?\s*(?:%s)\b)" % "|".join(SECTION_TAGS), re.IGNORECASE)


def neutralize(text: str) -> str:
    """Make our section tags inside untrusted text inert (`<document>` -> `&lt;document>`)."""
    return _TAG_RE.sub(r"&lt;\1", text)


def section(tag: str, text: str) -> str:
    return f"<{tag}>\n{neutralize(text.strip())}\n</{tag}>"


def format_passages(passages: list[tuple[str, str]]) -> str:
    """`(title, text)` pairs as numbered plain-text blocks, the form every context section uses."""
    return "\n\n".join(
        f"[{i}] {title}: {text}" if title else f"[{i}] {text}" for i, (title, text) in enumerate(passages, 1)
    )


def msgs(prompt: Prompt, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": prompt.system}, {"role": "user", "content": user}]
