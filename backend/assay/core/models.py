"""Every table, imported in one place so metadata and migrations see them all."""

from assay.core.auth.models import ApiToken, RevokedSession, User
from assay.core.base import Base
from assay.core.challenges.models import Attempt, Challenge, ChallengeTrace, Draft
from assay.core.datasets.models import Case, Dataset, DatasetVersion, VersionCase
from assay.core.experiments.models import (
    Experiment,
    ExperimentConfigVersion,
    Iteration,
    ReviewComment,
    Suggestion,
)
from assay.core.ledger.models import BudgetHold
from assay.core.llm.models import CachedResponse, Credential, ModelConfig
from assay.core.projects.models import AuditEvent, Membership, Project, Role
from assay.core.prompts.models import Prompt, PromptVersion
from assay.core.reports.models import ScoreCase, SpendDay, TargetDay, TargetLatency
from assay.core.retrieval.models import DocumentChunk
from assay.core.runs.cache import RunCache
from assay.core.runs.models import Output, Run, RunTarget
from assay.core.scoring.models import Comparison, RunScorer, Score, ScorerConfig, ScorerVersion

__all__ = [
    "ApiToken", "Attempt", "AuditEvent", "Base", "BudgetHold", "CachedResponse", "Case",
    "Challenge",
    "ChallengeTrace", "Comparison", "Credential", "Dataset", "DatasetVersion",
    "DocumentChunk", "Draft",
    "Experiment", "ExperimentConfigVersion", "Iteration", "Membership", "ModelConfig",
    "Output", "Project", "Prompt", "PromptVersion", "ReviewComment", "RevokedSession", "Role",
    "Run", "RunCache", "RunScorer", "RunTarget", "Score", "ScoreCase", "ScorerConfig",
    "ScorerVersion", "SpendDay", "Suggestion", "TargetDay", "TargetLatency", "User", "VersionCase",
]
