"""The LLM client's resolver: the SSRF guard on the very addresses a connection uses.

``check_base_url`` resolves a name and checks every address before a call; aiohttp would
then resolve it again to connect, and a name with a short TTL can answer a public address
the first time and a private one the second (DNS rebinding). This resolver is the one the
connector asks, so what it checks is what the connection uses: one resolution, checked,
connected to, with the URL's host kept for the Host header and TLS (SNI, certificate).
IP literals never reach a resolver; the guard before the call judges those.
"""

from __future__ import annotations

import ipaddress
import socket

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver

from assay.core.errors import Invalid
from assay.providers.base import ProviderError
from assay.providers.ssrf import FIELD, UrlPolicy, check_address


def refused(denied: Invalid) -> ProviderError:
    """The guard's refusal as the client's error: not transient, never retried."""
    error = ProviderError("bad_request", denied.message)
    error.reason = " ".join(denied.errors.get(FIELD, [denied.message]))
    return error


class GuardedResolver(AbstractResolver):
    def __init__(self, policy: UrlPolicy, inner: AbstractResolver | None = None) -> None:
        self.policy = policy
        self.inner = inner or ThreadedResolver()

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        found = await self.inner.resolve(host, port, family)
        for result in found:
            address = ipaddress.ip_address(result["host"].split("%", 1)[0])
            try:
                check_address(address, self.policy, host, port)
            except Invalid as denied:
                raise refused(denied) from None
        return found

    async def close(self) -> None:
        await self.inner.close()
