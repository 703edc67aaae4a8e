// Provider credentials and model configurations, written from the contract of issue 3
// while the backend routes are being built. Replaced by types derived from schema.d.ts
// (see types.ts) as soon as the routes are in openapi.json.

export type ProviderKindName =
  | 'openai'
  | 'anthropic'
  | 'azure_openai'
  | 'openrouter'
  | 'ollama'
  | 'openai_compatible'
  | 'fake';

export interface ConfigField {
  name: string;
  label?: string;
  required?: boolean;
  help?: string | null;
  placeholder?: string | null;
}

export interface ProviderKind {
  kind: string;
  label: string;
  default_base_url: string | null;
  needs_key: boolean;
  accepts_key?: boolean;
  supports_discovery?: boolean;
  description?: string | null;
  config_fields: Array<ConfigField | string>;
}

export type KeySource = 'stored' | 'env' | 'none';

export interface Credential {
  id: number;
  kind: string;
  label: string;
  base_url: string;
  config: Record<string, unknown>;
  key_hint: string | null;
  key_source: KeySource;
  secret_env: string | null;
  is_default: boolean;
  last_tested_at: string | null;
  last_test_ok: boolean | null;
  last_test_error: string | null;
  model_count: number;
  created_at: string;
  updated_at: string;
}

export interface CredentialPage {
  items: Credential[];
  total: number;
  page: number;
  page_size: number;
}

export interface CredentialBody {
  kind?: string;
  label?: string;
  base_url?: string | null;
  api_key?: string | null;
  secret_env?: string | null;
  config?: Record<string, unknown>;
  is_default?: boolean;
}

export interface TestResult {
  ok: boolean;
  error: string | null;
  latency_ms: number | null;
  tested_at: string;
}

export interface DiscoverResult {
  items: Array<{ id: string; name?: string | null; configured?: boolean }>;
}

export interface ModelParams {
  temperature?: number | null;
  max_tokens?: number | null;
  top_p?: number | null;
  frequency_penalty?: number | null;
  presence_penalty?: number | null;
  seed?: number | null;
  stop?: string[] | null;
}

export interface ModelConfig {
  id: number;
  name: string;
  credential_id: number;
  credential_label: string;
  provider: string;
  model: string;
  input_price_per_mtok_micros: number | null;
  output_price_per_mtok_micros: number | null;
  priced: boolean;
  context_window: number | null;
  params: ModelParams;
  archived_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ModelConfigPage {
  items: ModelConfig[];
  total: number;
  page: number;
  page_size: number;
}

export interface ModelBody {
  name?: string;
  credential_id?: number;
  model?: string;
  input_price_per_mtok_micros?: number | null;
  output_price_per_mtok_micros?: number | null;
  context_window?: number | null;
  params?: ModelParams;
}

export interface RunEstimate {
  low_micros: number;
  high_micros: number;
  per_model: Array<Record<string, unknown>>;
  unpriced_models: Array<Record<string, unknown> | number | string>;
}
