"""The chapter's part of the verb-agreement experiment: no published figure, only what
the curriculum used (``attnlab.kit.chapter``)."""

from __future__ import annotations

from attnlab.kit.chapter import Chapter

CHAPTER = Chapter(budget="the curriculum's small model (no published figure); quick is full")
