"""String formats as the kube-openapi format registry kube-apiserver keeps checks them."""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from datetime import date, datetime

_DATE_TIME_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})?"
)
_DURATION_RE = re.compile(r"[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+|[-+]?0")
_SCALA_DURATION_RE = re.compile(
    r"\d+\s*(?:ns|nanos?|nanoseconds?|us|µs|micros?|microseconds?|ms|millis?|milliseconds?|"
    r"s|secs?|seconds?|m|mins?|minutes?|h|hours?|d|days?|w|wk|weeks?)"
)
_UUID_RES = {
    "uuid": re.compile(r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}"),
    "uuid3": re.compile(r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}"),
    "uuid4": re.compile(
        r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}"
    ),
    "uuid5": re.compile(
        r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}"
    ),
}
_SIMPLE_RES = {
    "bsonobjectid": re.compile(r"[0-9a-fA-F]{24}"),
    "hexcolor": re.compile(r"#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})"),
    "rgbcolor": re.compile(
        r"rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])"
        r"\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)"
    ),
    "ssn": re.compile(r"\d{3}[- ]?\d{2}[- ]?\d{4}"),
    "mac": re.compile(r"([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}|([0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}"),
    "email": re.compile(r"[^@\s<>]+@[^@\s<>]+"),
    "uri": re.compile(r"(/|[A-Za-z][A-Za-z0-9+.-]*:)\S*"),
    "hostname": re.compile(
        r"(?=.{1,255}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?"
    ),
    "k8sshortname": re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"),
    "k8slongname": re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"),
}


def _valid_date_time(value: str) -> bool:
    m = _DATE_TIME_RE.fullmatch(value)
    if m is None:
        return False
    try:
        year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
        datetime(year, month, day, hour, minute, second)
    except ValueError:
        return False
    return True


def format_ok(fmt: str, value: str) -> bool:
    name = fmt.replace("-", "")
    if name == "datetime":
        return _valid_date_time(value)
    if name == "date":
        try:
            date.fromisoformat(value)
        except ValueError:
            return False
        return len(value) == 10
    if name == "duration":
        return bool(_DURATION_RE.fullmatch(value) or _SCALA_DURATION_RE.fullmatch(value))
    if name == "byte":
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return False
        return len(value) % 4 == 0
    if name in ("ipv4", "ipv6", "cidr"):
        try:
            if name == "cidr":
                ipaddress.ip_network(value, strict=False)
                return "/" in value
            address = ipaddress.ip_address(value)
        except ValueError:
            return False
        return address.version == (4 if name == "ipv4" else 6)
    if name in _UUID_RES:
        return bool(_UUID_RES[name].fullmatch(value))
    if name == "k8sshortname" and len(value) > 63:
        return False
    if name == "k8slongname" and len(value) > 253:
        return False
    regex = _SIMPLE_RES.get(name)
    return regex is None or bool(regex.fullmatch(value))
