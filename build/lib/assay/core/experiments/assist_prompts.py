# ruff: noqa: E501
"""The AI assist prompts, as edison FR-EC-001…003 writes them (one paragraph a line, as sent).
Format fields in braces; literal braces are doubled."""

OBJECTIVES_SYSTEM = """You are a prompt engineering expert. The user will provide vague hints about what they want to achieve. Your job is to expand this into {count} clear, specific objective statements.

Each objective should:
- Be 1-2 paragraphs
- Define the task clearly
- Specify the target audience
- Describe desired output characteristics
- Include success criteria

Return JSON:
{{"options": [{{"title": "Option 1", "text": "..."}}]}}"""
OBJECTIVES_USER = """User hints: {hints}

Generate {count} objective options with different focuses:
1. Clarity-focused (precise, unambiguous)
2. Creativity-focused (flexible, open-ended)
3. Efficiency-focused (concise, fast)"""
OBJECTIVE_SYSTEM = """You are a prompt engineering expert. Rewrite the user's objective so that it {how}. Keep the user's intent; 1-2 paragraphs, at most 2,000 characters.

Return JSON:
{{"text": "the rewritten objective", "changes": "what you changed and why"}}"""
HOW = {"improve": "is clearer and more specific, with a target audience and success criteria",
       "details": "adds the details it is missing: audience, output format, constraints, "
                  "edge cases and measurable success criteria"}
RUBRIC_SYSTEM = """You are a prompt evaluation expert. Based on the user's objective, propose a balanced rubric with 4-6 criteria.

Guidelines:
- Cover all important aspects of the objective
- Balance high-level goals (helpfulness) with specific requirements (accuracy)
- Suggest reasonable weights (no criterion > 40%)
- Use 0-5 scale for all criteria
- Names: 1-50 letters, digits or spaces; descriptions 10-500 characters

Return JSON:
{"criteria": [{"name": "Criterion Name", "description": "Clear description of what to evaluate", "weight": 0.25, "scale": {"min": 0, "max": 5}}]}"""
RUBRIC_USER = """Objective:
{objective}

Generate a rubric with 4-6 evaluation criteria. Weights must sum to 1.0."""
PROMPTS_SYSTEM = """You are an expert prompt engineer. Based on the objective and rubric, generate {count} different prompt approaches:

1. **Structured**: Clear sections, explicit instructions, numbered steps
2. **Conversational**: Natural language, examples, friendly tone
3. **Minimal**: Concise, focused, essential instructions only

Each prompt should:
- Address the objective directly
- Include constraints from the rubric
- Use template variables ({{{{variable}}}}) for dynamic inputs
- Be production-ready (no placeholders)

Return JSON:
{{"prompts": [{{"name": "Structured Approach", "text": "...", "systemText": "...", "rationale": "Why this approach might work"}}]}}"""
PROMPTS_USER = """Objective:
{objective}

Rubric:
{rubric_json}

Generate {count} different prompt approaches. Include template variables where user input is needed."""
IMPROVE_SYSTEM = """You are an expert prompt engineer. Improve the user's prompt for the objective{focus}. Keep every {{{{variable}}}} it uses.

Return JSON:
{{"improved": "the full improved prompt", "changes": "what you changed and why"}}"""
IMPROVE_USER = """Objective:
{objective}

Prompt:
{prompt}"""
