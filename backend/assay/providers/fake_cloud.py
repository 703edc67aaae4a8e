"""The fake provider's Google (Gemini API, Vertex AI) and AWS Bedrock protocols: reading
their bodies into the OpenAI shape the rest of the fake works on, their reply and error
shapes, and their authentication, checked the way the real services check it:

* Gemini: the `x-goog-api-key` header (or `?key=`); `bad-key` is an invalid key (a 400
  with reason API_KEY_INVALID, as Google answers), none is a 403.
* Vertex: a bearer token this fake minted at its `/token` endpoint (a service account's
  token_uri), in exchange for a JWT assertion signed by a service account whose public key
  is in the config's `google_accounts` (client_email -> PEM). Nothing else is accepted.
* Bedrock: the SigV4 signature, recomputed by botocore from the request as received
  (method, path, query, signed headers, body) with the secret of its access key id in
  the config's `aws_keys`; a stale date or another region or service is refused too.
"""

from __future__ import annotations

import hmac
import json
import secrets
import time
from datetime import UTC, datetime
from typing import Any

import jwt
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from assay.providers import fake_shapes as shapes

GEMINI, VERTEX, BEDROCK = "gemini", "vertex", "bedrock"
CLOUD = frozenset({GEMINI, VERTEX, BEDROCK})
GOOGLE = frozenset({GEMINI, VERTEX})
GOOGLE_TOKEN_AUDIENCE = "https://oauth2.googleapis.com/token"
JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
CLOCK_SKEW_S = 300
_GOOGLE_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                  404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL"}
_BEDROCK_TYPE = {400: "ValidationException", 401: "UnrecognizedClientException",
                 403: "AccessDeniedException", 404: "ResourceNotFoundException",
                 429: "ThrottlingException", 500: "InternalServerException"}


class Refused(Exception):
    def __init__(self, status: int, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.reason = status, message, reason


# --- bodies -> the OpenAI shape ---------------------------------------------------------------


def _text(parts: Any) -> str:
    if not isinstance(parts, list):
        return ""
    return " ".join(p["text"] for p in parts
                    if isinstance(p, dict) and isinstance(p.get("text"), str))


def google_body(model: str, body: dict[str, Any], stream: bool) -> dict[str, Any]:
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise Refused(400, "* GenerateContentRequest.contents: contents is not specified")
    messages: list[dict[str, Any]] = []
    system = body.get("systemInstruction")
    if isinstance(system, dict):
        messages.append({"role": "system", "content": _text(system.get("parts"))})
    for item in contents:
        if not isinstance(item, dict):
            raise Refused(400, "* GenerateContentRequest.contents: each must be an object")
        role = "assistant" if item.get("role") == "model" else "user"
        messages.append({"role": role, "content": _text(item.get("parts"))})
    config = body.get("generationConfig") or {}
    return {"model": model, "messages": messages, "stream": stream,
            "max_tokens": config.get("maxOutputTokens") if isinstance(config, dict) else None}


def bedrock_body(model: str, body: dict[str, Any]) -> dict[str, Any]:
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise Refused(400, "The messages field is required and must not be empty.")
    messages = [{"role": "system", "content": _text(body.get("system"))}] \
        if body.get("system") else []
    for item in raw:
        if not isinstance(item, dict) or item.get("role") not in ("user", "assistant"):
            raise Refused(400, "Each message needs a role of user or assistant.")
        messages.append({"role": item["role"], "content": _text(item.get("content"))})
    inference = body.get("inferenceConfig") or {}
    return {"model": model, "messages": messages,
            "max_tokens": inference.get("maxTokens") if isinstance(inference, dict) else None}


def context_message(flavor: str, tokens: int, limit: int) -> str:
    if flavor == BEDROCK:
        return "Input is too long for requested model."
    return (f"The input token count ({tokens}) exceeds the maximum number of tokens "
            f"allowed ({limit}).")


# --- replies ----------------------------------------------------------------------------------


def google_reply(id_: str, model: str, text: str, finish: str, tokens_in: int,
                 tokens_out: int, usage: bool = True) -> dict[str, Any]:
    reply: dict[str, Any] = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                        "finishReason": finish, "index": 0}],
        "modelVersion": model, "responseId": id_}
    if usage:
        reply["usageMetadata"] = {"promptTokenCount": tokens_in,
                                  "candidatesTokenCount": tokens_out,
                                  "totalTokenCount": tokens_in + tokens_out}
    return reply


