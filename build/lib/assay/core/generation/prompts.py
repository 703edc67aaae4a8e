"""The prompts a generator model gets, one per batch. Pure: no I/O.

Each asks for a JSON array in a fixed shape (parsing copes when the model answers
otherwise), says how many items the batch wants, and names the batch ("batch 2 of 5") so
parallel batches are steered apart instead of repeating each other.
"""

from __future__ import annotations

from typing import Any

SYSTEM = ("You write evaluation data for testing language models. Answer with the JSON "
          "array asked for and nothing else.")


def _batch(index: int, batches: int) -> str:
    if batches <= 1:
        return ""
    return (f"\nThis is batch {index + 1} of {batches}: other batches are written in "
            "parallel, so cover different sub-topics and phrasings than a first batch would.")


def _chat(text: str) -> list[dict[str, Any]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]


def questions(spec: dict[str, Any], count: int, index: int = 0,
              batches: int = 1) -> list[dict[str, Any]]:
    """myarena 3.2: topic, difficulty, type tags and free instructions."""
    difficulty = spec.get("difficulty")
    tags = spec.get("type_tags") or []
    lines = [f"Generate {count} distinct {difficulty + ' ' if difficulty else ''}evaluation "
             f"questions about: {spec['topic']}."]
    if tags:
        lines.append(f"Cover these question types: {', '.join(tags)}.")
    if spec.get("instructions"):
        lines.append(f"Instructions: {spec['instructions']}")
    lines.append('Output a JSON array of objects: [{"question": "...", "answer": "a short '
                 'reference answer"}]. Each question must stand on its own.')
    return _chat("\n".join(lines) + _batch(index, batches))


def cases(spec: dict[str, Any], count: int, index: int = 0,
          batches: int = 1) -> list[dict[str, Any]]:
    """edison FR-EC-004: domain hints, diversity, the prompt's variables, edge cases."""
    variables = spec["variables"]
    example = ", ".join(f'"{name}": "..."' for name in variables)
    lines = [f"Generate {count} distinct test cases for a prompt with the template "
             f"variables: {', '.join(variables)}."]
    if spec.get("prompt_template"):
        lines.append("The prompt these cases will fill in and test:\n<prompt>\n"
                     f"{spec['prompt_template']}\n</prompt>")
    if spec.get("domain_hints"):
        lines.append(f"Domain: {spec['domain_hints']}.")
    diversity = int(spec.get("diversity", 5))
    lines.append(f"Diversity {diversity} of 10: "
                 + ("keep the cases close to typical, everyday inputs." if diversity <= 3 else
                    "mix typical inputs with varied ones." if diversity <= 7 else
                    "make every case as different as possible in content, length, style "
                    "and language register."))
    if spec.get("include_edge_cases"):
        lines.append("About one case in five should be an edge case (empty-ish, very long, "
                     "ambiguous, adversarial or unusual input); mark it with "
                     '"edge_case": true.')
    lines.append(f'Output a JSON array of objects: [{{"input": {{{example}}}, "expected": '
                 '"the ideal output, or null", "edge_case": false}]. Every object must give '
                 "every variable a value.")
    return _chat("\n".join(lines) + _batch(index, batches))


def conversations(spec: dict[str, Any], document_name: str, document_text: str, count: int,
                  index: int = 0, batches: int = 1) -> list[dict[str, Any]]:
    """rag-eval: multi-turn conversations whose every turn is answered from the document."""
    turns = int(spec["turns"])
    text = (f"Here is a document named {document_name!r}:\n<document>\n{document_text}\n"
            "</document>\n\n"
            f"Generate {count} distinct conversations of {turns} turn(s) each between a user "
            "and an assistant about this document. Every question must be answerable from "
            "the document alone, later questions may follow up on earlier ones, and every "
            "turn's ground_truth must be the answer the document gives (quote or closely "
            "paraphrase it; never use outside knowledge).\n"
            'Output a JSON array: [{"turns": [{"question": "...", "ground_truth": "..."}]}].')
    return _chat(text + _batch(index, batches))


def document_frame(spec: dict[str, Any], document_name: str, count: int,
                   batches: int) -> list[dict[str, Any]]:
    """The conversation prompt without the document: what the document may be cut to fit."""
    return conversations(spec, document_name, "", count, batches - 1, batches)
