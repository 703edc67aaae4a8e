"""Judge calls for scorers: a judge ref (a model config's id or name in the project) sent
through the shard's LLM client, so judges get the same retries, limits and timing as
the calls they judge."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from assay.core.llm.models import ModelConfig
from assay.providers.base import ChatRequest, Endpoint
from assay.providers.client import LLMClient
from assay.providers.pricing import cost_micros
from assay.scorers.base import JudgeReply


@dataclass(frozen=True)
class JudgeModel:
    name: str  # the model config's name: what scores record as their judge
    model: str  # the provider's model id
    endpoint: Endpoint = field(repr=False)
    params: Mapping[str, Any]
    price_in: int | None
    price_out: int | None
    key_error: str | None = None
    id: int | None = None  # the model config's (what the ledger credits)


MAX_ID = 2**31 - 1  # ids are 32-bit integers


def find_judges(session: Session, project_id: int,
                refs: Iterable[str]) -> dict[str, ModelConfig]:
    """Ref -> the project's model config it names (by id or name); unknown refs absent."""
    wanted = {str(r) for r in refs}
    if not wanted:
        return {}
    # an id is ASCII digits within the 32-bit ids ("²" is a digit to isdigit, not to int;
    # a larger number is out of range for PostgreSQL): anything else can only be a name
    ids = [int(r) for r in wanted if r.isascii() and r.isdigit() and int(r) <= MAX_ID]
    models = session.scalars(select(ModelConfig).where(
        ModelConfig.project_id == project_id,
        or_(ModelConfig.name.in_(wanted), ModelConfig.id.in_(ids)))).all()
    found: dict[str, ModelConfig] = {}
    for model in models:
        for ref in (str(model.id), model.name):
            if ref in wanted:
                found[ref] = model
    return found


def judge_models(session: Session, project_id: int, refs: Iterable[str],
                 secret_key: str) -> dict[str, JudgeModel]:
    from assay.core.runs.service import resolve_keys

    found = find_judges(session, project_id, refs)
    keys = resolve_keys(list({m.credential.id: m.credential for m in found.values()}.values()),
                        secret_key)
    out = {}
    for ref, m in found.items():
        key, key_error = keys[m.credential.id]
        credential = m.credential
        out[ref] = JudgeModel(m.name, m.model, Endpoint(
            credential.kind, credential.base_url, key, dict(credential.config or {}),
            credential.id), dict(m.params or {}), m.input_price_per_mtok_micros,
            m.output_price_per_mtok_micros, key_error, m.id)
    return out


class ModelJudge:
    """A JudgeCall over the LLM client."""

    def __init__(self, client: LLMClient, models: Mapping[str, JudgeModel]) -> None:
        self.client, self.models = client, models

    async def __call__(self, judge: str, messages: list[dict[str, Any]],
                       params: Mapping[str, Any]) -> JudgeReply:
        model = self.models.get(str(judge))
        if model is None:
            return JudgeReply(None, str(judge), "not_found",
                              f"No model {judge!r} in this project to judge with")
        if model.key_error is not None:
            return JudgeReply(None, model.name, "auth", model.key_error)
        request = ChatRequest(model.model, messages, {**model.params, **params})
        result = await self.client.chat(model.endpoint, request)
        if result.error is not None or result.response is None:
            error = result.error
            return JudgeReply(None, model.name, error.error_class if error else "internal",
                              error.message if error else "no reply", model_id=model.id,
                              calls=result.attempts)
        reply = result.response
        return JudgeReply(reply.text, model.name, tokens_in=reply.tokens_in,
                          tokens_out=reply.tokens_out,
                          cost_micros=cost_micros(reply.tokens_in, reply.tokens_out,
                                                  model.price_in, model.price_out),
                          model_id=model.id, calls=result.attempts)
