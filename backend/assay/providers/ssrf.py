"""Where Assay may send an LLM call: the server-side request forgery guard on base URLs.

``check_base_url`` is called when a credential is saved and again before every
connection. It refuses, always:

* schemes other than http and https, and URLs carrying credentials (``user:pw@host``);
* cloud metadata services (169.254.169.254, fd00:ec2::254, 100.100.100.200,
  metadata.google.internal, ...);
* link-local addresses (169.254.0.0/16, fe80::/10), multicast, broadcast and reserved ones;

and, only when ``allow_private`` is False (the ``ASSAY_BLOCK_PRIVATE_URLS`` setting),
loopback and private ranges (127/8, 10/8, 172.16/12, 192.168/16, 100.64/10, 0/8, ::1,
fc00::/7). A self-hosted Assay keeps them allowed by default so Ollama, vLLM or LM Studio
on the same machine or network can be used.

The host is normalised before it is judged: decimal (``2852039166``), hex
(``0xa9fea9fe``), octal (``0251.0376.0251.0376``) and short (``169.254.43518``) IPv4
spellings, and IPv4 embedded in IPv6 (``::ffff:169.254.169.254``, ``::a9fe:a9fe``,
6to4, NAT64) all count as the IPv4 address they spell. A host name is resolved with
``socket.getaddrinfo`` and EVERY address it resolves to is checked; a name that does not
resolve is refused with :class:`UnresolvableHost` (a subclass of ``Invalid``, so callers
fail closed; the credential form catches it to save anyway and report the failed test).

Redirects: this check covers one URL only, so the LLM client must never follow
redirects (httpx: ``follow_redirects=False``, its default), or a provider could bounce
a call to a refused address. A name can also resolve differently between this check and
the connection (DNS rebinding); the check before every connection narrows that window,
pinning the checked address in the transport would close it.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from assay.core.errors import Invalid

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

FIELD = "base_url"

METADATA_HOSTS = frozenset({
    "metadata.google.internal", "metadata.goog", "metadata", "instance-data",
    "instance-data.ec2.internal",
})
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle
    "169.254.170.2",  # AWS ECS task metadata
    "fd00:ec2::254",  # AWS IMDS over IPv6
    "100.100.100.200",  # Alibaba Cloud
    "192.0.0.192",  # Oracle Cloud (classic)
))

_net = ipaddress.ip_network
LINK_LOCAL = (_net("169.254.0.0/16"), _net("fe80::/10"))
PRIVATE = (
    _net("127.0.0.0/8"), _net("10.0.0.0/8"), _net("172.16.0.0/12"), _net("192.168.0.0/16"),
    _net("100.64.0.0/10"), _net("0.0.0.0/8"), _net("::1/128"), _net("::/128"),
    _net("fc00::/7"),
)
NAT64 = _net("64:ff9b::/96")


class UnresolvableHost(Invalid):
    """The base URL's host name does not resolve (yet): refused, but not malformed."""

    code = "HOST_UNRESOLVED"


def _refuse(why: str) -> Invalid:
    return Invalid(f"base_url refused: {why}", {FIELD: [why]})


def _ipv4_number(part: str) -> int | None:
    """One inet_aton component: decimal, 0-prefixed octal or 0x-prefixed hex."""
    try:
        if part[:2].lower() == "0x":
            return int(part[2:] or "0", 16)
        if len(part) > 1 and part.startswith("0"):
            return int(part[1:], 8)
        return int(part, 10) if part.isascii() and part.isdigit() else None
    except ValueError:
        return None


def parse_ipv4_loose(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a host spells in any inet_aton form, or None if it is not one."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or any(not p for p in parts):
        return None
    numbers = [_ipv4_number(p) for p in parts]
    if any(n is None for n in numbers):
        return None
    values = [n for n in numbers if n is not None]
    *head, last = values
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(values)):
        return None
    value = 0
    for n in head:
        value = value << 8 | n
    value = value << 8 * (5 - len(values)) | last
    return ipaddress.IPv4Address(value)


def embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, compatible, 6to4, NAT64)."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in NAT64 or (ip.packed[:12] == bytes(12) and int(ip) > 1):
        return ipaddress.IPv4Address(ip.packed[12:])
    return None


def check_address(ip: IPAddress, allow_private: bool = True, host: str = "") -> None:
    """Refuse one address; an IPv6 form carrying an IPv4 address is judged as that IPv4."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.scope_id:
        ip = ipaddress.IPv6Address(str(ip).split("%", 1)[0])
    inner = embedded_ipv4(ip)
    shown = str(ip) if inner is None else f"{ip} (IPv4 {inner})"
    named = f"{host} resolves to {shown}" if host and host != str(ip) else shown
    _judge(ip if inner is None else inner, allow_private, named)


def _judge(ip: IPAddress, allow_private: bool, named: str) -> None:
    if ip in METADATA_ADDRESSES:
        raise _refuse(f"{named} is a cloud metadata address")
    if any(ip in net for net in LINK_LOCAL):
        raise _refuse(f"{named} is a link-local address")
    if any(ip in net for net in PRIVATE) or ip.is_loopback or ip.is_unspecified:
        if not allow_private:
            raise _refuse(f"{named} is a loopback or private address, and private "
                          "addresses are blocked on this server (ASSAY_BLOCK_PRIVATE_URLS)")
        return
    if ip.is_multicast or ip.is_reserved or ip == ipaddress.IPv4Address("255.255.255.255"):
        raise _refuse(f"{named} is not a unicast address")
    if not allow_private and ip.is_private:
        raise _refuse(f"{named} is a special-purpose (non-public) address, and private "
                      "addresses are blocked on this server (ASSAY_BLOCK_PRIVATE_URLS)")


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return parse_ipv4_loose(host)


def check_base_url(url: str, allow_private: bool = True) -> None:
    """Raise ``Invalid`` (field error on ``base_url``) unless Assay may call this URL.

    The LLM client calls this before every connection and must not follow redirects.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise _refuse(f"not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in {"http", "https"}:
        raise _refuse(f"the scheme must be http or https, not {scheme or 'none'!r}")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise _refuse("credentials in the URL are not allowed; put the key in api_key")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise _refuse("the URL has no host")
    if host in METADATA_HOSTS:
        raise _refuse(f"{host} is a cloud metadata address")
    literal = _literal(host)
    if literal is not None:
        check_address(literal, allow_private)
        return
    try:
        infos = socket.getaddrinfo(host, port or (443 if scheme == "https" else 80),
                               type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise UnresolvableHost(f"base_url host {host} does not resolve",
                               {FIELD: [f"host {host} does not resolve ({exc})"]}) from None
    addresses = {ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos}
    if not addresses:
        raise UnresolvableHost(f"base_url host {host} does not resolve",
                               {FIELD: [f"host {host} does not resolve"]})
    for address in sorted(addresses, key=str):
        check_address(address, allow_private, host)
