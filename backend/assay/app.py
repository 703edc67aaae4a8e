"""create_app(settings): the factory, nothing else."""

from __future__ import annotations

from typing import Any

from flask import Flask, Request, Response
from flask.sessions import SessionInterface, SessionMixin
from flask_migrate import Migrate
from werkzeug.middleware.proxy_fix import ProxyFix

from assay import __version__, runtime
from assay.api import docs, kept_reads, security, slow_lane
from assay.api.arena.routes import blp as arena_blp
from assay.api.auth.routes import blp as auth_blp
from assay.api.contract import READ_SECURITY, ContractPlugin
from assay.api.credentials.routes import blp as credentials_blp
from assay.api.credentials.routes import kinds_blp as provider_kinds_blp
from assay.api.critiques.routes import blp as critiques_blp
from assay.api.datasets.routes import blp as datasets_blp
from assay.api.datasets.transfer import blp as dataset_transfer_blp
from assay.api.errors import AssayApi, register_error_handlers
from assay.api.experiments.assist import blp as assist_blp
from assay.api.experiments.reports import blp as experiment_reports_blp
from assay.api.experiments.routes import blp as experiments_blp
from assay.api.experiments.templates import blp as experiment_templates_blp
from assay.api.generation.documents import blp as documents_blp
from assay.api.generation.routes import blp as generation_blp
from assay.api.health.routes import blp as health_blp
from assay.api.iterations import blp as iterations_blp
from assay.api.json_bodies import FastJSONProvider
from assay.api.judgments.routes import blp as judgments_blp
from assay.api.members.invites import blp as invites_blp
from assay.api.members.routes import blp as members_blp
from assay.api.models.routes import blp as models_blp
from assay.api.projects.routes import blp as projects_blp
from assay.api.projects.settings import blp as project_settings_blp
from assay.api.prompts.routes import blp as prompts_blp
from assay.api.reports.exports import blp as run_exports_blp
from assay.api.reports.routes import blp as reports_blp
from assay.api.runs import blp as runs_blp
from assay.api.scorers.routes import blp as scorers_blp
from assay.api.scorers.routes import kinds_blp as scorer_kinds_blp
from assay.api.typed_schemas import register_typed_schemas
from assay.core.auth import service as auth_service
from assay.extensions import db
from assay.jobs import experiments as experiment_jobs
from assay.observability import web as observability
from assay.settings import REPO_ROOT, Settings

migrate = Migrate()

BLUEPRINTS = [auth_blp, projects_blp, members_blp, provider_kinds_blp, credentials_blp,
              models_blp, datasets_blp, dataset_transfer_blp, prompts_blp, scorer_kinds_blp,
              scorers_blp, runs_blp, run_exports_blp, reports_blp, generation_blp,
              documents_blp, judgments_blp, health_blp, critiques_blp, project_settings_blp,
              invites_blp, arena_blp, experiment_reports_blp, experiments_blp,
              experiment_templates_blp, assist_blp, iterations_blp]


def _config(settings: Settings) -> dict[str, Any]:
    return {
        "SECRET_KEY": settings.secret_key,
        "MAX_CONTENT_LENGTH": settings.max_body_bytes,
        "API_TITLE": "Assay",
        "API_VERSION": __version__,
        "OPENAPI_VERSION": "3.0.3",
        "OPENAPI_URL_PREFIX": "/api",
        "OPENAPI_JSON_PATH": "openapi.json",
        # no OPENAPI_SWAGGER_UI_PATH: /api/docs is api/docs.py's page (no inline script)
        "API_SPEC_OPTIONS": {"security": READ_SECURITY},  # the rest: api/contract.py
    }


class _NoSessions(SessionInterface):
    """Assay signs people in with its own cookie (api/sessions.py) and never uses Flask's
    signed-cookie session, whose opening cost every request a few percent of its CPU."""

    def open_session(self, app: Flask, request: Request) -> None:
        return None  # Flask then gives the request an empty session it never saves

    def save_session(self, app: Flask, session: SessionMixin, response: Response) -> None:
        pass


def create_app(settings: Settings | None = None) -> Flask:
    settings = settings or Settings.from_env()
    app = Flask(__name__, instance_path=str(settings.instance_path))
    app.session_interface = _NoSessions()
    app.json = FastJSONProvider(app)
    app.config.update(_config(settings))
    if settings.trusted_proxies:
        # Rate limits see the client's address; cookies are Secure when it came over HTTPS,
        # as the nearest proxy says (it sets X-Forwarded-Proto, replacing any client's).
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.trusted_proxies,  # type: ignore[method-assign]
                                x_proto=1)
    # the loop enqueues after commits; the warm job's intervals serve the first reader
    experiment_jobs.install(runtime.share_intervals(runtime.configure(settings)))
    migrate.init_app(app, db, directory=str(REPO_ROOT / "migrations"), render_as_batch=True)
    api = AssayApi(app, spec_kwargs={"extra_plugins": [ContractPlugin()]})
    for blueprint in BLUEPRINTS:
        api.register_blueprint(blueprint)
    register_typed_schemas(api)
    app.register_blueprint(docs.blp)
    observability.init_app(app)  # request ids first: errors log them
    kept_reads.init_app(app)
    security.init_app(app)
    slow_lane.init_app(app, settings)  # its refusals after authentication's
    kept_reads.init_serving(app)
    auth_service.dummy_hash(settings.bcrypt_rounds)  # the first unknown email costs no more
    register_error_handlers(app)

    @app.teardown_appcontext
    def _remove_session(_exc: BaseException | None) -> None:
        db.scoped.remove()

    return app
