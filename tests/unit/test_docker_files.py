"""The container files in docker/, checked without a container engine.

What an engine would catch late is checked here early: the compose services and their
wiring, that every `assay ...` command the containers run exists in the real CLI (with
its options), that every COPY source exists and survives the build context's ignore
file, that every variable compose passes to Assay is one Assay reads, the nginx
directives that make Server-Sent Events stream, the SPA's security headers, and the
health check script. `docker compose config` runs too where a Compose v2 client is
installed (it needs no engine); elsewhere that test is skipped.
"""

from __future__ import annotations

import http.server
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML parses compose.yaml (a dev dependency)")

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
DOCKERFILES = {"Dockerfile": DOCKER / "Dockerfile", "web.Dockerfile": DOCKER / "web.Dockerfile"}
ASSAY_SERVICES = ("api", "worker", "fake-provider")
SSE_PATH = "/api/projects/12/runs/34/events"
SECRETS = {"SECRET_KEY", "JWT_SECRET", "POSTGRES_PASSWORD"}
PROBE_ENV = {"SECRET_KEY": "probe-secret-key-" + "s" * 32, "JWT_SECRET": "probe-jwt-" + "j" * 32,
             "POSTGRES_PASSWORD": "probe-password"}


# ---- loading ---------------------------------------------------------------------------

class _ComposeLoader(yaml.SafeLoader):
    """SafeLoader plus Compose's merge tags (!reset, !override), kept as plain values."""


for _tag in ("!reset", "!override"):
    _ComposeLoader.add_constructor(_tag, lambda loader, node: (
        loader.construct_mapping(node) if isinstance(node, yaml.MappingNode)
        else loader.construct_sequence(node) if isinstance(node, yaml.SequenceNode)
        else loader.construct_scalar(node)))


def _compose(name: str = "compose.yaml") -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.load((DOCKER / name).read_text(), Loader=_ComposeLoader)
    return loaded


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return _compose()


def _instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined, comments out."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in path.read_text().splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        keyword, _, rest = (pending + line).strip().partition(" ")
        out.append((keyword.upper(), rest.strip()))
        pending = ""
    return out


def _final_stage(path: Path) -> list[tuple[str, str]]:
    steps = _instructions(path)
    last_from = max(i for i, (k, _) in enumerate(steps) if k == "FROM")
    return steps[last_from:]


def _exec_form(args: str) -> list[str]:
    value = json.loads(args)
    assert isinstance(value, list), args
    return [str(v) for v in value]


