"""AWS Bedrock's Converse API: translate a ChatRequest to `POST {base}/model/{id}/converse`
and back, each request signed with SigV4 by botocore's signer (never by hand).

The credential's secret is the secret access key, or a JSON object
`{"secret_access_key": ..., "session_token": ...}` for temporary credentials; the access
key id and the region are its config. Converse's stream is AWS's binary event stream, not
SSE: calls are always sent unstreamed (no time to first token). The model list is
ListFoundationModels on the control plane (`bedrock.` instead of `bedrock-runtime.`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from yarl import URL

from assay import jsonio
from assay.providers.base import (
    ChatRequest,
    ChatResponse,
    Endpoint,
    HttpCall,
    ListIsTheCheck,
    ProviderError,
    as_int,
    classify_status,
    extra_headers,
    malformed,
)

SERVICE = "bedrock"  # the signing name of bedrock-runtime too
FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
          "tool_use": "tool_calls", "guardrail_intervened": "content_filter",
          "content_filtered": "content_filter"}
INFERENCE = {"max_tokens": "maxTokens", "max_completion_tokens": "maxTokens",
             "temperature": "temperature", "top_p": "topP"}
_AUTH = frozenset({"AccessDeniedException", "UnrecognizedClientException",
                   "InvalidSignatureException", "IncompleteSignatureException",
                   "ExpiredTokenException", "MissingAuthenticationTokenException",
                   "SignatureDoesNotMatchException"})
_RATE = frozenset({"ThrottlingException", "ServiceQuotaExceededException",
                   "TooManyRequestsException", "ModelNotReadyException"})
_SERVER = frozenset({"InternalServerException", "ServiceUnavailableException",
                     "ModelErrorException", "ModelStreamErrorException"})


def region(endpoint: Endpoint) -> str:
    return str(endpoint.config.get("region") or "us-east-1")


def base_url_for(region_name: str) -> str:
    return f"https://bedrock-runtime.{region_name}.amazonaws.com"


def credentials(endpoint: Endpoint) -> Credentials:
    """botocore's credentials from the config's access key id and the secret."""
    key_id = endpoint.config.get("access_key_id")
    secret, token = endpoint.api_key, None
    if secret and secret.lstrip().startswith("{"):
        try:
            parts = json.loads(secret)
        except ValueError:
            parts = {}
        secret, token = parts.get("secret_access_key"), parts.get("session_token")
        key_id = parts.get("access_key_id") or key_id
    if not key_id or not secret:
        raise ProviderError("auth", "no AWS access key id and secret access key for this "
                                    "credential")
    return Credentials(str(key_id), str(secret), str(token) if token else None)


def _host(url: str) -> str:
    parts = urlsplit(url)
    default = {"https": 443, "http": 80}.get(parts.scheme)
    host = parts.hostname or ""
    return host if parts.port in (None, default) else f"{host}:{parts.port}"


def signed(endpoint: Endpoint, method: str, url: str, data: bytes | None,
           headers: dict[str, str]) -> HttpCall:
    """The call with SigV4's headers (X-Amz-Date, Authorization, X-Amz-Security-Token),
    over exactly the URL, Host and bytes the client sends."""
    url = str(URL(url))  # as aiohttp will write it on the wire
    headers = {**headers, "Host": _host(url)}
    request = AWSRequest(method=method, url=url, data=data or b"", headers=headers)
    SigV4Auth(credentials(endpoint), SERVICE, region(endpoint)).add_auth(request)
    return HttpCall(url, {}, dict(request.headers.items()), method, data)


def _message(message: Mapping[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, list):
        blocks = [{"text": p["text"]} for p in content
                  if isinstance(p, dict) and isinstance(p.get("text"), str)]
    else:
        blocks = [{"text": "" if content is None else str(content)}]
    return {"role": "assistant" if message.get("role") == "assistant" else "user",
            "content": blocks}


def body(request: ChatRequest) -> dict[str, Any]:
    system = [{"text": m["content"]} for m in request.messages
              if m.get("role") == "system" and isinstance(m.get("content"), str)]
    out: dict[str, Any] = {"messages": [_message(m) for m in request.messages
                                        if m.get("role") != "system"]}
    if system:
        out["system"] = system
    params = request.params
    inference = {INFERENCE[k]: v for k, v in params.items() if k in INFERENCE and v is not None}
    stop = params.get("stop")
    if stop:
        inference["stopSequences"] = [stop] if isinstance(stop, str) else list(stop)
    if inference:
        out["inferenceConfig"] = inference
    if params.get("top_k") is not None:  # a model's own field (Anthropic's, Mistral's...)
        out["additionalModelRequestFields"] = {"top_k": params["top_k"]}
    tools = params.get("tools")
    if tools:
        out["toolConfig"] = {"tools": [{"toolSpec": {
            "name": t.get("name"), "description": t.get("description", ""),
            "inputSchema": {"json": t.get("parameters") or {"type": "object"}}}}
            for t in (x.get("function", x) for x in tools if isinstance(x, dict))]}
    return out


def _usage(usage: Any) -> tuple[int | None, int | None]:
    if not isinstance(usage, dict):
        return None, None
    tokens_in = as_int(usage.get("inputTokens"))
    if tokens_in is not None:
        tokens_in += sum(as_int(usage.get(k)) or 0
                         for k in ("cacheReadInputTokens", "cacheWriteInputTokens"))
    return tokens_in, as_int(usage.get("outputTokens"))


class BedrockAdapter(ListIsTheCheck):
    def _root(self, endpoint: Endpoint) -> str:
        return endpoint.base_url.strip().rstrip("/")

    def _headers(self, endpoint: Endpoint) -> dict[str, str]:
        return extra_headers(endpoint, {"Content-Type": "application/json",
                                        "Accept": "application/json"})

    def build(self, endpoint: Endpoint, request: ChatRequest, stream: bool = False) -> HttpCall:
        payload = body(request)
        url = f"{self._root(endpoint)}/model/{quote(request.model, safe='')}/converse"
        call = signed(endpoint, "POST", url, jsonio.dumps_bytes(payload),
                      self._headers(endpoint))
        return HttpCall(call.url, payload, call.headers, "POST", call.body)

    def parse(self, reply: Any) -> ChatResponse:
        try:
            blocks = reply["output"]["message"]["content"]
            text = "".join(b["text"] for b in blocks if isinstance(b, dict) and "text" in b)
            stop = reply.get("stopReason")
        except (KeyError, TypeError, AttributeError) as exc:
            raise malformed("no output.message.content[]", exc) from exc
        tokens_in, tokens_out = _usage(reply.get("usage"))
        return ChatResponse(text=text, tokens_in=tokens_in, tokens_out=tokens_out,
                            finish_reason=FINISH.get(stop, stop) if stop else None, raw=reply)

    def stream_parser(self) -> Any:
        raise NotImplementedError("Converse calls are sent unstreamed")

    def classify_error(self, status: int, body: Any,
                       headers: Mapping[str, str]) -> tuple[str, float | None] | None:
        """From x-amzn-ErrorType (`ThrottlingException:http://...`) or the body's __type."""
        kind = str(headers.get("x-amzn-ErrorType") or "").split(":", 1)[0]
        if not kind and isinstance(body, dict):
            kind = str(body.get("__type", "")).rsplit("#", 1)[-1]
        if kind in _AUTH:
            return "auth", None
        if kind in _RATE:
            return "rate_limited", None
        if kind in _SERVER:
            return "server_error", None
        if kind == "ModelTimeoutException":
            return "timeout", None
        return classify_status(status, body), None

    def _control(self, endpoint: Endpoint) -> str:
        return self._root(endpoint).replace("://bedrock-runtime.", "://bedrock.", 1)

    def models_call(self, endpoint: Endpoint) -> HttpCall | None:
        headers = {"Accept": "application/json", **extra_headers(endpoint, {})}
        return signed(endpoint, "GET", f"{self._control(endpoint)}/foundation-models"
                      "?byOutputModality=TEXT", None, headers)

    def model_items(self, body: Any) -> list[dict[str, Any]]:
        try:
            rows = body["modelSummaries"]
        except (KeyError, TypeError) as exc:
            raise malformed("no modelSummaries[]", exc) from exc
        return [{"id": str(m["modelId"]), "name": m.get("modelName")}
                for m in rows if isinstance(m, dict) and m.get("modelId")]

    def parse_models(self, body: Any) -> list[str]:
        return sorted(item["id"] for item in self.model_items(body))


ADAPTER = BedrockAdapter()
