"""The chapter's part of "Why attention replaced recurrence": no published figure, only what
the chapter says it used (``attnlab.kit.chapter``)."""

from __future__ import annotations

from attnlab.kit.chapter import Chapter

CHAPTER = Chapter(budget="none: the chapter states the argument and measures none of it (the "
                         "full profile: 1,500 agreement updates, the ladder's full settings)")
