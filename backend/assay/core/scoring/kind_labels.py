"""What the product calls each scorer kind: a human name and one line saying what it
checks, written for users (the kind id stays beside it on screen). A test keeps every kind
of the registry named here."""

from __future__ import annotations

LABELS: dict[str, tuple[str, str]] = {
    "code_execution": ("Code execution", "Runs the answer's Python code against the case's "
                       "tests in a sandbox (a project admin must allow it)."),
    "contains": ("Contains text", "The answer contains a given text (letter case must match)."),
    "contains_all": ("Contains all of", "The answer contains every one of the given texts."),
    "contains_any": ("Contains any of", "The answer contains at least one of the given texts."),
    "cost": ("Cost limit", "The model call cost no more than a given amount."),
    "equals": ("Exact match", "The answer equals the expected text."),
    "icontains": ("Contains text (any case)", "The answer contains a given text, ignoring "
                  "letter case."),
    "is_json": ("Valid JSON", "The answer is valid JSON."),
    "json_schema": ("JSON schema", "The answer is JSON that fits a given JSON Schema."),
    "key_points": ("Key points", "Each key point occurs in the answer, allowing small "
                   "wording differences."),
    "latency": ("Response time", "The model answered within a given number of milliseconds."),
    "length": ("Length", "The answer's length in characters, words or tokens is within "
               "limits."),
    "llm_judge": ("LLM judge (rubric)", "Judge models score the answer on each criterion of "
                  "a weighted rubric."),
    "manual": ("Human review", "People score the answers by hand on the review page."),
    "must_include": ("Must include", "Every one of the given terms must occur; the score is "
                     "the share found."),
    "must_not_include": ("Must not include", "None of the given terms may occur."),
    "pairwise_judge": ("Pairwise judge", "Judge models say which of two answers to a case is "
                       "better, asked in both orders."),
    "question_quality": ("Question quality", "Judge models rate each question of a dataset "
                         "on fixed criteria, 1 to 10."),
    "rag_metrics": ("RAG metrics", "Judge models rate groundedness in the retrieved context, "
                    "relevance, coherence and fluency, 1 to 5, plus latency."),
    "regex": ("Pattern match", "The answer matches a regular expression."),
    "rules": ("Conversation rules", "Rules written in YAML checked against a conversation or "
              "an agent's trace."),
    "safety": ("Safety check", "Looks for personal data and jailbreak patterns in the "
               "answer; can flag or fail it."),
    "similarity": ("Similarity", "How close the answer is to the expected text, 0 to 1."),
    "starts_with": ("Starts with", "The answer starts with a given text."),
    "verdict_judge": ("Pass/fail judge", "A judge model decides from your written rubric "
                      "whether an agent's conversation passes, and says why."),
}