@pytest.fixture(scope="module")
def cli_tree(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The real `assay` command tree with the app's own commands (`db` comes from
    Flask-Migrate's init_app). Read in a subprocess: creating the app configures
    process-wide state that other tests in this session rely on."""
    probe = (
        "import json, click\n"
        "from flask.cli import ScriptInfo\n"
        "from assay.cli import main\n"
        "from assay.cli.flaskcmds import create_app\n"
        "ctx = click.Context(main, obj=ScriptInfo(create_app=create_app))\n"
        "def tree(cmd):\n"
        "    opts = sorted(o for p in cmd.params for o in [*p.opts, *p.secondary_opts])\n"
        "    subs = {}\n"
        "    if isinstance(cmd, click.Group):\n"
        "        subs = {n: tree(cmd.get_command(ctx, n)) for n in cmd.list_commands(ctx)}\n"
        "    return {'options': opts, 'commands': subs}\n"
        "print(json.dumps(tree(main)))\n"
    )
    instance = tmp_path_factory.mktemp("cli-instance")
    env = {**os.environ, **PROBE_ENV, "ASSAY_INSTANCE_PATH": str(instance),
           "DATABASE_URL": f"sqlite:///{instance / 'probe.db'}",
           "REDIS_URL": "redis://127.0.0.1:9/0"}  # never connected: no command runs
    done = subprocess.run([sys.executable, "-c", probe], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    tree: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return tree


# ---- compose -----------------------------------------------------------------------------

def test_compose_has_the_services(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"postgres", "redis", "api", "worker", "fake-provider", "web"}
    assert services["postgres"]["image"].startswith("postgres:16")
    assert services["redis"]["image"].startswith("redis:7")
    for name in ("postgres", "redis"):
        assert services[name]["healthcheck"]["test"], f"{name} needs a healthcheck"
        assert services[name]["volumes"], f"{name} keeps its data in a volume"
    api = services["api"]
    assert api["environment"]["ASSAY_MIGRATE"] == "1"
    assert api["depends_on"] == {"postgres": {"condition": "service_healthy"},
                                 "redis": {"condition": "service_healthy"}}
    assert services["worker"]["command"] == ["assay", "worker"]
    assert services["worker"]["depends_on"]["api"]["condition"] == "service_healthy"
    assert services["web"]["ports"] == ["${ASSAY_WEB_PORT:-5173}:80"]
    assert services["web"]["build"]["dockerfile"] == "docker/web.Dockerfile"


def test_one_image_serves_api_worker_and_fake_provider(compose: dict[str, Any]) -> None:
    services = compose["services"]
    builds = {json.dumps(services[n]["build"], sort_keys=True) for n in ASSAY_SERVICES}
    images = {services[n]["image"] for n in ASSAY_SERVICES}
    assert len(builds) == 1 and len(images) == 1
    assert services["api"]["build"] == {"context": "..", "dockerfile": "docker/Dockerfile",
                                        "args": {"ASSAY_OTEL": "${ASSAY_OTEL:-0}"}}


def test_workers_can_be_scaled(compose: dict[str, Any]) -> None:
    worker = compose["services"]["worker"]
    assert "container_name" not in worker and "ports" not in worker
    assert worker.get("healthcheck") == {"disable": True}  # the image's check is the API's


def test_secrets_are_required_never_written_in(compose: dict[str, Any]) -> None:
    text = (DOCKER / "compose.yaml").read_text()
    for name in SECRETS:
        uses = re.findall(r"\$\{" + name + r"(:\?|:-|-|\?|\})", text)
        assert uses and set(uses) == {":?"}, f"{name} must always be ${{{name}:?...}}"
    for service in compose["services"].values():
        for key, value in (service.get("environment") or {}).items():
            if key in SECRETS:
                assert str(value).startswith("${" + key + ":?"), (key, value)


def test_the_shared_server_blocks_private_provider_urls(compose: dict[str, Any]) -> None:
    """Private and loopback provider URLs are allowed by default (make run, assay up: a
    local Ollama) and blocked in the compose stack, with an allow-list for private ones."""
    for name in ("api", "worker"):  # both call providers
        env = compose["services"][name]["environment"]
        assert env["ASSAY_BLOCK_PRIVATE_URLS"] == "${ASSAY_BLOCK_PRIVATE_URLS:-true}"
        assert env["ASSAY_PRIVATE_URL_ALLOW"] == "${ASSAY_PRIVATE_URL_ALLOW:-}"


def test_env_example_documents_every_variable() -> None:
    example = (DOCKER / ".env.example").read_text()
    documented = set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]*)=", example, re.MULTILINE))
    used: set[str] = set()
    for name in ("compose.yaml", "compose.external.yaml"):
        used |= set(re.findall(r"\$\{([A-Z][A-Z0-9_]*)", (DOCKER / name).read_text()))
    assert used - documented == set()
    for name in SECRETS:  # present, uncommented and empty: compose refuses to start until set
        assert re.search(rf"^{name}=$", example, re.MULTILINE), name
    assert ".env" in (DOCKER / ".gitignore").read_text().split()


def _read_by_assay() -> str:
    sources = [p.read_text() for p in (ROOT / "backend" / "assay").rglob("*.py")]
    return "\n".join(sources)


def test_every_variable_passed_to_assay_is_read(compose: dict[str, Any]) -> None:
    code = _read_by_assay()
    entrypoint = (DOCKER / "entrypoint.sh").read_text()
    external = _compose("compose.external.yaml")["services"]
    for name in ASSAY_SERVICES:
        env = {**(compose["services"][name].get("environment") or {}),
               **(external.get(name, {}).get("environment") or {})}
        for key in env:
            read = f'"{key}"' in code or f"'{key}'" in code or "${" + key in entrypoint
            assert read, f"{name} gets {key}, which neither backend/assay nor entrypoint.sh reads"


def test_api_and_workers_share_their_settings(compose: dict[str, Any]) -> None:
    api = compose["services"]["api"]["environment"]
    worker = compose["services"]["worker"]["environment"]
    for key in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "JWT_SECRET", "ASSAY_INSTANCE_PATH",
                "ASSAY_FAKE_PROVIDER_URL"):
        assert api[key] == worker[key], key
    assert api["ASSAY_INSTANCE_PATH"] == "/data"
    assert "assay-data:/data" in compose["services"]["api"]["volumes"]
    assert "http://fake-provider:8100" in api["ASSAY_FAKE_PROVIDER_URL"]
    assert compose["services"]["fake-provider"]["command"][-2:] == ["--port", "8100"]


def test_external_override_drops_the_bundled_services() -> None:
    override = _compose("compose.external.yaml")["services"]
    assert override["postgres"]["profiles"] and override["redis"]["profiles"]
    assert override["api"]["depends_on"] == {}
    assert set(override["worker"]["depends_on"]) == {"api"}
    for name in ("api", "worker"):
        for key in ("DATABASE_URL", "REDIS_URL"):
            assert override[name]["environment"][key].startswith("${" + key + ":?")


# ---- the assay commands the containers run ------------------------------------------

def _assay_commands(compose: dict[str, Any]) -> list[list[str]]:
    commands = [s["command"] for s in compose["services"].values()
                if isinstance(s.get("command"), list) and s["command"][:1] == ["assay"]]
    for path in DOCKERFILES.values():
        commands += [_exec_form(args) for kind, args in _instructions(path) if kind == "CMD"]
    for line in (DOCKER / "entrypoint.sh").read_text().splitlines():
        words = line.split("#")[0].split()
        if "assay" in words:
            commands.append([w.strip('"') for w in words[words.index("assay"):]])
    return [c for c in commands if c[:1] == ["assay"]]


def test_every_assay_command_exists(compose: dict[str, Any], cli_tree: dict[str, Any]) -> None:
    commands = _assay_commands(compose)
    seen = {" ".join(c[:2]) for c in commands}
    assert {"assay serve", "assay worker", "assay fake-provider", "assay db", "assay seed"} <= seen
    for command in commands:
        node = cli_tree
        for word in command[1:]:
            if word.startswith("-") or not node["commands"]:
                break
            assert word in node["commands"], f"{' '.join(command)}: no command {word!r}"
            node = node["commands"][word]
        for word in command[1:]:
            if word.startswith("--"):
                assert word in node["options"], f"{' '.join(command)}: no option {word}"


def test_entrypoint_migrates_on_request_then_execs() -> None:
    script = (DOCKER / "entrypoint.sh").read_text()
    assert script.startswith("#!/bin/sh\n") and "set -eu" in script
    assert re.search(r'if \[ "\$\{ASSAY_MIGRATE:-0\}" = "1" \]; then\s+\S.*\n\s+assay db upgrade',
                     script)
    assert script.rstrip().endswith('exec "$@"')
    assert os.access(DOCKER / "entrypoint.sh", os.X_OK)


# ---- Dockerfiles -----------------------------------------------------------------------

def _dockerignore_excludes(patterns: list[str], path: str) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parents decides."""
    parts = path.strip("/").split("/")
    candidates = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    excluded = False
    for raw in patterns:
        negate, pattern = raw.startswith("!"), raw.lstrip("!").strip("/")
        regex = "".join(
            "(.*/)?" if tok == "**/" else ".*" if tok == "**" else "[^/]*" if tok == "*"
            else "[^/]" if tok == "?" else re.escape(tok)
            for tok in re.findall(r"\*\*/|\*\*|\*|\?|[^*?]+", pattern))
        if any(re.fullmatch(regex, c) for c in candidates):
            excluded = not negate
    return excluded


def _ignore_patterns(dockerfile: Path) -> list[str]:
    ignore = dockerfile.with_name(dockerfile.name + ".dockerignore")
    assert ignore.exists(), f"{ignore.name} keeps the build context small"
    return [line.strip() for line in ignore.read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


@pytest.mark.parametrize("name", sorted(DOCKERFILES))
def test_copy_sources_exist_and_reach_the_build(name: str) -> None:
    dockerfile = DOCKERFILES[name]
    patterns = _ignore_patterns(dockerfile)
    copies = [args.split() for kind, args in _instructions(dockerfile) if kind in {"COPY", "ADD"}]
    sources = [s for words in copies if not any(w.startswith("--from") for w in words)
               for s in [w for w in words if not w.startswith("--")][:-1]]
    assert sources
    for source in sources:
        assert (ROOT / source).exists(), f"{name}: COPY {source} does not exist"
        assert not _dockerignore_excludes(patterns, source), f"{name}: {source} is ignored"
        if (ROOT / source).is_dir():
            files = (p for p in (ROOT / source).rglob("*") if p.is_file())
            assert any(not _dockerignore_excludes(patterns, str(p.relative_to(ROOT)))
                       for p in files), f"{name}: nothing of {source} reaches the build"


def test_build_contexts_leave_out_local_state() -> None:
    python = _ignore_patterns(DOCKERFILES["Dockerfile"])
    web = _ignore_patterns(DOCKERFILES["web.Dockerfile"])
    for path in ("instance/jwt_secret.key", ".venv/bin/python", ".git/config",
                 "backend/assay/__pycache__/cli.cpython-311.pyc",
                 "backend/assay.egg-info/PKG-INFO"):
        assert _dockerignore_excludes(python, path), path
    assert not _dockerignore_excludes(python, "backend/assay/settings.py")
    for path in ("frontend/node_modules/react/index.js", "frontend/dist/index.html",
                 "instance/secret_key.key", ".venv/bin/python"):
        assert _dockerignore_excludes(web, path), path
    assert not _dockerignore_excludes(web, "frontend/src/main.tsx")


def test_python_image() -> None:
    steps = _instructions(DOCKERFILES["Dockerfile"])
    assert ("ARG", "PYTHON_IMAGE=python:3.11-slim") in steps
    final = _final_stage(DOCKERFILES["Dockerfile"])
    assert final[0] == ("FROM", "${PYTHON_IMAGE} AS runtime")
    users = [args for kind, args in final if kind == "USER"]
    assert users and users[-1] not in {"root", "0"}
    assert any(kind == "ENV" and "PYTHONDONTWRITEBYTECODE=1" in args for kind, args in final)
    runs = " ".join(args for kind, args in final if kind == "RUN")
    assert not re.search(r"build-essential|gcc|g\+\+|-dev\b", runs), "no build tools at run time"
    assert "bubblewrap" in runs  # the code scorer's sandbox refuses to run without isolation
    assert ("ENTRYPOINT", '["assay-entrypoint"]') in final
    health = [args for kind, args in final if kind == "HEALTHCHECK"]
    assert health and "assay-healthcheck" in health[0]
    copied = {words[-1]: words[-2] for kind, args in final if kind == "COPY"
              for words in [args.split()]}
    assert copied["/usr/local/bin/assay-entrypoint"] == "docker/entrypoint.sh"
    assert copied["/usr/local/bin/assay-healthcheck"] == "docker/healthcheck.py"
    for folder in ("backend/", "migrations/", "seeds/"):  # REPO_ROOT is /app: keep the layout
        assert copied[folder] == folder
    assert ("WORKDIR", "/app") in final
    assert any(kind == "RUN" and "pip install --no-deps --no-build-isolation -e ." in args
               for kind, args in steps)


def test_web_image() -> None:
    steps = _instructions(DOCKERFILES["web.Dockerfile"])
    froms = [args for kind, args in steps if kind == "FROM"]
    assert froms[0].startswith("node:20") and froms[-1].startswith("nginx:stable-alpine")
    runs = [args for kind, args in steps if kind == "RUN"]
    assert "npm ci" in runs and "npm run build" in runs
    assert ("COPY", "docker/nginx.conf /etc/nginx/nginx.conf") in steps
    assert ("COPY", "--from=build /src/frontend/dist /usr/share/nginx/html") in steps


# ---- nginx ------------------------------------------------------------------------------

def _nginx_tree(text: str) -> list[Any]:
    """Directives as (name, args, children) with blocks nested; comments and quotes handled."""
    tokens = re.findall(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'|#[^\n]*|[{};]|[^\s{};"\']+', text)
    stack: list[list[Any]] = [[]]
    words: list[str] = []
    for tok in tokens:
        if tok.startswith("#"):
            continue
        if tok == ";":
            stack[-1].append((words[0], words[1:], None))
            words = []
        elif tok == "{":
            block: list[Any] = []
            stack[-1].append((words[0], words[1:], block))
            stack.append(block)
            words = []
        elif tok == "}":
            stack.pop()
        else:
            words.append(tok[1:-1] if tok[0] in "\"'" else tok)
    assert len(stack) == 1 and not words, "unbalanced nginx config"
    return stack[0]


def _find(block: list[Any], name: str) -> list[Any]:
    return [d for d in block if d[0] == name]


def _one(block: list[Any], name: str) -> list[str]:
    found = _find(block, name)
    assert len(found) == 1, f"expected one {name}, got {found}"
    args: list[str] = found[0][1]
    return args


@pytest.fixture(scope="module")
def nginx() -> dict[str, Any]:
    tree = _nginx_tree((DOCKER / "nginx.conf").read_text())
    http = _find(tree, "http")[0][2]
    server = _find(http, "server")[0][2]
    locations = {tuple(d[1]): d[2] for d in _find(server, "location")}
    return {"http": http, "server": server, "locations": locations}


def _seconds(value: str) -> float:
    match = re.fullmatch(r"(\d+)(ms|s|m|h|d)?", value)
    assert match, f"not an nginx time: {value}"
    scale = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2) or "s"]
    return int(match.group(1)) * scale


