"""Join codes, the teacher's secret, member ids and nicknames."""

from __future__ import annotations

import hashlib
import re

import pytest

from attnviz.classroom import codes


def test_codes_are_short_and_unambiguous():
    made = {codes.new_code() for _ in range(300)}
    assert len(made) == 300  # 32**6 codes: no repeat among a few hundred
    for code in made:
        assert re.fullmatch(r"[A-HJ-NP-Z2-9]{6}", code)
        assert not set(code) & set("01OI")


@pytest.mark.parametrize(
    ("typed", "read"),
    [("k7mq2x", "K7MQ2X"), (" K7M-Q2X ", "K7MQ2X"), ("K7M Q2X", "K7MQ2X")],
)
def test_read_code(typed, read):
    assert codes.read_code(typed) == read


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("", "Type the class's code"),
        (None, "Type the class's code"),
        ("K7MQ", "received 'K7MQ'"),
        ("K7MQ0X", "'0' never appear"),
        ("KIMQ2X", "'I' never appear"),
        ("<b>x</b>" * 2000, "6 letters and digits"),
    ],
)
def test_read_code_refuses(typed, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        codes.read_code(typed)


def test_secret_is_128_bits_and_kept_hashed():
    secret = codes.new_secret()
    assert len(secret) == 22  # 16 bytes, URL-safe base64 without padding
    assert codes.hash_secret(secret) == hashlib.sha256(secret.encode()).hexdigest()
    assert codes.secret_matches(secret, codes.hash_secret(secret))
    for wrong in ("", None, 42, secret[:-1], secret + "x", "x" * 10_000):
        assert not codes.secret_matches(wrong, codes.hash_secret(secret))


def test_secret_compared_in_constant_time(monkeypatch):
    calls = []
    real = codes.hmac.compare_digest

    def spy(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(codes.hmac, "compare_digest", spy)
    stored = codes.hash_secret("s3cret")
    assert codes.secret_matches("s3cret", stored) and not codes.secret_matches("other", stored)
    assert calls == [(stored, stored), (codes.hash_secret("other"), stored)]


def test_member_ids():
    member = codes.new_member()
    assert codes.read_member(member) == member
    for bad in ("", "x", "a b c d e f g h", None, "<script>alert(1)</script>", "a" * 100):
        with pytest.raises(ValueError, match="join again by code"):
            codes.read_member(bad)


@pytest.mark.parametrize(
    ("typed", "kept"),
    [
        ("", ""),
        (None, ""),
        ("  Ada  Lovelace ", "Ada Lovelace"),
        ("Ada\u0000\u200b\x1b[31m", "Ada[31m"),  # control and format characters dropped
        ("Tom & Jerry", "Tom & Jerry"),
        ("**bold** `code`", "**bold** `code`"),  # plain text: shown as typed, never as markdown
        ("é" * 24, "é" * 24),
    ],
)
def test_nickname_cleaned(typed, kept):
    assert codes.clean_nickname(typed) == kept


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("x" * 25, "at most 24 characters; this one has 25"),
        ("x" * 10_000, "this one has 10,000"),
        ("<b>Ada</b>", "leave out < and >"),
        ("<img src=x onerror=alert(1)>", "at most 24 characters"),
        (42, "A nickname is text; received int"),
    ],
)
def test_nickname_refused(typed, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        codes.clean_nickname(typed)
