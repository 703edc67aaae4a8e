from __future__ import annotations

import socket
from typing import Any

import pytest

from assay.core.errors import Invalid
from assay.providers import ssrf
from assay.providers.ssrf import (
    UnresolvableHost,
    UrlPolicy,
    allow_entry,
    canonical_url,
    check_base_url,
    parse_ipv4_loose,
)


def policy(allow_private: bool) -> UrlPolicy:
    return UrlPolicy(allow_private=allow_private)


def refusal(url: str, allow_private: bool = True) -> str:
    with pytest.raises(Invalid) as info:
        check_base_url(url, policy(allow_private))
    assert list(info.value.errors) == ["base_url"]
    return " ".join(info.value.errors["base_url"])


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Host names resolve to what the test says, never through the network."""
    table: dict[str, list[str]] = {}

    def fake(host: str, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        out: list[Any] = []
        for address in table[host]:
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            sockaddr = (address, port, 0, 0) if family == socket.AF_INET6 else (address, port)
            out.append((family, socket.SOCK_STREAM, 6, "", sockaddr))
        return out

    monkeypatch.setattr(ssrf.socket, "getaddrinfo", fake)
    return table


@pytest.mark.parametrize("url", [
    "ftp://example.com/", "file:///etc/passwd", "gopher://example.com/", "javascript:alert(1)",
    "example.com/v1", "//example.com/",
])
def test_only_http_and_https(url: str) -> None:
    assert "scheme must be http or https" in refusal(url)


@pytest.mark.parametrize("url", [
    "http://user:pw@example.com/", "https://key@api.openai.com/v1", "http://:pw@example.com/",
])
def test_credentials_in_the_url_are_refused(url: str) -> None:
    assert "credentials in the URL" in refusal(url)


@pytest.mark.parametrize("url", [
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00:ec2::254]/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://METADATA.GOOGLE.INTERNAL./",
    "http://100.100.100.200/",
    # other spellings of 169.254.169.254
    "http://2852039166/", "http://0xa9fea9fe/", "http://0xA9.0xFE.0xA9.0xFE/",
    "http://0251.0376.0251.0376/", "http://169.254.43518/", "http://169.16689662/",
    "http://[::ffff:169.254.169.254]/", "http://[::ffff:a9fe:a9fe]/", "http://[::a9fe:a9fe]/",
    "http://[64:ff9b::a9fe:a9fe]/", "http://[2002:a9fe:a9fe::1]/",
])
@pytest.mark.parametrize("allow_private", [True, False])
def test_metadata_addresses_are_always_refused(url: str, allow_private: bool) -> None:
    assert "cloud metadata address" in refusal(url, allow_private)


@pytest.mark.parametrize("url", [
    "http://169.254.1.1/", "http://[fe80::1]/", "http://[fe80::1%25eth0]:8080/",
    "http://[febf::1]/", "http://[::ffff:169.254.0.1]/", "http://2851995905/",
])
@pytest.mark.parametrize("allow_private", [True, False])
def test_link_local_is_always_refused(url: str, allow_private: bool) -> None:
    assert "link-local" in refusal(url, allow_private)


PRIVATE_URLS = [
    "http://127.0.0.1:11434", "http://127.1/", "http://2130706433/", "http://0x7f000001/",
    "http://017700000001/", "http://10.0.0.5/v1", "http://172.16.0.1/", "http://172.31.255.255/",
    "http://192.168.1.10:8000/v1", "http://[::1]:8000/", "http://[fc00::1]/",
    "http://[fd12:3456::1]/", "http://[::ffff:127.0.0.1]/", "http://[::ffff:10.0.0.1]/",
    "http://0.0.0.0/", "http://0/", "http://100.64.0.1/",
]


@pytest.mark.parametrize("url", PRIVATE_URLS)
def test_private_ranges_refused_only_when_blocked(url: str) -> None:
    assert "private" in refusal(url, allow_private=False)
    check_base_url(url, policy(True))


@pytest.mark.parametrize("url", [
    "https://8.8.8.8/", "http://[2606:4700:4700::1111]/", "http://[::ffff:8.8.8.8]/",
    "http://172.32.0.1/", "http://172.15.255.255/", "http://11.0.0.1/", "http://192.169.0.1/",
])
def test_public_addresses_pass_even_when_private_is_blocked(url: str) -> None:
    check_base_url(url, policy(False))


@pytest.mark.parametrize("url", ["http://224.0.0.1/", "http://255.255.255.255/",
                                 "http://240.0.0.1/", "http://[ff02::1]/"])
def test_multicast_broadcast_and_reserved_are_refused(url: str) -> None:
    assert "not a unicast address" in refusal(url)


def test_every_resolved_address_is_checked(dns: dict[str, list[str]]) -> None:
    dns["api.example.com"] = ["93.184.216.34", "2606:2800:220:1::1"]
    check_base_url("https://api.example.com/v1", policy(False))

    dns["rebind.example.com"] = ["93.184.216.34", "169.254.169.254"]
    message = refusal("https://rebind.example.com/v1")
    assert "rebind.example.com resolves to 169.254.169.254" in message
    assert "metadata" in message

    dns["mapped.example.com"] = ["93.184.216.34", "::ffff:169.254.169.254"]
    assert "metadata" in refusal("https://mapped.example.com/")

    dns["internal.example.com"] = ["8.8.8.8", "10.1.2.3"]
    check_base_url("http://internal.example.com/", policy(True))
    assert "private" in refusal("http://internal.example.com/", allow_private=False)

    dns["ll.example.com"] = ["fe80::5"]
    assert "link-local" in refusal("http://ll.example.com/")


def test_localhost_resolves_to_loopback(dns: dict[str, list[str]]) -> None:
    dns["localhost"] = ["127.0.0.1", "::1"]
    check_base_url("http://localhost:11434")
    assert "localhost resolves to" in refusal("http://localhost:11434", allow_private=False)


def test_a_name_that_does_not_resolve_fails_closed(dns: dict[str, list[str]]) -> None:
    with pytest.raises(UnresolvableHost) as info:
        check_base_url("https://nowhere.invalid/v1")
    assert isinstance(info.value, Invalid)
    assert info.value.code == "HOST_UNRESOLVED"
    assert "does not resolve" in info.value.errors["base_url"][0]


@pytest.mark.parametrize("url, why", [
    ("http://", "no host"), ("http://example.com:99999/", "not a valid URL"),
    ("http://[::1/", "not a valid URL"),
])
def test_malformed_urls(url: str, why: str) -> None:
    assert why in refusal(url)


@pytest.mark.parametrize("host, address", [
    ("2852039166", "169.254.169.254"), ("0xa9fea9fe", "169.254.169.254"),
    ("0251.0376.0251.0376", "169.254.169.254"), ("169.254.43518", "169.254.169.254"),
    ("127.1", "127.0.0.1"), ("10.1", "10.0.0.1"), ("1.2.3.4", "1.2.3.4"), ("0", "0.0.0.0"),
])
def test_loose_ipv4_spellings(host: str, address: str) -> None:
    assert str(parse_ipv4_loose(host)) == address


@pytest.mark.parametrize("host", ["example.com", "1.2.3.4.5", "256.1.1.1", "1.2.3.256",
                                  "09.1.1.1", "0xg.1.1.1", "1..2.3", "4294967296", ""])
def test_names_that_are_not_ipv4(host: str) -> None:
    assert parse_ipv4_loose(host) is None


# --- one spelling, and the allow-list ----------------------------------------------------

LOOPBACK_SPELLINGS = ["2130706433", "0177.0.0.1", "0x7f000001", "127.1", "0x7f.1",
                      "017700000001", "127.0.1"]


@pytest.mark.parametrize("host", LOOPBACK_SPELLINGS)
def test_every_ipv4_spelling_comes_back_canonical(host: str) -> None:
    """What is stored and called is the address the guard judged (aiohttp refuses the
    decimal, octal and short forms, and would resolve the hex one by itself)."""
    assert check_base_url(f"http://{host}:8100/v1", policy(True)) == "http://127.0.0.1:8100/v1"
    assert canonical_url(f"http://{host}/") == "http://127.0.0.1/"
    assert "private" in refusal(f"http://{host}:8100/v1", allow_private=False)


@pytest.mark.parametrize("url", ["https://api.openai.com/v1", "http://127.0.0.1:11434",
                                 "http://[::1]:8000/v1", "http://localhost:11434"])
def test_canonical_urls_stay_as_written(url: str) -> None:
    assert canonical_url(url) == url


def test_the_allow_list_opens_exactly_its_endpoints(dns: dict[str, list[str]]) -> None:
    allowed = UrlPolicy.of(False, ["127.0.0.1:11434", "ollama.internal:11434", "[::1]:8000",
                                   "169.254.169.254:80", "10.0.0.9:443"])
    dns["ollama.internal"] = ["10.1.2.3"]
    dns["other.internal"] = ["10.1.2.3"]
    for url in ("http://127.0.0.1:11434/v1", "http://2130706433:11434", "http://127.1:11434",
                "http://ollama.internal:11434", "http://OLLAMA.internal.:11434/api",
                "http://[::1]:8000/", "https://10.0.0.9/"):
        check_base_url(url, allowed)
    for url in ("http://127.0.0.1:11435", "http://127.0.0.1/", "http://ollama.internal:8080",
                "http://other.internal:11434", "http://10.0.0.9/", "http://[::1]:8001/"):
        with pytest.raises(Invalid, match="ASSAY_PRIVATE_URL_ALLOW"):
            check_base_url(url, allowed)
    # never metadata or link-local, whatever the list says
    with pytest.raises(Invalid, match="metadata"):
        check_base_url("http://169.254.169.254/", allowed)


@pytest.mark.parametrize("entry, canonical", [
    ("ollama:11434", "ollama:11434"), (" Ollama.Internal.:11434 ", "ollama.internal:11434"),
    ("2130706433:80", "127.0.0.1:80"), ("[::1]:8000", "[::1]:8000"),
])
def test_allow_list_entries(entry: str, canonical: str) -> None:
    assert allow_entry(entry) == canonical


@pytest.mark.parametrize("entry", ["ollama", "ollama:port", "http://ollama:1", "a:1/v1",
                                   "user@ollama:1", "::1:8000", "ollama:99999"])
def test_allow_list_entries_must_be_host_and_port(entry: str) -> None:
    with pytest.raises(ValueError, match="host:port"):
        allow_entry(entry)


def test_the_settings_build_the_policy(tmp_path: Any) -> None:
    from assay.settings import Settings

    base = {"ASSAY_INSTANCE_PATH": str(tmp_path), "JWT_SECRET": "j" * 40,
            "SECRET_KEY": "s" * 40}
    assert not Settings.from_env(base).url_policy.allow_private  # anyone may register
    private = Settings.from_env({**base, "ASSAY_SELF_REGISTRATION": "off"}).url_policy
    assert private.allow_private  # a workbench of invited users: local Ollama just works
    shared = Settings.from_env({**base, "ASSAY_BLOCK_PRIVATE_URLS": "true",
                                "ASSAY_PRIVATE_URL_ALLOW": "ollama:11434, [::1]:8000 vllm:80",
                                "ASSAY_FAKE_PROVIDER_URL": "http://fake-provider:8100"})
    assert shared.url_policy == UrlPolicy(False, frozenset({
        "ollama:11434", "[::1]:8000", "vllm:80", "fake-provider:8100"}))
    with pytest.raises(ValueError, match="ASSAY_PRIVATE_URL_ALLOW"):
        Settings.from_env({**base, "ASSAY_PRIVATE_URL_ALLOW": "ollama"})
