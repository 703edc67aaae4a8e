// Prompts and their immutable versions (issue 14 B6): types derived from the generated
// OpenAPI paths, and the pure helpers the editor shares with its tests.
import type { paths } from '@/api/schema';

type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type Body<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type List = '/api/projects/{project_id}/prompts';
type One = '/api/projects/{project_id}/prompts/{prompt_id}';

export type PromptPage = Json<paths[List]['get']['responses'][200]>;
export type Prompt = PromptPage['items'][number];
export type PromptDetail = Json<paths[One]['get']['responses'][200]>;
export type PromptVersion = PromptDetail['versions'][number];
export type PromptCreateBody = Body<paths[List]['post']>;
export type VersionBody = Body<paths[`${One}/versions`]['post']>;
export type FewShot = PromptVersion['few_shots'][number];
export type Tool = Record<string, unknown>;

/** What a version holds that an edit can change, and a diff compares. */
export interface VersionContent {
  template: string;
  system: string | null;
  few_shots: FewShot[];
  tools: Tool[];
}

export const CHANGELOG_MIN = 10;
export const CHANGELOG_MAX = 500;
export const MAX_FEW_SHOTS = 10;
export const MAX_TEMPLATE = 40_000; // as the server (core/prompts/service.py)
export const MAX_SYSTEM = 20_000;

// The server's parser (backend/assay/core/prompts/service.py PLACEHOLDER): `{{name}}`, spaces
// allowed inside the braces, names like identifiers. Anything else is left as literal text.
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** Variable names in order of first use, each once: what the server stores on save. */
export function detectVariables(...texts: (string | null | undefined)[]): string[] {
  const found: string[] = [];
  for (const text of texts) {
    for (const match of (text ?? '').matchAll(PLACEHOLDER)) {
      if (!found.includes(match[1])) found.push(match[1]);
    }
  }
  return found;
}

/** The changelog rule the server applies (10-500 characters, surrounding spaces ignored). */
export function changelogError(note: string): string | null {
  const n = note.trim().length;
  if (n < CHANGELOG_MIN) return `Write at least ${CHANGELOG_MIN} characters (${n} so far).`;
  if (n > CHANGELOG_MAX) return `At most ${CHANGELOG_MAX} characters (${n} now).`;
  return null;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const TOOL_KEYS = new Set(['name', 'description', 'parameters']);

/**
 * The tools text parsed as a JSON array of {name, description?, parameters?} with the
 * server's structural rules; the server also checks `parameters` against the JSON Schema
 * meta-schema and answers field errors the editor shows the same way.
 */
export function parseTools(text: string): { tools: Tool[]; error: string | null } {
  if (!text.trim()) return { tools: [], error: null };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { tools: [], error: `Not valid JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (!Array.isArray(value)) return { tools: [], error: 'Must be a JSON array of tool definitions.' };
  const names = new Set<string>();
  for (const [i, tool] of value.entries()) {
    const where = `Tool ${i + 1}`;
    if (typeof tool !== 'object' || tool === null || Array.isArray(tool)) return { tools: [], error: `${where} must be an object.` };
    const extra = Object.keys(tool).filter((k) => !TOOL_KEYS.has(k));
    if (extra.length) return { tools: [], error: `${where} has unknown keys: ${extra.join(', ')}.` };
    const { name, description, parameters } = tool as Record<string, unknown>;
    if (typeof name !== 'string' || !TOOL_NAME.test(name)) return { tools: [], error: `${where}: name must be 1-64 letters, digits, _ or -.` };
    if (names.has(name)) return { tools: [], error: `${where}: name "${name}" is used twice.` };
    names.add(name);
    if (description !== undefined && typeof description !== 'string') return { tools: [], error: `${where}: description must be text.` };
    if (parameters !== undefined) {
      const p = parameters as Record<string, unknown> | null;
      if (typeof p !== 'object' || p === null || Array.isArray(p) || p.type !== 'object')
        return { tools: [], error: `${where}: parameters must be a JSON Schema with "type": "object".` };
    }
  }
  return { tools: value as Tool[], error: null };
}

// Keys sorted at every level, as the API serialises them, so a diff shows changes in
// meaning, not in the order keys were typed.
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortedKeys((value as Record<string, unknown>)[k])]),
    );
  return value;
}

export function toolsText(tools: Tool[]): string {
  return tools.length ? JSON.stringify(sortedKeys(tools), null, 2) : '';
}

export function fewShotsText(shots: FewShot[]): string {
  return shots.map((s, i) => `Example ${i + 1}\nInput: ${s.input}\nOutput: ${s.output}\n`).join('\n');
}

/** The sections a diff compares, as text, in the order shown. */
export function sections(v: VersionContent): { key: string; label: string; text: string }[] {
  return [
    { key: 'template', label: 'Template', text: v.template },
    { key: 'system', label: 'System text', text: v.system ?? '' },
    { key: 'few_shots', label: 'Few-shot examples', text: fewShotsText(v.few_shots) },
    { key: 'tools', label: 'Tools', text: toolsText(v.tools) },
  ];
}

export function contentOf(v: PromptVersion): VersionContent {
  return { template: v.template, system: v.system ?? null, few_shots: v.few_shots, tools: (v.tools ?? []) as Tool[] };
}
