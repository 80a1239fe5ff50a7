"""What the explorer's server computes for a sentence, and what it refuses (``Refused``:
answered with HTTP 400 and its message): empty text, text over the character cap, lone
surrogates, a model's own refusal, a page over the token cap. The HTTP side is
``attnlab.explorer.server.httpd``; this part knows nothing of sockets.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from attnlab.errors import AttnlabError, first_line
from attnlab.explorer.page.render import validate_data
from attnlab.i18n.logs import Grouped, said

Compute = Callable[[str], Mapping[str, Any]]


class Refused(ValueError):
    """Input the server will not compute: answered with HTTP 400 and this message."""


@dataclass
class App:
    """The sentence-to-page computation behind the server, with its caps."""

    compute: Compute
    max_chars: int
    max_tokens: int
    default_text: str
    lock: threading.Lock
    lang: str = "en"  # the page's interface language (the data's own text is compute's)

    @property
    def body_limit(self) -> int:
        return 12 * self.max_chars + 1024  # percent-encoded UTF-8 is at most 9 bytes a character

    def attention(self, text: str) -> Mapping[str, Any]:
        text = text.strip()
        if not text:
            raise self.refused("type a sentence first")
        if len(text) > self.max_chars:
            raise self.refused("the input is %s characters; the limit is %s",
                               Grouped(len(text)), Grouped(self.max_chars))
        lone = next((c for c in text if "\ud800" <= c <= "\udfff"), None)
        if lone is not None:  # JSON may carry "\ud800": a code point, not a character
            raise self.refused("the text holds a lone surrogate (U+%04X), which is not a "
                               "character: send UTF-8 text", ord(lone))
        with self.lock:
            try:
                data = self.compute(text)
            except ValueError as err:  # the model's own refusal, e.g. longer than its context
                if not str(err).strip():
                    raise self.refused("input refused") from err
                raise Refused(first_line(said(err, self.lang))) from err
        validate_data(data)
        longest = max(len(view["tokens"]) for view in data["views"])
        if longest > self.max_tokens:
            raise self.refused("the input is %s tokens; the limit is %s", Grouped(longest),
                               Grouped(self.max_tokens))
        return data

    def refused(self, template: str, *values: object) -> Refused:
        """A refusal in the page's language (its ``error`` entry; English as given)."""
        return Refused(said(AttnlabError(template, *values), self.lang))
