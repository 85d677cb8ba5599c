"""Text helpers shared by the LLM backends: reasoning split, token estimate, hashing."""

from __future__ import annotations

import hashlib
import re

__all__ = ["split_reasoning", "estimate_tokens", "sha256_hex", "redact"]

_THINK_BLOCK = re.compile(r"<think(?:ing)?>(.*?)</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)


def split_reasoning(content: str | None) -> tuple[str, str]:
    """Splits model output into `(answer, reasoning)`.

    Rules, applied in order:
      1. every closed `<think>...</think>` (or `<thinking>`) block moves to reasoning;
      2. a stray closing tag with no opening one (chat templates that put `<think>`
         in the prompt) makes everything before it reasoning;
      3. an unterminated opening tag (output cut off while thinking) makes everything
         after it reasoning.

    Args:
      content: raw model output; None is treated as ''.

    Returns:
      `(answer, reasoning)`: the answer without leading blank lines or trailing whitespace
      (its first line's indentation kept), the reasoning stripped; reasoning parts are joined by a blank line.
    """
    text = content or ""
    parts: list[str] = []

    def _take(match: re.Match[str]) -> str:
        parts.append(match.group(1).strip())
        return ""

    text = _THINK_BLOCK.sub(_take, text)
    close = _THINK_CLOSE.search(text)
    if close is not None and not _THINK_OPEN.search(text, 0, close.start()):
        parts.insert(0, text[: close.start()].strip())
        text = text[close.end() :]
    opening = _THINK_OPEN.search(text)
    if opening is not None:
        parts.append(text[opening.end() :].strip())
        text = text[: opening.start()]
    text = _THINK_CLOSE.sub("", text)
    return _strip_keeping_indent(text), "\n\n".join(p for p in parts if p)


def _strip_keeping_indent(text: str) -> str:
    """Trailing whitespace and leading blank lines go; in a multi-line answer the first line's
    indentation stays (a completion that continues a class body starts indented, and its
    parser needs it), a one-line answer is stripped."""
    text = re.sub(r"\A(?:[ \t]*\n)+", "", text.rstrip())
    return text if "\n" in text else text.strip()


def estimate_tokens(text: str | None) -> int:
    """Rough token count: ceil(len(text) / 4), 0 for empty text."""
    n = len(text or "")
    return (n + 3) // 4


def sha256_hex(text: str) -> str:
    """Hex SHA-256 of the UTF-8 encoding of `text`."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def redact(text: str, secret: str | None) -> str:
    """Replaces every occurrence of `secret` in `text` with '***' (no-op if empty)."""
    if secret and len(secret) >= 4:
        return text.replace(secret, "***")
    return text