def test_nginx_streams_run_events(nginx: dict[str, Any]) -> None:
    sse = [(args, body) for args, body in nginx["locations"].items() if args[0] == "~"]
    assert len(sse) == 1
    (_, pattern), body = sse[0]
    assert re.search(pattern, SSE_PATH)
    assert not re.search(pattern, "/api/projects/12/runs/34/outputs")
    assert _one(body, "proxy_buffering") == ["off"]
    assert _one(body, "proxy_cache") == ["off"]
    assert _one(body, "proxy_http_version") == ["1.1"]
    assert _one(body, "gzip") == ["off"]
    assert _seconds(_one(body, "proxy_read_timeout")[0]) >= 3600
    assert "text/event-stream" not in _one(nginx["http"], "gzip_types")


def test_nginx_proxies_the_api_to_the_api_service(nginx: dict[str, Any],
                                                  compose: dict[str, Any]) -> None:
    upstream = [a for a in _find(nginx["server"], "set") if a[1][0] == "$assay_api"]
    assert upstream and upstream[0][1][1] == "http://api:8000"
    assert compose["services"]["api"]["command"][-2:] == ["--port", "8000"]
    for args, body in nginx["locations"].items():
        if args == ("/api/",) or args[0] == "~":
            assert _one(body, "proxy_pass") == ["$assay_api"]
            assert _one(body, "proxy_http_version") == ["1.1"]