def google_stream(id_: str, model: str, text: str, finish: str, tokens_in: int,
                  tokens_out: int) -> list[bytes]:
    """Google's SSE: each event a response with the next text; the last one has the finish
    reason and the usage."""
    chunks = shapes.pieces(text) or [""]
    events = []
    for n, piece in enumerate(chunks):
        last = n == len(chunks) - 1
        chunk = google_reply(id_, model, piece, finish, tokens_in, tokens_out, usage=last)
        if not last:
            del chunk["candidates"][0]["finishReason"]
        events.append(b"data: " + shapes.dumps(chunk) + b"\r\n\r\n")
    return events


def google_safety(id_: str, model: str, tokens_in: int) -> dict[str, Any]:
    return {"candidates": [{"finishReason": "SAFETY", "index": 0, "safetyRatings": [
        {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH",
         "blocked": True}]}], "modelVersion": model, "responseId": id_,
        "usageMetadata": {"promptTokenCount": tokens_in, "totalTokenCount": tokens_in}}


def bedrock_reply(model: str, text: str, stop: str, tokens_in: int, tokens_out: int,
                  latency_ms: int) -> dict[str, Any]:
    return {"output": {"message": {"role": "assistant", "content": [{"text": text}]}},
            "stopReason": stop, "metrics": {"latencyMs": latency_ms},
            "usage": {"inputTokens": tokens_in, "outputTokens": tokens_out,
                      "totalTokens": tokens_in + tokens_out}}


def error(flavor: str, status: int, message: str, reason: str | None = None,
          retry_after_s: float | None = None) -> tuple[bytes, dict[str, str]]:
    """The body and headers of an error reply in the flavor's own shape."""
    if flavor == BEDROCK:
        type_ = reason or _BEDROCK_TYPE.get(status, "InternalServerException")
        return (shapes.dumps({"message": message}),
                {"x-amzn-ErrorType": f"{type_}:http://internal.amazon.com/coral/com.amazon.bedrock/"})
    details: list[dict[str, Any]] = []
    if reason:
        details.append({"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason,
                        "domain": "googleapis.com"})
    if retry_after_s is not None:
        details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo",
                        "retryDelay": f"{retry_after_s:g}s"})
    status_name = _GOOGLE_STATUS.get(status, "INTERNAL" if status >= 500 else "UNKNOWN")
    return shapes.dumps({"error": {"code": status, "message": message, "status": status_name,
                                   "details": details}}), {}


def models(flavor: str, names: list[str]) -> bytes:
    if flavor == BEDROCK:
        return shapes.dumps({"modelSummaries": [
            {"modelId": name, "modelName": name, "providerName": "Assay fake",
             "outputModalities": ["TEXT"], "inferenceTypesSupported": ["ON_DEMAND"]}
            for name in names]})
    if flavor == VERTEX:
        return shapes.dumps({"publisherModels": [
            {"name": f"publishers/google/models/{name}"} for name in names]})
    return shapes.dumps({"models": [
        {"name": f"models/{name}", "displayName": name,
         "supportedGenerationMethods": ["generateContent", "countTokens"]} for name in names]})


# --- authentication ---------------------------------------------------------------------------


def gemini_key(headers: Any, query: Any) -> None:
    key = headers.get("x-goog-api-key") or query.get("key")
    if not key:
        raise Refused(403, "Method doesn't allow unregistered callers (callers without "
                           "established identity). Please use API Key or other form of API "
                           "consumer identity to call this API.", "CREDENTIALS_MISSING")
    if key == "bad-key":
        raise Refused(400, "API key not valid. Please pass a valid API key.", "API_KEY_INVALID")


