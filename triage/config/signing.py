"""The installation's secret, and the signature it puts on every file a cache keeps (`triage.config.compiled`).

A cache is a speed-up, never an authority: a kept file is used only when this installation signed it, with an
HMAC-SHA256 under 32 random bytes that only the installation holds. The secret is kept in `key_file()`: the file in
`PTD_TRIAGE_CACHE_KEY`; else `ptd-triage-cache.key` in the virtual environment (beside its cache folder, not in
it); else `~/.config/ptd-triage/cache.key`. It is made on the first write (mode 0600), and not used when it is
not a plain file of this user's, when others may read or change it, or when it lies inside a folder a cache is
read from (it would travel with the files it signs): then nothing is cached at all.

The signature is the JSON object's last field (`"mac"`), so a kept file is still plain JSON to a reader.

May import: the standard library.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import stat
import sys
from pathlib import Path

KEY_ENVIRONMENT = "PTD_TRIAGE_CACHE_KEY"
_MAC = re.compile(rb',"mac":"([0-9a-f]{64})"\}\s*\Z')



def key_file() -> Path | None:
    """Where this installation's secret is kept (see the module docstring)."""
    setting = os.environ.get(KEY_ENVIRONMENT, "").strip()
    if setting:
        return Path(setting)
    if sys.prefix != sys.base_prefix:
        return Path(sys.prefix) / "ptd-triage-cache.key"
    home = os.environ.get("XDG_CONFIG_HOME") or (os.path.join(os.path.expanduser("~"), ".config")
                                                  if os.path.expanduser("~") != "~" else "")
    return Path(home) / "ptd-triage" / "cache.key" if home else None


_SECRETS: dict[str, bytes] = {}


def _secret(create: bool, places) -> bytes | None:
    """The secret (read once per process), made when `create` and there is none yet; None when there is none that
    can be trusted: then nothing is read from a cache and nothing is written to one. `places`: the cache folders."""
    path = key_file()
    if path is None or any(_within(path, place) for place in places):
        return None  # a secret inside a cache folder would travel with the files it signs
    found = _SECRETS.get(str(path))
    if found is None:
        found = _read_secret(path)
        if found is None and create:
            found = _make_secret(path)
        if found is not None:
            _SECRETS[str(path)] = found
    return found


def _within(path: Path, place: Path) -> bool:
    try:
        return path.resolve().is_relative_to(place.resolve())
    except OSError:
        return True


def _read_secret(path: Path) -> bytes | None:
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o077 or (
                hasattr(os, "getuid") and info.st_uid != os.getuid()):
            return None  # a link, another user's file, or one others may read or change: not a secret
        with open(path, "rb") as handle:
            text = handle.read(200).strip()
    except OSError:
        return None
    return bytes.fromhex(text.decode("ascii")) if re.fullmatch(rb"[0-9a-f]{64}", text) else None


def _make_secret(path: Path) -> bytes | None:
    import secrets  # here: only the first write of an installation makes one

    value = secrets.token_bytes(32)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return _read_secret(path)  # another run made it first
    except OSError:
        return None
    with os.fdopen(handle, "wb") as out:
        out.write(value.hex().encode("ascii") + b"\n")
    return value


def signed(data: bytes, places) -> bytes | None:
    """A JSON object's bytes with its signature as the last field (None when there is no secret to sign with)."""
    secret = _secret(True, places)
    if secret is None or not data.endswith(b"}"):
        return None
    mac = hmac.new(secret, data, hashlib.sha256).hexdigest()
    return data[:-1] + b',"mac":"' + mac.encode("ascii") + b'"}'


def verified(raw: bytes, places) -> bytes | None:
    """The JSON object as it was signed, when its last field is this installation's signature of it; else None."""
    found = _MAC.search(raw)
    secret = _secret(False, places) if found else None
    if secret is None:
        return None
    signed = raw[:found.start()] + b"}"  # type: ignore[union-attr]
    if not hmac.compare_digest(hmac.new(secret, signed, hashlib.sha256).hexdigest().encode("ascii"),
                               found.group(1)):  # type: ignore[union-attr]
        return None
    return signed


__all__ = ["KEY_ENVIRONMENT", "key_file", "signed", "verified"]