def test_nginx_serves_the_spa_with_security_headers(nginx: dict[str, Any]) -> None:
    locations = nginx["locations"]
    assert _one(locations[("/",)], "try_files")[-1] == "/index.html"
    assert _one(locations[("/assets/",)], "try_files")[-1] == "=404"
    # add_header is inherited only by locations that set none of their own.
    assert all(not _find(body, "add_header") for body in locations.values())
    headers = {d[1][0]: d[1][1] for d in _find(nginx["server"], "add_header")}
    maps = {d[1][1]: {row[0]: row[1][0] if row[1] else "" for row in d[2]}
            for d in _find(nginx["http"], "map")}
    # What an SPA response gets: maps keyed by $assay_is_spa give "1", the others "default".
    spa = {name: maps[var].get("1", maps[var]["default"]) if var in maps else var
           for name, var in headers.items()}
    csp = spa["Content-Security-Policy"]
    for directive in ("default-src 'self'", "script-src 'self'",
                      "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
                      "connect-src 'self'", "frame-ancestors 'none'"):
        assert directive in csp
    assert spa["X-Content-Type-Options"] == "nosniff"
    assert spa["Referrer-Policy"]
    cache = maps[headers["Cache-Control"]]
    assert "immutable" in cache["~^/assets/"] and cache["default"] == "no-cache"
    # API responses keep the API's own headers (the docs page has a CSP of its own).
    assert maps["$assay_is_spa"]["~^/api/"] == "0" and cache["~^/api/"] == ""


