"""Where Assay may send an LLM call: the server-side request forgery guard on base URLs.

``check_base_url`` is called when a credential is saved and again before every
connection. It refuses, always:

* schemes other than http and https, and URLs carrying credentials (``user:pw@host``);
* cloud metadata services (169.254.169.254, fd00:ec2::254, 100.100.100.200,
  metadata.google.internal, ...);
* link-local addresses (169.254.0.0/16, fe80::/10), multicast, broadcast and reserved ones;

and, unless the policy allows private addresses (``ASSAY_BLOCK_PRIVATE_URLS`` unset, as in
the embedded ``make run``/``assay up``), loopback and private ranges (127/8, 10/8,
172.16/12, 192.168/16, 100.64/10, 0/8, ::1, fc00::/7), except for the ``host:port``
endpoints on the policy's allow-list (``ASSAY_PRIVATE_URL_ALLOW``, plus the operator's own
fake provider). A self-hosted Assay keeps them allowed by default so Ollama, vLLM or LM
Studio on the same machine or network can be used; a shared install blocks them (the
compose file does), so that a project admin cannot scan internal hosts.

The host is canonicalised once: decimal (``2852039166``), hex (``0xa9fea9fe``), octal
(``0251.0376.0251.0376``) and short (``169.254.43518``) IPv4 spellings (inet_aton's
rules), and IPv4 embedded in IPv6 (``::ffff:169.254.169.254``, ``::a9fe:a9fe``, 6to4,
NAT64), all count as the address they spell, and ``check_base_url`` returns the URL with
that address written canonically: what is stored and what the client connects to are what
was judged. A host name is resolved with ``socket.getaddrinfo`` and EVERY address it
resolves to is checked; a name that does not resolve is refused with
:class:`UnresolvableHost` (a subclass of ``Invalid``, so callers fail closed; the
credential form catches it to save anyway and report the failed test).

Redirects: this check covers one URL only, so the LLM client must never follow
redirects, or a provider could bounce a call to a refused address. DNS rebinding (a name
resolving to a public address for this check and to a private one for the connection) is
closed by the client's resolver (``providers/pinning.py``): the addresses the connection
uses are the ones it checked with ``check_address``, with the original Host header and SNI.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

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


@dataclass(frozen=True)
class UrlPolicy:
    """Where provider calls may go besides public addresses."""

    allow_private: bool = True
    allowed: frozenset[str] = frozenset()  # canonical "host:port" endpoints, even if private

    @classmethod
    def of(cls, allow_private: bool, entries: Iterable[str]) -> UrlPolicy:
        """Raises ValueError for an entry that is not `host:port`."""
        return cls(allow_private, frozenset(allow_entry(entry) for entry in entries))

    def private_ok(self, host: str, ip: IPAddress | None, port: int | None) -> bool:
        if self.allow_private:
            return True
        if port is None:
            return False
        names = {host} | ({_shown(ip)} if ip is not None else set())
        return any(f"{name}:{port}" in self.allowed for name in names if name)


OPEN = UrlPolicy()  # the embedded default: private addresses allowed


def _shown(ip: IPAddress) -> str:
    return f"[{ip}]" if ip.version == 6 else str(ip)


def canonical_host(host: str) -> str:
    """A host as judged: lower case, no trailing dot, an IP literal in its one spelling
    (IPv6 in brackets)."""
    host = host.strip().rstrip(".").lower()
    literal = _literal(host.strip("[]"))
    return _shown(literal) if literal is not None else host


def allow_entry(entry: str) -> str:
    """One allow-list entry, `host:port` (IPv6 as `[::1]:8000`), canonical."""
    try:
        parts = urlsplit("//" + entry.strip())
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"{entry!r} is not host:port ({exc})") from None
    if not parts.hostname or port is None or parts.path or "@" in parts.netloc:
        raise ValueError(f"{entry!r} is not host:port (e.g. ollama.internal:11434)")
    return f"{canonical_host(parts.hostname)}:{port}"


def canonical_url(url: str) -> str:
    """The URL with an IP literal host in its one spelling (2130706433, 0177.0.0.1,
    0x7f000001 and 127.1 are 127.0.0.1), so the client connects where the guard looked;
    anything else unchanged."""
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    literal = _literal(host)
    if literal is None or _shown(literal) == (f"[{host}]" if ":" in host else host):
        return url
    netloc = _shown(literal) + (f":{parts.port}" if parts.port is not None else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


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


def check_address(ip: IPAddress, policy: UrlPolicy = OPEN, host: str = "",
                  port: int | None = None) -> None:
    """Refuse one address `host` resolves to (or is); an IPv6 form carrying an IPv4
    address is judged as that IPv4. The allow-list matches the host or the address."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.scope_id:
        ip = ipaddress.IPv6Address(str(ip).split("%", 1)[0])
    inner = embedded_ipv4(ip)
    shown = str(ip) if inner is None else f"{ip} (IPv4 {inner})"
    named = f"{host} resolves to {shown}" if host and canonical_host(host) != _shown(ip) \
        else shown
    private_ok = policy.private_ok(canonical_host(host) if host else "", ip, port)
    _judge(ip if inner is None else inner, private_ok, named)


def _judge(ip: IPAddress, allow_private: bool, named: str) -> None:
    if ip in METADATA_ADDRESSES:
        raise _refuse(f"{named} is a cloud metadata address")
    if any(ip in net for net in LINK_LOCAL):
        raise _refuse(f"{named} is a link-local address")
    if any(ip in net for net in PRIVATE) or ip.is_loopback or ip.is_unspecified:
        if not allow_private:
            raise _refuse(f"{named} is a loopback or private address, and private "
                          "addresses are blocked on this server (ASSAY_BLOCK_PRIVATE_URLS; "
                          "an administrator may allow host:port in ASSAY_PRIVATE_URL_ALLOW)")
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


def check_base_url(url: str, policy: UrlPolicy = OPEN) -> str:
    """Raise ``Invalid`` (field error on ``base_url``) unless Assay may call this URL;
    return it canonical (``canonical_url``): store and call that one.

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
    port = port or (443 if scheme == "https" else 80)
    literal = _literal(host)
    if literal is not None:
        check_address(literal, policy, host, port)
        return canonical_url(url)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise UnresolvableHost(f"base_url host {host} does not resolve",
                               {FIELD: [f"host {host} does not resolve ({exc})"]}) from None
    addresses = {ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos}
    if not addresses:
        raise UnresolvableHost(f"base_url host {host} does not resolve",
                               {FIELD: [f"host {host} does not resolve"]})
    for address in sorted(addresses, key=str):
        check_address(address, policy, host, port)
    return url
