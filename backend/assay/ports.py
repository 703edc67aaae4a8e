"""`assay up`'s ports, checked before anything is built, seeded or started: beside another
Assay, the demo tour would otherwise seed against the other instance's fake provider (it
uses one it finds answering), then this one's fake provider dies on its port (Errno 98)
and `assay up` stops everything."""

from __future__ import annotations

import socket
from dataclasses import dataclass


@dataclass(frozen=True)
class Port:
    what: str  # who listens there, for the message
    env: str  # the variable that moves it
    number: int


def is_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a server could listen there now (SO_REUSEADDR as servers bind, so a port
    only in TIME_WAIT counts as free)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_after(port: int, taken: set[int], limit: int = 100) -> int | None:
    """The first free port above `port` that none of the others wants, to suggest."""
    for candidate in range(port + 1, min(port + limit, 65535) + 1):
        if candidate not in taken and is_free(candidate):
            return candidate
    return None


def problems(ports: list[Port]) -> list[str]:
    """One line per port that cannot be used, naming it and how to move it; empty when
    every port is free and no two are the same."""
    found: list[str] = []
    wanted = {p.number for p in ports}
    seen: dict[int, Port] = {}
    for port in ports:
        if port.number in seen:
            found.append(f"{port.env}={port.number} is also {seen[port.number].env}'s port "
                         f"({seen[port.number].what}): give each its own.")
            continue
        seen[port.number] = port
        if not is_free(port.number):
            other = free_after(port.number, wanted)
            hint = f"e.g. {port.env}={other} make run" if other else f"set {port.env}"
            found.append(f"Port {port.number} ({port.what}) is already in use, perhaps by "
                         f"another Assay. Stop that, or move this one: {hint}.")
    return found
