import type { ConfigField, ProviderKind } from '@/api/providerTypes';

type LooseField = Partial<ConfigField> & { name: string };

export type KeyMode = 'required' | 'optional' | 'none';

/** Kinds that never take a key (a local Ollama has no authentication). */
const KEYLESS_KINDS = new Set(['ollama']);

export function keyMode(kind: ProviderKind | undefined): KeyMode {
  if (!kind) return 'optional';
  if (kind.needs_key === true) return 'required';
  if (kind.accepts_key === false || (kind.accepts_key === undefined && KEYLESS_KINDS.has(kind.kind))) return 'none';
  return 'optional';
}

const FIELD_LABELS: Record<string, string> = {
  api_version: 'API version',
  deployment: 'Deployment',
  organization: 'Organization ID',
};

const FIELD_PLACEHOLDERS: Record<string, string> = {
  api_version: '2024-10-21',
  deployment: 'gpt-4o-mini',
};

export interface NormalizedField {
  name: string;
  label: string;
  required: boolean;
  help: string | null;
  placeholder: string | null;
}

function humanize(name: string) {
  const s = name.replace(/_/g, ' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** The server may list config fields as names or as objects; both become one shape. */
export function configFields(kind: ProviderKind | undefined): NormalizedField[] {
  if (!kind) return [];
  return (kind.config_fields ?? []).map((f: ConfigField | string) => {
    const field: LooseField = typeof f === 'string' ? { name: f } : f;
    return {
      name: field.name,
      label: field.label || FIELD_LABELS[field.name] || humanize(field.name),
      required: !!field.required,
      help: field.help ?? null,
      placeholder: field.placeholder ?? FIELD_PLACEHOLDERS[field.name] ?? null,
    };
  });
}

export function baseUrlLabel(kind: string | undefined): string {
  return kind === 'azure_openai' ? 'Endpoint' : 'Base URL';
}

export function baseUrlHint(kind: ProviderKind | undefined): string {
  if (!kind) return '';
  if (kind.kind === 'azure_openai') return 'Your resource, e.g. https://my-resource.openai.azure.com.';
  if (kind.kind === 'ollama') return 'Where Ollama listens, e.g. http://localhost:11434.';
  if (kind.kind === 'openai_compatible') return 'The server’s root, e.g. http://localhost:8000 (Assay adds /v1/…).';
  if (kind.kind === 'fake') return 'The fake provider that `assay up` runs.';
  return kind.default_base_url ? 'Leave as is unless you use a proxy.' : '';
}

export function kindDescription(kinds: ProviderKind[] | undefined, kind: string): string | null {
  const fromServer = kinds?.find((k) => k.kind === kind)?.description;
  if (fromServer) return fromServer;
  if (kind === 'fake') return 'Assay’s fake provider answers instantly with canned replies: for demos and tests, never real models.';
  if (kind === 'ollama') return 'A local Ollama server; no key needed.';
  return null;
}

/** Display label of a kind, from the server list when loaded. */
export function kindLabel(kinds: ProviderKind[] | undefined, kind: string): string {
  return kinds?.find((k) => k.kind === kind)?.label ?? FALLBACK_KIND_LABELS[kind] ?? kind;
}

/** A short name for tables, where the server's full label would wrap ("Fake (Assay)"). */
export function shortKindLabel(kinds: ProviderKind[] | undefined, kind: string): string {
  return SHORT_KIND_LABELS[kind] ?? kindLabel(kinds, kind);
}

const SHORT_KIND_LABELS: Record<string, string> = {
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  azure_openai: 'Azure OpenAI',
  openrouter: 'OpenRouter',
  ollama: 'Ollama',
  openai_compatible: 'OpenAI-compatible',
  fake: 'Fake (Assay)',
};

const FALLBACK_KIND_LABELS: Record<string, string> = {
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  azure_openai: 'Azure OpenAI',
  openrouter: 'OpenRouter',
  ollama: 'Ollama',
  openai_compatible: 'OpenAI-compatible',
  fake: 'Fake provider (Assay, for demos and tests)',
};
