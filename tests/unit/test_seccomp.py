"""The seccomp filter is built for the machines Assay knows, and for no other."""

from __future__ import annotations

import struct

from assay.scorers import seccomp


def test_known_machines_get_a_filter_that_ends_by_allowing() -> None:
    for machine in ("x86_64", "aarch64"):
        program = seccomp.program(machine)
        assert program is not None and len(program) % 8 == 0
        code, _, _, k = struct.unpack("=HBBI", program[-8:])
        assert (code, k) == (0x06, 0x7FFF0000)  # RET ALLOW, after every denial
        # Every name denied has a number on that machine (KeyError otherwise).
        assert len(program) // 8 > len(seccomp._DENIED) * 2


def test_an_unknown_machine_has_none() -> None:
    assert seccomp.program("riscv64") is None
