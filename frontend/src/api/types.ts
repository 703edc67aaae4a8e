// Named types for the SPA, derived from the generated OpenAPI paths so they follow
// the contract whatever the backend calls its schema components.
import type { paths } from './schema';

type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;

export type User = Json<paths['/api/auth/me']['get']['responses'][200]>;
export type LoginBody = NonNullable<paths['/api/auth/login']['post']['requestBody']>['content']['application/json'];
export type RegisterBody = NonNullable<paths['/api/auth/register']['post']['requestBody']>['content']['application/json'];
export type Project = Json<paths['/api/projects/{project_id}']['get']['responses'][200]>;
export type ProjectPage = Json<paths['/api/projects']['get']['responses'][200]>;
export type ProjectCreateBody = NonNullable<paths['/api/projects']['post']['requestBody']>['content']['application/json'];
export type Role = Project['role'];
export type Member = Json<paths['/api/projects/{project_id}/members']['post']['responses'][201]>;
export type MemberPage = Json<paths['/api/projects/{project_id}/members']['get']['responses'][200]>;
export type Run = Json<paths['/api/projects/{project_id}/runs/{run_id}']['get']['responses'][200]>;
export type RunPage = Json<paths['/api/projects/{project_id}/runs']['get']['responses'][200]>;
export type RunStatus = Run['status'];
export type OutputPage = Json<paths['/api/projects/{project_id}/runs/{run_id}/outputs']['get']['responses'][200]>;
export type Output = OutputPage['items'][number];
export type ModelPage = Json<paths['/api/projects/{project_id}/models']['get']['responses'][200]>;
export type Model = ModelPage['items'][number];
export type DatasetPage = Json<paths['/api/projects/{project_id}/datasets']['get']['responses'][200]>;
export type Dataset = DatasetPage['items'][number];

export const ROLES: readonly Role[] = ['viewer', 'reviewer', 'editor', 'admin', 'owner'];

export function roleAtLeast(role: Role | undefined, min: Role): boolean {
  if (!role) return false;
  return ROLES.indexOf(role) >= ROLES.indexOf(min);
}

export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = [
  'completed',
  'partial',
  'failed',
  'cancelled',
  'budget_exceeded',
];

export function isTerminal(status: RunStatus | undefined): boolean {
  return !!status && TERMINAL_RUN_STATUSES.includes(status);
}
