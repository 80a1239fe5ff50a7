"""The chapter's part of the induction experiment: no published figure (induction heads are
the curriculum's, around the chapter), only the budget it is measured at
(``attnlab.kit.chapter``)."""

from __future__ import annotations

from attnlab.kit.chapter import Chapter

CHAPTER = Chapter(budget="none published: induction heads are the curriculum's, not the "
                         "chapter's (the full profile: 5 seeds, the Shakespeare model at the "
                         "ladder's full settings)")
