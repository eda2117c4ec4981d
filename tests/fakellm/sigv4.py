"""A server-side check of AWS Signature Version 4, as AWS does it, for the Bedrock stand-in. Imports: the
standard library only (the stand-in must not trust botocore to check botocore).

`check(...)` returns None when the request is signed correctly, else (exception name, message) as AWS answers.
"""
from __future__ import annotations

import hashlib
import hmac
import re
from datetime import datetime, timezone
from urllib.parse import parse_qsl, quote

AUTH_RE = re.compile(r"^AWS4-HMAC-SHA256 Credential=(?P<key>[^/,\s]+)/(?P<date>\d{8})/(?P<region>[a-z0-9-]+)/"
                     r"(?P<service>[a-z0-9-]+)/aws4_request,\s*SignedHeaders=(?P<signed>[a-z0-9;-]+),\s*"
                     r"Signature=(?P<signature>[0-9a-f]{64})$")
AMZ_DATE_RE = re.compile(r"^\d{8}T\d{6}Z$")
INVALID_TOKEN = "The security token included in the request is invalid."
MISMATCH = ("The request signature we calculated does not match the signature you provided. Check your AWS Secret "
            "Access Key and signing method. Consult the service documentation for details.")


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()


def canonical_request(method: str, raw_path: str, headers: dict[str, str], signed: list[str], body: bytes) -> str:
    """`headers` lower-cased; `raw_path` as received (still percent-encoded), encoded once more as AWS does for
    every service but S3."""
    path, _, query = raw_path.partition("?")
    canonical_query = "&".join(f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}"
                               for k, v in sorted(parse_qsl(query, keep_blank_values=True)))
    canonical_headers = "".join(f"{name}:{' '.join(headers.get(name, '').split())}\n" for name in signed)
    return "\n".join([method.upper(), quote(path or "/", safe="/~"), canonical_query, canonical_headers,
                      ";".join(signed), hashlib.sha256(body).hexdigest()])


def signature(secret_key: str, amz_date: str, region: str, service: str, canonical: str) -> str:
    scope = f"{amz_date[:8]}/{region}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = _hmac(_hmac(_hmac(_hmac(f"AWS4{secret_key}".encode(), amz_date[:8]), region), service), "aws4_request")
    return hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()


def check(method: str, raw_path: str, headers: dict[str, str], body: bytes, *, keys: dict[str, str],
          session_tokens: dict[str, str | None], region: str, service: str = "bedrock",
          now: datetime | None = None, max_skew: float | None = 900.0) -> tuple[str, str] | None:
    """`headers` lower-cased. `keys` maps access key id -> secret; `session_tokens` access key id -> the token it
    needs (None: none)."""
    auth = headers.get("authorization")
    if not auth:
        return "MissingAuthenticationTokenException", "Missing Authentication Token"
    found = AUTH_RE.match(auth.strip())
    if not found:
        return "IncompleteSignatureException", (
            "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters in the form "
            f"AWS4-HMAC-SHA256 Credential=KEY/DATE/REGION/SERVICE/aws4_request, ... Authorization={auth[:40]}...")
    amz_date = headers.get("x-amz-date", "")
    if not AMZ_DATE_RE.match(amz_date):
        return "IncompleteSignatureException", ("Authorization header requires existence of either a 'X-Amz-Date' or"
                                                " a 'Date' header.")
    if found["date"] != amz_date[:8]:
        return "InvalidSignatureException", "Date in Credential scope does not match YYYYMMDD from ISO-8601 version."
    if found["service"] != service:
        return "InvalidSignatureException", f"Credential should be scoped to correct service: '{service}'."
    if found["region"] != region:
        return "InvalidSignatureException", "Credential should be scoped to a valid region."
    signed = found["signed"].split(";")
    if signed != sorted(signed) or "host" not in signed or "x-amz-date" not in signed:
        return "IncompleteSignatureException", "SignedHeaders must be sorted and include host and x-amz-date."
    if found["key"] not in keys:
        return "UnrecognizedClientException", INVALID_TOKEN
    wanted_token = session_tokens.get(found["key"])
    if wanted_token is not None and (headers.get("x-amz-security-token") != wanted_token
                                     or "x-amz-security-token" not in signed):
        return "UnrecognizedClientException", INVALID_TOKEN
    if max_skew is not None:
        when = datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
        current = now or datetime.now(timezone.utc)
        if abs((current - when).total_seconds()) > max_skew:
            return "InvalidSignatureException", (f"Signature expired: {amz_date} is now earlier than "
                                                 f"{current.strftime('%Y%m%dT%H%M%SZ')} (more than "
                                                 f"{int(max_skew)} s of skew).")
    expected = signature(keys[found["key"]], amz_date, region, service,
                         canonical_request(method, raw_path, headers, signed, body))
    if not hmac.compare_digest(expected, found["signature"]):
        return "InvalidSignatureException", MISMATCH
    return None