def test_nginx_sends_hsts_over_https_and_tells_the_api_the_scheme(
        nginx: dict[str, Any]) -> None:
    """HSTS on every response (SPA and API, `always`: errors too) when the browser came over
    HTTPS, to this server or to the TLS proxy in front of it; the API hears the same scheme
    (X-Forwarded-Proto) and marks its cookies Secure."""
    add = {d[1][0]: d[1][1:] for d in _find(nginx["server"], "add_header")}
    hsts_var, *flags = add["Strict-Transport-Security"]
    assert flags == ["always"]
    maps = {d[1][1]: (d[1][0], {row[0]: row[1][0] for row in d[2]})
            for d in _find(nginx["http"], "map")}
    source, hsts = maps[hsts_var]
    assert source == "$assay_scheme"
    assert hsts["default"] == ""
    age = re.search(r"max-age=(\d+)", hsts["https"])
    assert age and int(age.group(1)) >= 180 * 86400
    scheme_source, scheme = maps["$assay_scheme"]
    assert scheme_source == "$http_x_forwarded_proto"
    assert scheme == {"https": "https", "default": "$scheme"}
    for args, body in nginx["locations"].items():
        if args == ("/api/",) or args[0] == "~":
            forwarded = {d[1][0]: d[1][1] for d in _find(body, "proxy_set_header")}
            assert forwarded["X-Forwarded-Proto"] == "$assay_scheme"


