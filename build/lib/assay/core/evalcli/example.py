"""The commented config `assay init` writes."""

EXAMPLE = """\
# assay eval config: `assay eval assay.yaml` (README "assay eval"; `--estimate` first)
description: Explain concepts briefly

prompts:                       # each prompt runs on every model; {{vars}} come from tests
  - name: explain
    system: You are a concise teacher.
    template: "Explain {{topic}} in two sentences."

providers:                     # kinds: openai, anthropic, azure_openai, openrouter,
  - name: openrouter           #   ollama, openai_compatible, fake
    kind: openrouter           # HTTP-Referer and X-Title are sent (override in headers:)
    api_key_env: OPENROUTER_API_KEY   # the key is read from this variable, never stored
  - name: local
    kind: ollama               # http://localhost:11434 unless base_url says otherwise
  - name: fake                 # Assay's fake provider: `assay fake-provider`
    kind: fake                 # (ASSAY_FAKE_PROVIDER_URL, when set, wins)
    base_url: http://127.0.0.1:8100

models:
  - name: gpt-4o-mini
    provider: openrouter
    model: openai/gpt-4o-mini
    params: {temperature: 0, max_tokens: 300}   # temperature 0: replies are cached
    # prices in dollars per million tokens; OpenRouter's are looked up when omitted
    input_price_per_mtok: 0.15
    output_price_per_mtok: 0.60
  - name: llama3
    provider: local
    model: llama3.2            # Ollama models cost 0
    params: {temperature: 0}
  - name: fake-echo
    provider: fake
    model: fake-fast
    params: {temperature: 0}

tests:                         # inline, or a file: tests: cases.csv / cases.jsonl /
  - vars: {topic: photosynthesis}          #   an Assay dataset export (.jsonl)
    expected: sunlight
  - vars: {topic: recursion}
    expected: itself

scorers:                       # the server's scorer kinds, with the same params
  - name: close-to-expected    # reference-based (factual): similar to the case's expected
    kind: similarity
    params: {method: token_set_ratio}
    weight: 1
  - name: no-apology           # must_include / must_not_include / key_points / regex ...
    kind: must_not_include
    params: {terms: ["as an AI"]}
  - name: short
    kind: length
    params: {unit: words, max: 80}
  - name: rubric               # model-based: judges by model name; each judge replies with
    kind: llm_judge            #   a 1-10 score and a rationale per criterion, its reasoning
    params:                    #   and its confidence (0-1), all checked: a malformed reply
      judges: [gpt-4o-mini]    #   is that output's scorer error, never a crash
      rubric:
        criteria:
          - {name: accuracy, description: Is it correct, weight: 0.4, scale: "1-10"}
          - {name: completeness, description: Does it cover the topic, weight: 0.2, scale: "1-10"}
          - {name: relevance, description: Does it answer the question, weight: 0.2, scale: "1-10"}
          - {name: clarity, description: Is it clear, weight: 0.2, scale: "1-10"}
    weight: 2
    threshold: 0.7             # an output passes this scorer at 0.7 or more
  # - name: tests              # task-specific (code): the answer's code runs in the sandbox
  #   kind: code_execution     #   (bubblewrap or Landlock, seccomp, limits; no network)
  #   params:
  #     language: python       # the one language the sandbox runs; others are refused
  #     must_compile: true     # compiled before any test: no compile, score 0 and why
  #     entrypoint: fizzbuzz   # a function the code must define
  #     tests:                 # or none: each case's expected.tests, or (must_compile)
  #       - {call: "fizzbuzz(3)", expected: Fizz}   #   just the compile check
  #       - {call: "fizzbuzz(15)", expected: FizzBuzz}

settings:
  concurrency: 20              # calls in flight
  repeats: 1
  max_cost: 1.00               # dollars: a hard cap (exit 3 when it stops the run)
  # fail_under: 0.9            # exit 1 when a model's mean on a scorer is below
"""
