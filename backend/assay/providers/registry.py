"""Credential kind -> adapter. Every OpenAI-compatible server shares OpenAI's adapter (OpenRouter
and Ollama a subclass of it: their key check and model list differ)."""

from __future__ import annotations

from assay.providers import anthropic, azure, bedrock, gemini, openai, vertex
from assay.providers.base import Adapter

ADAPTERS: dict[str, Adapter] = {
    "openai": openai.ADAPTER,
    "openrouter": openai.OPENROUTER,  # OpenAI's, but /v1/key checks the key
    "ollama": openai.OLLAMA,  # its OpenAI-compatible /v1; models from /api/tags
    "openai_compatible": openai.ADAPTER,  # vLLM, llama.cpp, LM Studio, ...
    "fake": openai.ADAPTER,  # Assay's fake provider speaks OpenAI at /v1 (and the others)
    "azure_openai": azure.ADAPTER,
    "anthropic": anthropic.ADAPTER,
    "google_gemini": gemini.ADAPTER,  # the Gemini API: generateContent, an API key
    "google_vertex": vertex.ADAPTER,  # Vertex AI: generateContent, a service account
    "aws_bedrock": bedrock.ADAPTER,  # Converse, SigV4-signed
}
KINDS: tuple[str, ...] = tuple(ADAPTERS)
# The fake provider refuses a call without a key; a keyless fake credential sends this.
PLACEHOLDER_KEYS = {"fake": "assay"}


class UnknownKind(KeyError):
    pass


def adapter_for(kind: str) -> Adapter:
    try:
        return ADAPTERS[kind]
    except KeyError:
        raise UnknownKind(f"no adapter for provider kind {kind!r}; known: {list(KINDS)}") from None


def api_key_for(kind: str, key: str | None) -> str | None:
    return key or PLACEHOLDER_KEYS.get(kind)
