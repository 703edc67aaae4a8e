/** The slice of JSON Schema the scorer kinds use (see GET /api/scorer-kinds). */
export interface JsonSchema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  items?: JsonSchema;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  maxLength?: number;
  oneOf?: JsonSchema[];
  contentMediaType?: string;
}

/** How the generic form edits one property. */
export type Control =
  | { kind: 'text'; multiline: boolean }
  | { kind: 'number'; integer: boolean }
  | { kind: 'boolean' }
  | { kind: 'select'; options: string[] }
  | { kind: 'checkboxes'; options: string[] }
  | { kind: 'lines' }
  | { kind: 'json' };

const types = (s: JsonSchema) => (Array.isArray(s.type) ? s.type : s.type ? [s.type] : []);

export function controlFor(schema: JsonSchema): Control {
  const t = types(schema);
  if (t.length === 1 && t[0] === 'string' && schema.enum) return { kind: 'select', options: schema.enum.map(String) };
  if (t.length === 1 && t[0] === 'string') return { kind: 'text', multiline: (schema.maxLength ?? 0) > 200 };
  if (t.length === 1 && (t[0] === 'integer' || t[0] === 'number')) return { kind: 'number', integer: t[0] === 'integer' };
  if (t.length === 1 && t[0] === 'boolean') return { kind: 'boolean' };
  if (t.length === 1 && t[0] === 'array' && types(schema.items ?? {}).join() === 'string') {
    return schema.items?.enum ? { kind: 'checkboxes', options: schema.items.enum.map(String) } : { kind: 'lines' };
  }
  return { kind: 'json' };
}

/** A field name as a label: "pass_threshold" -> "Pass threshold". */
export function labelOf(name: string): string {
  const words = name.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The first server message under `params.<name>` (or a deeper path of it). */
export function errorFor(errors: Record<string, string>, name: string): string | undefined {
  const key = `params.${name}`;
  const found = Object.entries(errors).filter(([k]) => k === key || k.startsWith(`${key}.`) || k.startsWith(`${key}[`));
  if (found.length === 0) return undefined;
  return found.map(([k, v]) => (k === key ? v : `${k.slice(key.length + 1).replace(/^\./, '')}: ${v}`)).join(' ');
}

/** Server errors that no field of the form shows (so they are listed above it). */
export function unplacedErrors(errors: Record<string, string>, shown: string[]): string[] {
  return Object.entries(errors)
    .filter(([k]) => !k.startsWith('positions.') && !shown.some((s) => k === s || k.startsWith(`${s}.`) || k.startsWith(`${s}[`)))
    .map(([k, v]) => `${k.replace(/^params\./, '')}: ${v}`);
}
