"""The server's commands: serve, worker, reaper, retention, seed, fake-provider and up.
Imported only when one of them runs (cli/__init__.py): each sets up what it needs."""

from __future__ import annotations

import os
import sys

import click

from assay.settings import Settings


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, default=lambda: int(os.environ.get("ASSAY_PORT", 8000)),
              show_default="ASSAY_PORT or 8000")
@click.option("--workers", type=int,
              default=lambda: int(os.environ.get("ASSAY_WEB_WORKERS", 0)),
              show_default="ASSAY_WEB_WORKERS or one per core",
              help="gunicorn worker processes.")
@click.option("--threads", type=int,
              default=lambda: int(os.environ.get("ASSAY_WEB_THREADS", 16)),
              show_default="ASSAY_WEB_THREADS or 16",
              help="Threads per worker; each open progress stream holds one.")
@click.option("--admit", type=click.IntRange(min=1),
              default=lambda: int(os.environ.get("ASSAY_WEB_ADMIT", 4)),
              show_default="ASSAY_WEB_ADMIT or 4",
              help="Requests a worker works on at once; the others wait in order.")
def serve(host: str, port: int, workers: int, threads: int, admit: int) -> None:
    """Run the API with gunicorn (gthread workers: README, Deploying, Scaling)."""
    from assay.serve import run_gunicorn

    run_gunicorn(host, port, threads, workers or None, admit)


@click.command()
@click.option("--burst", is_flag=True, help="Exit when the queue is empty.")
def worker(burst: bool) -> None:
    """Run an RQ worker for Assay's queues."""
    from assay.serve import run_worker

    run_worker(burst)


@click.command()
def reaper() -> None:
    """Re-enqueue runs nobody is working on (every `assay worker` starts one itself)."""
    from assay.jobs.reaper import run_reaper

    run_reaper(Settings.from_env())


@click.command("retention")
@click.option("--dry-run", is_flag=True, help="Report what would go; remove nothing.")
def retention_command(dry_run: bool) -> None:
    """Apply the data-retention policy now (ASSAY_RETAIN_*; workers also run it on schedule)
    and print its report as JSON."""
    import json

    from assay.jobs.retention import retention
    from assay.runtime import configure

    rt = configure(Settings.from_env())
    click.echo(json.dumps(retention(rt, rt.settings.retention, dry_run), indent=2))


@click.command()
@click.option("--no-tour", is_flag=True,
              help="Only the demo user, project, models and questions; skip the demo tour "
                   "(a dataset generated from seeds/*.pdf, scored runs, judge mode).")
def seed(no_tour: bool) -> None:
    """Create the demo user and project with the demo tour (idempotent); print the login."""
    from assay.runtime import configure
    from assay.seeds import DEMO_EMAIL, DEMO_PASSWORD, seed_demo

    settings = Settings.from_env()
    rt = configure(settings)
    from assay.core.challenges.content import ChallengeFileError
    from assay.core.challenges.seeding import seed_challenges

    with rt.db.factory() as session:
        try:
            counts = seed_challenges(session)
        except ChallengeFileError as error:
            click.echo("EvalArena challenges not loaded (nothing changed):", err=True)
            for problem in error.problems:
                click.echo(f"  seeds/challenges/{problem}", err=True)
            sys.exit(1)
        click.echo("EvalArena challenges: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
        _, project = seed_demo(session, settings, None if no_tour else rt)
        name = project.name  # read while the session is open: the tour's commits expire it
    click.echo(f"Demo project '{name}' ready. Sign in as {DEMO_EMAIL} / {DEMO_PASSWORD}")


@click.command("fake-provider")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, default=lambda: int(os.environ.get("ASSAY_FAKE_PORT", 8100)),
              show_default="ASSAY_FAKE_PORT or 8100")
def fake_provider(host: str, port: int) -> None:
    """Run the fake OpenAI/Anthropic-compatible LLM provider used by tests and the demo."""
    from assay.providers.fake import FakeConfig, run_server

    run_server(host, port, FakeConfig.from_env())


@click.command()
@click.option("--no-build", is_flag=True, help="Serve the SPA build as it is.")
def up(no_build: bool) -> None:
    """Start everything: fake provider, API, worker and the SPA server; Ctrl-C stops all."""
    from assay.observability import boot
    from assay.supervise import run_all

    boot.multiproc_dir(boot.instance_path(), fresh=True)  # no samples of earlier processes
    sys.exit(run_all(Settings.from_env(), build=not no_build))
