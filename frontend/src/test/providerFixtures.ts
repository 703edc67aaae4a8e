import type { Credential, ModelConfig, ProviderKind } from '@/api/providerTypes';

export const ts = '2024-01-01T00:00:00Z';

/** The kinds as the backend describes them (GET /api/provider-kinds). */
export const kinds: ProviderKind[] = [
  { kind: 'openai', label: 'OpenAI', default_base_url: 'https://api.openai.com', needs_key: true, accepts_key: true, supports_discovery: true, description: '', secret_label: 'API key', config_fields: [{ name: 'organization', label: 'Organization ID', required: false, help: 'Sent as OpenAI-Organization (optional).', placeholder: 'org-...' }] },
  { kind: 'anthropic', label: 'Anthropic', default_base_url: 'https://api.anthropic.com', needs_key: true, accepts_key: true, supports_discovery: true, description: '', secret_label: 'API key', config_fields: [] },
  {
    kind: 'azure_openai',
    label: 'Azure OpenAI',
    default_base_url: null,
    needs_key: true,
    accepts_key: true,
    supports_discovery: false,
    description: 'The base URL is your resource endpoint.',
    secret_label: 'API key',
    config_fields: [
      { name: 'api_version', label: 'API version', required: true, help: 'The Azure OpenAI REST API version to call.', placeholder: '2024-10-21' },
      { name: 'deployment', label: 'Deployment', required: false, help: 'A deployment name used to test the connection.', placeholder: 'gpt-4o-mini' },
    ],
  },
  { kind: 'openrouter', label: 'OpenRouter', default_base_url: 'https://openrouter.ai/api', needs_key: true, accepts_key: true, supports_discovery: true, description: '', secret_label: 'API key', config_fields: [] },
  { kind: 'ollama', label: 'Ollama', default_base_url: 'http://localhost:11434', needs_key: false, accepts_key: false, supports_discovery: true, description: 'A local Ollama server; it takes no API key.', secret_label: 'API key', config_fields: [] },
  { kind: 'openai_compatible', label: 'OpenAI-compatible server', default_base_url: null, needs_key: false, accepts_key: true, supports_discovery: true, description: 'The key is optional.', secret_label: 'API key', config_fields: [] },
  { kind: 'fake', label: "Fake provider (Assay's test double, not a real model)", default_base_url: 'http://127.0.0.1:8198', needs_key: false, accepts_key: true, supports_discovery: true, description: "Assay's built-in fake provider.", secret_label: 'API key', config_fields: [] },
];

export function credential(over: Partial<Credential> = {}): Credential {
  return {
    id: 1,
    row_version: 1,
    kind: 'openai',
    label: 'OpenAI – Production',
    base_url: 'https://api.openai.com',
    config: {},
    key_hint: '••••1234',
    key_source: 'stored',
    secret_env: null,
    is_default: true,
    concurrency_ceiling: null,
    last_tested_at: ts,
    last_test_ok: true,
    last_test_error: null,
    model_count: 0,
    created_at: ts,
    updated_at: ts,
    ...over,
  };
}

export function modelConfig(over: Partial<ModelConfig> = {}): ModelConfig {
  return {
    id: 5,
    row_version: 1,
    name: 'Mini',
    credential_id: 1,
    credential_label: 'OpenAI – Production',
    provider: 'openai',
    model: 'gpt-4o-mini',
    input_price_per_mtok_micros: 150_000,
    output_price_per_mtok_micros: 600_000,
    priced: true,
    context_window: 128_000,
    params: {},
    archived_at: null,
    created_at: ts,
    updated_at: ts,
    ...over,
  };
}

export const page = (items: unknown[]) => ({ items, total: items.length, page: 1, page_size: 100 });

export const project = (role: string) => ({
  id: 3,
  name: 'Alpha',
  slug: 'alpha',
  description: null,
  role,
  member_count: 1,
  created_at: ts,
  updated_at: ts,
});

export const apiError = (status: number, code: string, message: string, errors: Record<string, unknown> = {}) =>
  ({ code, status, message, errors });
