// Provider credentials and model configurations, derived from the
// generated OpenAPI paths (like types.ts) so they follow the backend's contract.
import type { paths } from './schema';

type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type Body<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

type Creds = paths['/api/projects/{project_id}/credentials'];
type Cred = paths['/api/projects/{project_id}/credentials/{credential_id}'];
type Models = paths['/api/projects/{project_id}/models'];
type OneModel = paths['/api/projects/{project_id}/models/{model_id}'];

export type ProviderKind = Json<paths['/api/provider-kinds']['get']['responses'][200]>[number];
export type ProviderKindName = ProviderKind['kind'];
export type ConfigField = ProviderKind['config_fields'][number];

export type CredentialPage = Json<Creds['get']['responses'][200]>;
export type Credential = CredentialPage['items'][number];
export type KeySource = Credential['key_source'];
export type CredentialCreateBody = Body<Creds['post']>;
export type CredentialUpdateBody = Body<Cred['patch']>;
export type TestResult = Json<paths['/api/projects/{project_id}/credentials/{credential_id}/test']['post']['responses'][200]>;
export type DiscoverResult = Json<paths['/api/projects/{project_id}/credentials/{credential_id}/discover']['get']['responses'][200]>;

export type ModelConfigPage = Json<Models['get']['responses'][200]>;
export type ModelConfig = ModelConfigPage['items'][number];
export type ModelParams = NonNullable<ModelConfig['params']>;
export type ModelCreateBody = Body<Models['post']>;
export type ModelUpdateBody = Body<OneModel['patch']>;
