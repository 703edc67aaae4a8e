"""What the fake provider answers when no script matches: the reply each kind of request
Assay sends needs, recognised by the answer format the prompt requires.

- Judge prompts (rubric, RAG metrics, question quality, verdict, pairwise, meta-judge):
  ``fake_judges``, schema-valid JSON whose scores follow the output judged.
- Generation prompts (questions, cases, conversations from a document): ``fake_generate``.
- Anything else is a model under test answering: ``"{model} says: "`` and an echo of the
  last user message, shaped by the model's name, so models differ in a run:
  "*mini*" answers in five words, "*smart*" adds a sentence drawn from the prompt's own
  material (the sentence of the system prompt or earlier messages that best matches the
  question, else the question's key terms); others echo as they always have.
- A prompt holding retrieved context ("[1] ..." passages) sent to "*copier*" or
  "*contradicter*": ``fake_rag``, the passages that best match the question, repeated or
  contradicted.

- The experiment's prompt refiner (``<diff>`` and ``<note>``): ``fake_refine``, a one-line
  edit that the model under test obeys (the directives below), so the judges' scores move.
- The wizard's AI assist (JSON asked for in the system prompt): ``fake_assist``.
- A prompt holding ``fake_refine``'s directives gets an answer shaped by them (the terms
  of each point, the facts given, short sentences), so a refined prompt scores higher.

New request kinds get a (detector, responder) pair in ``HANDLERS``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assay.providers import fake_assist, fake_generate, fake_judges, fake_rag, fake_refine
from assay.providers import fake_text as t

ECHO_WORDS = 32
MINI_WORDS = 5
# words that frame a question rather than say what it is about
FRAME_WORDS = frozenset({"document", "according", "true", "describe", "describes", "relate",
                         "relates", "add", "adds", "explain", "question", "answer"})


class Request:
    """What the responders read of a chat request."""

    __slots__ = ("messages", "model", "schema_props", "seed", "system", "text")

    def __init__(self, model: str, messages: Sequence[Any], system: str, last_user: str,
                 body: Mapping[str, Any], seed: int) -> None:
        self.model, self.messages, self.system, self.seed = model, messages, system, seed
        self.text = last_user
        self.schema_props = _schema_props(body)


def _schema_props(body: Mapping[str, Any]) -> set[str]:
    """The top-level fields of a strict response_format schema, when the request sent one."""
    fmt = body.get("response_format")
    if not isinstance(fmt, Mapping):
        return set()
    spec = fmt.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, Mapping) else None
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return set(props) if isinstance(props, Mapping) else set()


def _judge(request: Request) -> str | None:
    kind = fake_judges.kind_of(request.text, request.schema_props)
    return None if kind is None else fake_judges.reply(kind, request.text, request.model,
                                                       request.seed)


def _generate(request: Request) -> str | None:
    kind = fake_generate.kind_of(request.text)
    return None if kind is None else fake_generate.reply(kind, request.text, request.model,
                                                         request.seed)


def _assist(request: Request) -> str | None:
    kind = fake_assist.kind_of(request.system)
    return None if kind is None else fake_assist.reply(kind, request.system, request.text)


HANDLERS: list[Callable[[Request], str | None]] = [_judge, _generate, _assist]


def answer(model: str, messages: Sequence[Any], system: str, last_user: str,
           body: Mapping[str, Any], seed: int, content_text: Callable[[Any], str]) -> str:
    """The reply to a request no script matched. Cheap for plain chat: the responders only
    look further when the text holds an answer-format marker."""
    if "chatty" in model:  # a model that ignores answer formats: tests of rejected replies
        return chat_answer(model, messages, system, last_user, content_text)
    from_context = fake_rag.answer(model, last_user)  # "*copier*", "*contradicter*"
    if from_context is not None:
        return from_context
    if fake_refine.is_refinement(last_user):
        return fake_refine.reply(messages, last_user, seed, content_text)
    if "JSON" in last_user or "JSON" in system or body.get("response_format") is not None:
        request = Request(model, messages, system, last_user, body, seed)
        for handler in HANDLERS:
            reply = handler(request)
            if reply is not None:
                return reply
    return chat_answer(model, messages, system, last_user, content_text)


def chat_answer(model: str, messages: Sequence[Any], system: str, last_user: str,
                content_text: Callable[[Any], str]) -> str:
    found = fake_refine.directives_in(last_user) or fake_refine.directives_in(system)
    if found:  # a refined prompt: its directives are obeyed, not echoed
        plain = fake_refine.without_directives(last_user)
        base = _plain_answer(model, messages, system, plain, content_text)
        return fake_refine.obey(base, found, plain, fake_refine.without_directives(system))
    return _plain_answer(model, messages, system, last_user, content_text)


def _plain_answer(model: str, messages: Sequence[Any], system: str, last_user: str,
                  content_text: Callable[[Any], str]) -> str:
    words = last_user.split()
    if "mini" in model:
        words = words[:MINI_WORDS]
    echo = f"{model} says: {' '.join(words[:ECHO_WORDS]) if words else 'hello'}"
    if "smart" not in model or not words:
        return echo
    return f"{echo} {_elaborate(messages, system, last_user, content_text)}"


def _elaborate(messages: Sequence[Any], system: str, question: str,
               content_text: Callable[[Any], str]) -> str:
    """One more sentence: the best-matching sentence of the material the prompt carries
    (system text, earlier messages), else the question's key terms restated."""
    earlier = [content_text(m.get("content")) for m in messages[:-1] if isinstance(m, dict)]
    material = " \n\n".join([system, *earlier])
    asked = " ".join(w for w in t.words(question) if w.lower() not in FRAME_WORDS)
    best, score = "", 0.0
    for sentence in t.sentences(material):
        overlap = t.recall(sentence, asked)
        if overlap > score:
            best, score = sentence, overlap
    if best and score > 0:
        return f"From the material given: {best}"
    terms = t.shared(question, question, limit=4)
    if not terms:
        return "In short: it depends on the details, which I would check first."
    return (f"In short, the answer turns on {', '.join(terms)}: each is considered in "
            "turn, with an example and its main limitation.")
