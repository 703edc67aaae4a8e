// A case as the per-kind form edits it, and its conversion to and from the API's shape
// (core/datasets/cases.py says what each kind holds).
import type { Case, CaseBody, DatasetKind, Difficulty, JsonObject } from '../api';

export type ChatRole = 'system' | 'user' | 'assistant';
export interface DraftMessage {
  role: ChatRole;
  content: string;
  /** The ground truth of a user turn (expected.turns, in order of the user turns). */
  truth: string;
}

export interface CaseDraft {
  question: string;
  answer: string;
  variables: Array<{ name: string; value: string }>;
  output: string;
  messages: DraftMessage[];
  trace: string;
  tags: string;
  difficulty: string;
  /** Keys of `expected` the form does not edit, kept as they were. */
  expectedRest: JsonObject;
}

/** Field -> messages, in the server's field names ("input.question", "expected.turns[0]"...). */
export type DraftErrors = Record<string, string[]>;

export const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const str = (v: unknown) => (typeof v === 'string' ? v : v == null ? '' : JSON.stringify(v));

export function emptyDraft(kind: DatasetKind): CaseDraft {
  return {
    question: '',
    answer: '',
    variables: [{ name: '', value: '' }],
    output: '',
    messages: [{ role: 'user', content: '', truth: '' }],
    trace: kind === 'traces' ? JSON.stringify({ messages: [{ role: 'user', content: '' }] }, null, 2) : '',
    tags: '',
    difficulty: '',
    expectedRest: {},
  };
}

export function draftOf(kind: DatasetKind, c: Case): CaseDraft {
  const d = emptyDraft(kind);
  const input: JsonObject = c.input ?? {}; // read per kind below
  const expected = (c.expected ?? {}) as JsonObject;
  d.tags = c.tags.join(', ');
  d.difficulty = c.difficulty ?? '';
  if (kind === 'questions') {
    d.question = str(input.question);
    const { answer, ...rest } = expected;
    d.answer = str(answer);
    d.expectedRest = rest;
  } else if (kind === 'cases') {
    const entries = Object.entries(input);
    d.variables = entries.length ? entries.map(([name, value]) => ({ name, value: str(value) })) : d.variables;
    const { output, ...rest } = expected;
    d.output = str(output);
    d.expectedRest = rest;
  } else if (kind === 'conversations') {
    const turns = Array.isArray(expected.turns) ? expected.turns : [];
    let user = 0;
    const messages = Array.isArray(input.messages) ? (input.messages as JsonObject[]) : [];
    d.messages = messages.map((m) => {
      const role = (['system', 'user', 'assistant'].includes(String(m.role)) ? m.role : 'user') as ChatRole;
      return { role, content: str(m.content), truth: role === 'user' ? str(turns[user++]) : '' };
    });
    if (!d.messages.length) d.messages = emptyDraft(kind).messages;
  } else {
    d.trace = JSON.stringify(c.trace ?? { messages: [] }, null, 2);
  }
  return d;
}

const tagList = (tags: string) => [...new Set(tags.split(',').map((t) => t.trim()).filter(Boolean))];

/** The request body of a draft, or the errors that keep it from being sent (nothing is sent then). */
export function bodyOf(kind: DatasetKind, d: CaseDraft): { body: CaseBody | null; errors: DraftErrors } {
  const errors: DraftErrors = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  const common = { tags: tagList(d.tags), difficulty: (d.difficulty || null) as Difficulty | null };
  if (common.tags.some((t) => t.length > 50)) add('tags', 'Each tag at most 50 characters');
  let body: CaseBody = common;
  if (kind === 'questions') {
    if (!d.question.trim()) add('input.question', 'Enter the question');
    const expected = d.answer.trim() ? { ...d.expectedRest, answer: d.answer } : Object.keys(d.expectedRest).length ? d.expectedRest : null;
    body = { ...common, input: { question: d.question }, expected };
  } else if (kind === 'cases') {
    const input: Record<string, string> = {};
    d.variables.forEach((v, i) => {
      if (!v.name.trim() && !v.value.trim()) return;
      if (!VARIABLE.test(v.name)) add(`variables[${i}]`, `“${v.name}” is not a variable name: letters, digits and _, not starting with a digit`);
      else if (v.name in input) add(`variables[${i}]`, `“${v.name}” is given twice`);
      input[v.name] = v.value;
    });
    if (!Object.keys(input).length) add('input', 'Give at least one variable');
    const expected = d.output ? { ...d.expectedRest, output: d.output } : Object.keys(d.expectedRest).length ? d.expectedRest : null;
    body = { ...common, input, expected };
  } else if (kind === 'conversations') {
    const users = d.messages.filter((m) => m.role === 'user');
    if (users.length < 1 || users.length > 10) add('input.messages', 'A conversation has 1 to 10 user turns');
    d.messages.forEach((m, i) => {
      if (!m.content.trim()) add(`input.messages[${i}].content`, 'Enter the message');
    });
    let turn = 0;
    d.messages.forEach((m) => {
      if (m.role !== 'user') return;
      if (!m.truth.trim()) add(`expected.turns[${turn}]`, 'Enter the ground truth of this turn');
      turn++;
    });
    body = {
      ...common,
      input: { messages: d.messages.map((m) => ({ role: m.role, content: m.content })) },
      expected: { turns: users.map((m) => m.truth) },
    };
  } else {
    let trace: unknown;
    try {
      trace = JSON.parse(d.trace);
    } catch (e) {
      add('trace', `Not valid JSON: ${(e as Error).message}`);
    }
    if (trace !== undefined) {
      const messages = (trace as JsonObject | null)?.messages;
      if (typeof trace !== 'object' || trace === null || Array.isArray(trace) || !Array.isArray(messages) || !messages.length)
        add('trace', 'Must be {"messages": [...]} with at least one message');
    }
    body = { ...common, input: {}, trace: (trace ?? null) as JsonObject | null };
  }
  return { body: Object.keys(errors).length ? null : body, errors };
}

/**
 * The server's 422 field errors of the draft at `index`: a bulk add names each bad case by
 * its index under `cases`, an edit under `case` (index 0).
 */
export function serverErrors(errors: unknown, index: number): DraftErrors {
  const json = (errors as { json?: Record<string, unknown> } | null)?.json ?? {};
  const byCase = (json.cases ?? json.case) as Record<string, unknown> | undefined;
  const mine = (byCase && typeof byCase === 'object' ? byCase[String(index)] : undefined) as Record<string, unknown> | undefined;
  const out: DraftErrors = {};
  for (const [field, value] of Object.entries(mine ?? {})) {
    out[field] = Array.isArray(value) ? value.map(String) : [String(value)];
  }
  // Fields of an edit the schema refused (e.g. tags) come at the top level.
  if (index === 0) {
    for (const field of ['tags', 'difficulty', 'input', 'expected', 'trace']) {
      const v = json[field];
      if (Array.isArray(v)) out[field] = v.map(String);
    }
  }
  return out;
}

/** Errors of `fields` (a field, or every field under it), one line. */
export function errorsAt(errors: DraftErrors, ...prefixes: string[]): string | undefined {
  const found = Object.entries(errors)
    .filter(([field]) => prefixes.some((p) => field === p || field.startsWith(`${p}.`) || field.startsWith(`${p}[`)))
    .flatMap(([, messages]) => messages);
  return found.length ? found.join('; ') : undefined;
}
