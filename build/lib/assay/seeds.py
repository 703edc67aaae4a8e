"""Seed data shipped in the repository's seeds/ folder, and the demo account."""

from __future__ import annotations

import json
import logging
from functools import cache
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.auth.models import User
from assay.core.auth.service import register
from assay.core.datasets.service import ensure_demo_dataset
from assay.core.llm.service import ensure_demo_models
from assay.core.projects.models import Membership, Project
from assay.core.projects.service import create_project
from assay.runtime import Runtime
from assay.settings import REPO_ROOT, Settings

log = logging.getLogger(__name__)
DEMO_EMAIL = "demo@assay.local"
DEMO_PASSWORD = "Demo-password-2026!"
DEMO_PROJECT = "Demo"


@cache
def demo_cases() -> list[dict[str, Any]]:
    data = json.loads((REPO_ROOT / "seeds" / "demo_dataset.json").read_text())
    return list(data["cases"])


def seed_demo(session: Session, settings: Settings,
              tour: Runtime | None = None) -> tuple[User, Project]:
    """The demo user and project, idempotently: running it twice changes nothing. Given a
    runtime (`tour`), also the demo tour (`demo_tour.py`: a dataset generated from the PDF
    in seeds/, scored runs, manual scores, judge mode), run by the real engine."""
    demo = session.scalar(select(User).where(User.email == DEMO_EMAIL))
    if demo is None:
        demo = register(session, DEMO_EMAIL, DEMO_PASSWORD, "Demo user", settings.bcrypt_rounds)
    project = session.scalar(select(Project).join(Membership).where(
        Membership.user_id == demo.id, Project.name == DEMO_PROJECT,
        Project.deleted_at.is_(None)))
    if project is None:
        project = create_project(session, demo, DEMO_PROJECT,
                                 "A demo project on Assay's fake LLM provider")
    ensure_demo_models(session, demo, project, settings.fake_provider_url)
    ensure_demo_dataset(session, demo, project, demo_cases())
    session.commit()
    if tour is not None:
        from assay.demo_tour import seed_tour

        try:
            seed_tour(session, tour, demo, project)
        except Exception:  # the app must still start; the next seed resumes where it stopped
            session.rollback()
            log.exception("The demo tour could not be seeded completely; the demo project "
                          "has what was made. Run `assay seed` again to finish it.")
    return demo, project
