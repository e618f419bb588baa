"""The words a class is known by: its join code (read out or typed on a phone), the teacher's
secret (in the teacher's link only, kept hashed, compared in constant time), a member's id and
a nickname (plain text, checked). Pure: no Streamlit, no store."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import unicodedata

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, no 1/I: read aloud, typed on a phone
CODE_LENGTH = 6  # 32**6 = about 10**9 codes
SECRET_BYTES = 16  # the teacher's secret: 128 random bits
MEMBER_BYTES = 9  # a member's id: 72 random bits, 12 characters
NICKNAME_CHARS = 24  # most characters of a nickname, after its control characters go
MARKUP = re.compile(r"[<>]")  # what reads as markup: refused (a nickname is plain text)
_MEMBER = re.compile(r"^[A-Za-z0-9_-]{8,32}$")


def new_code() -> str:
    """A random join code of `CODE_LENGTH` characters of `CODE_ALPHABET`."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def read_code(text: object) -> str:
    """The join code `text` names (any case; spaces and dashes ignored), or a `ValueError` that
    says what a code looks like (0, O, 1 and I never appear in one)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"Type the class's code: {CODE_LENGTH} letters and digits, e.g. K7MQ2X.")
    cleaned = re.sub(r"[\s-]", "", text[:100]).upper()
    wrong = sorted({c for c in cleaned if c not in CODE_ALPHABET})
    if len(cleaned) != CODE_LENGTH or wrong:
        hint = f" ({', '.join(repr(c) for c in wrong[:5])} never appear in a code)" if wrong else ""
        shown = cleaned if len(cleaned) <= 12 else cleaned[:12] + "…"
        raise ValueError(
            f"A class's code is {CODE_LENGTH} letters and digits, e.g. K7MQ2X; received "
            f"{shown!r}{hint}. Check it against the projector."
        )
    return cleaned


def new_secret() -> str:
    """The teacher's secret: `SECRET_BYTES` random bytes, URL-safe text."""
    return secrets.token_urlsafe(SECRET_BYTES)


def hash_secret(secret: str) -> str:
    """What the store keeps of a secret: its SHA-256, hex (a store's reader cannot lead)."""
    return hashlib.sha256(secret.encode("utf-8", "replace")).hexdigest()


def secret_matches(given: object, stored_hash: str) -> bool:
    """Whether `given` is the secret whose hash is `stored_hash`, compared in constant time
    (`hmac.compare_digest`: how long it takes says nothing of how much matched)."""
    if not isinstance(given, str) or not given or len(given) > 200:
        return False
    return hmac.compare_digest(hash_secret(given), stored_hash)


def new_member() -> str:
    """A member's id (in the student's own link, so a reload keeps them in the class)."""
    return secrets.token_urlsafe(MEMBER_BYTES)


def read_member(text: object) -> str:
    """A member id as `new_member` makes them, or a `ValueError`."""
    if not isinstance(text, str) or not _MEMBER.match(text):
        raise ValueError("This link's member id is not one the class gave: join again by code.")
    return text


def clean_nickname(text: object) -> str:
    """A nickname as plain text: control and formatting characters dropped, spaces joined,
    at most `NICKNAME_CHARS` characters; "" for none. Longer text and markup are refused with a
    `ValueError` that says what is allowed (the student shortens it; nothing is cut unseen)."""
    if text is None:
        return ""
    if not isinstance(text, str):
        raise ValueError(f"A nickname is text; received {type(text).__name__}.")
    if len(text) > 10 * NICKNAME_CHARS:
        raise ValueError(
            f"A nickname has at most {NICKNAME_CHARS} characters; this one has {len(text):,}. "
            "Choose a shorter one, or leave it empty."
        )
    kept = "".join(c for c in text if unicodedata.category(c)[0] != "C")
    kept = " ".join(kept.split())
    if len(kept) > NICKNAME_CHARS:
        raise ValueError(
            f"A nickname has at most {NICKNAME_CHARS} characters; this one has {len(kept)}. "
            "Choose a shorter one, or leave it empty."
        )
    if MARKUP.search(kept):
        raise ValueError("A nickname is plain text: leave out < and >.")
    return kept