# ---- the health check script ------------------------------------------------------------

def _load_healthcheck() -> Any:
    spec = importlib.util.spec_from_file_location("assay_healthcheck", DOCKER / "healthcheck.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def health_server() -> Iterator[tuple[str, dict[str, Any]]]:
    state: dict[str, Any] = {"body": {}}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(state["body"]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", state
    finally:
        server.shutdown()
        server.server_close()


def test_healthcheck_script(health_server: tuple[str, dict[str, Any]],
                            monkeypatch: pytest.MonkeyPatch) -> None:
    address, state = health_server
    check = _load_healthcheck().check
    monkeypatch.setenv("ASSAY_PORT", address.rsplit(":", 1)[1])
    state["body"] = {"status": "degraded", "database": {"ok": True}, "redis": {"ok": True},
                     "workers": {"ok": False, "count": 0}}
    assert check()[0], "no worker yet is still a healthy API"
    state["body"] = {**state["body"], "redis": {"ok": False, "error": "ConnectionError"}}
    assert not check()[0]
    state["body"] = {"unexpected": True}
    assert not check()[0]
    assert check(f"http://{address}/_fake/health")[0]
    assert not check("http://127.0.0.1:9/", timeout=1)[0]


# ---- the Compose client, where one is installed -------------------------------------------

def _compose_client() -> list[str] | None:
    candidates = [["docker", "compose"]] if shutil.which("docker") else []
    if shutil.which("docker-compose"):
        candidates.append(["docker-compose"])
    for client in candidates:
        done = subprocess.run([*client, "version"], capture_output=True, text=True, check=False)
        if done.returncode == 0 and re.search(r"v?2\.\d+", done.stdout):
            return client
    return None


def test_compose_client_validates_the_files() -> None:
    client = _compose_client()
    if client is None:
        pytest.skip("no Docker Compose v2 client here (`docker compose` or docker-compose v2)")
    env = {k: v for k, v in os.environ.items()
           if k not in {*SECRETS, "DATABASE_URL", "REDIS_URL", "COMPOSE_FILE", "COMPOSE_PROFILES"}}
    base = [*client, "--project-directory", str(DOCKER), "--env-file", os.devnull,
            "-f", str(DOCKER / "compose.yaml")]
    done = subprocess.run([*base, "config", "--format", "json"], env={**env, **PROBE_ENV},
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    model = json.loads(done.stdout)
    assert set(model["services"]) == {"postgres", "redis", "api", "worker", "fake-provider", "web"}
    assert model["services"]["api"]["environment"]["JWT_SECRET"] == PROBE_ENV["JWT_SECRET"]
    missing = subprocess.run([*base, "config"], env={**env, **PROBE_ENV, "JWT_SECRET": ""},
                             capture_output=True, text=True, timeout=60, check=False)
    # Some wrappers of the binary lose its exit code: the message and no model tell.
    assert "set JWT_SECRET" in missing.stderr and not missing.stdout.strip()
    external = subprocess.run(
        [*base, "-f", str(DOCKER / "compose.external.yaml"), "config", "--format", "json"],
        env={**env, **PROBE_ENV, "DATABASE_URL": "postgresql://u:p@db.invalid:5432/assay",
             "REDIS_URL": "redis://redis.invalid:6379/0"},
        capture_output=True, text=True, timeout=60, check=False)
    assert external.returncode == 0, external.stderr
    services = json.loads(external.stdout)["services"]
    assert set(services) == {"api", "worker", "fake-provider", "web"}
    assert services["api"]["environment"]["DATABASE_URL"].startswith("postgresql://u:p@db.invalid")
