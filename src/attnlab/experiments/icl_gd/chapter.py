"""The chapter's part of the in-context regression experiment: no published figure, the
budget it runs at (``attnlab.kit.chapter``)."""

from __future__ import annotations

from attnlab.kit.chapter import Chapter

CHAPTER = Chapter(budget="none published: in-context learning as gradient descent is the "
                         "curriculum's, not the chapter's (quick is full: 20,000 steps, 5 seeds)")