class TokenIssuer:
    """The token_uri of the configured service accounts, and the tokens it minted."""

    def __init__(self) -> None:
        self.tokens: dict[str, float] = {}  # token -> expiry (epoch seconds)
        self.minted = 0

    def mint(self, form: Any, audience: str, accounts: dict[str, str],
             ttl_s: float) -> dict[str, Any]:
        if form.get("grant_type") != JWT_GRANT:
            raise Refused(400, "invalid_grant: grant_type must be " + JWT_GRANT)
        assertion = str(form.get("assertion") or "")
        try:
            claims = jwt.decode(assertion, options={"verify_signature": False})
            public_key = accounts[str(claims.get("iss"))]
            # google-auth addresses the assertion to Google's token endpoint, whatever
            # token_uri it posts it to
            jwt.decode(assertion, public_key, algorithms=["RS256"],
                       audience=[audience, GOOGLE_TOKEN_AUDIENCE], leeway=CLOCK_SKEW_S)
        except (jwt.PyJWTError, KeyError, ValueError):
            raise Refused(400, "invalid_grant: Invalid JWT Signature.") from None
        token = "ya29.fake-" + secrets.token_urlsafe(24)
        self.tokens[token] = time.time() + ttl_s
        self.minted += 1
        return {"access_token": token, "expires_in": int(ttl_s), "token_type": "Bearer"}

    def check(self, headers: Any) -> None:
        auth = str(headers.get("Authorization", ""))
        token = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
        expires = self.tokens.get(token)
        if expires is None or expires < time.time():
            raise Refused(401, "Request had invalid authentication credentials. Expected OAuth "
                               "2 access token, login cookie or other valid authentication "
                               "credential.", "ACCESS_TOKEN_TYPE_UNSUPPORTED")


def _scope(authorization: str) -> tuple[str, list[str], str, list[str]]:
    """(access key id, [date, region, service, aws4_request], signed headers, signature)."""
    algorithm, _, rest = authorization.partition(" ")
    if algorithm != "AWS4-HMAC-SHA256":
        raise Refused(403, "Authorization header requires AWS4-HMAC-SHA256.",
                      "IncompleteSignatureException")
    fields = dict(part.strip().split("=", 1) for part in rest.split(",") if "=" in part)
    try:
        key_id, *scope = fields["Credential"].split("/")
        return key_id, scope, fields["SignedHeaders"], [fields["Signature"]]
    except KeyError:
        raise Refused(403, "Authorization header requires Credential, SignedHeaders and "
                           "Signature.", "IncompleteSignatureException") from None


def verify_sigv4(method: str, host: str, raw_path: str, headers: Any, body: bytes,
                 keys: dict[str, str], service: str = "bedrock") -> None:
    """Refuse a request whose SigV4 signature botocore does not recompute identically."""
    key_id, scope, signed_names, (signature,) = _scope(str(headers.get("Authorization", "")))
    secret = keys.get(key_id)
    if secret is None:
        raise Refused(403, "The security token included in the request is invalid.",
                      "UnrecognizedClientException")
    if len(scope) != 4 or scope[2] != service or scope[3] != "aws4_request":
        raise Refused(403, f"Credential should be scoped to correct service: '{service}'.",
                      "InvalidSignatureException")
    stamp = str(headers.get("X-Amz-Date", ""))
    try:
        when = datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        raise Refused(403, "Missing or malformed X-Amz-Date.", "IncompleteSignatureException") \
            from None
    if abs(time.time() - when.timestamp()) > CLOCK_SKEW_S or scope[0] != stamp[:8]:
        raise Refused(403, "Signature expired or not yet current.", "InvalidSignatureException")
    names = signed_names.split(";")
    signed_headers = {name: str(headers.get(name, "")) for name in names}
    request = AWSRequest(method=method, url=f"http://{host}{raw_path}", data=body,
                         headers=signed_headers)
    request.context["timestamp"] = stamp
    token = headers.get("X-Amz-Security-Token")
    auth = SigV4Auth(Credentials(key_id, secret, token), service, scope[1])
    canonical = auth.canonical_request(request)
    expected = auth.signature(auth.string_to_sign(request, canonical), request)
    if not hmac.compare_digest(expected, signature) or "host" not in names:
        raise Refused(403, "The request signature we calculated does not match the signature "
                           "you provided. Check your AWS Secret Access Key and signing method.",
                      "InvalidSignatureException")


def parse_json(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw)
    except ValueError:
        raise Refused(400, "Invalid JSON payload received.") from None
    if not isinstance(body, dict):
        raise Refused(400, "The request body must be a JSON object.")
    return body
