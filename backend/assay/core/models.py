"""Every table, imported in one place so metadata and migrations see them all."""

from assay.core.auth.models import ApiToken, RevokedSession, User
from assay.core.base import Base
from assay.core.datasets.models import Case, Dataset, DatasetVersion, VersionCase
from assay.core.llm.models import CachedResponse, Credential, ModelConfig
from assay.core.projects.models import AuditEvent, Membership, Project, Role
from assay.core.prompts.models import Prompt, PromptVersion
from assay.core.reports.models import ScoreCase, SpendDay, TargetDay, TargetLatency
from assay.core.runs.models import Output, Run, RunTarget
from assay.core.scoring.models import Comparison, RunScorer, Score, ScorerConfig, ScorerVersion

__all__ = [
    "ApiToken", "AuditEvent", "Base", "CachedResponse", "Case", "Comparison", "Credential",
    "Dataset", "DatasetVersion", "Membership", "ModelConfig", "Output", "Project", "Prompt",
    "PromptVersion", "RevokedSession", "Role", "Run", "RunScorer", "RunTarget", "Score",
    "ScoreCase", "ScorerConfig", "ScorerVersion", "SpendDay", "TargetDay", "TargetLatency",
    "User", "VersionCase",
]
