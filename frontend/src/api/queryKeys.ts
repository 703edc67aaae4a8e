/** Hierarchical query keys: invalidating ['project', id] refreshes everything under it. */
export const qk = {
  me: ['me'] as const,
  projects: (params: { page: number; q?: string; role?: string }) => ['projects', params] as const,
  projectsAll: ['projects'] as const,
  project: (projectId: number) => ['project', projectId] as const,
  members: (projectId: number, page: number) => ['project', projectId, 'members', page] as const,
  membersAll: (projectId: number) => ['project', projectId, 'members'] as const,
  runs: (projectId: number, page: number, status = '') => ['project', projectId, 'runs', page, status] as const,
  runsAll: (projectId: number) => ['project', projectId, 'runs'] as const,
  run: (projectId: number, runId: number) => ['project', projectId, 'run', runId] as const,
  outputs: (projectId: number, runId: number, page: number, filters: Record<string, unknown> = {}) =>
    ['project', projectId, 'run', runId, 'outputs', page, filters] as const,
  outputsAll: (projectId: number, runId: number) => ['project', projectId, 'run', runId, 'outputs'] as const,
  progress: (projectId: number, runId: number) => ['project', projectId, 'run', runId, 'progress'] as const,
  summary: (projectId: number, runId: number) => ['project', projectId, 'run', runId, 'summary'] as const,
  prompts: (projectId: number) => ['project', projectId, 'prompts'] as const,
  promptVersions: (projectId: number, promptId: number) => ['project', projectId, 'prompts', promptId, 'versions'] as const,
  models: (projectId: number) => ['project', projectId, 'models'] as const,
  datasets: (projectId: number) => ['project', projectId, 'datasets'] as const,
  datasetList: (projectId: number, params: Record<string, unknown>) => ['project', projectId, 'datasets', 'list', params] as const,
  dataset: (projectId: number, datasetId: number) => ['project', projectId, 'datasets', 'one', datasetId] as const,
  cases: (projectId: number, datasetId: number, params: Record<string, unknown>, page: number) =>
    ['project', projectId, 'datasets', 'one', datasetId, 'cases', params, page] as const,
  versions: (projectId: number, datasetId: number) => ['project', projectId, 'datasets', 'one', datasetId, 'versions'] as const,
  diff: (projectId: number, datasetId: number, from: number, to: number) =>
    ['project', projectId, 'datasets', 'one', datasetId, 'diff', from, to] as const,
  coverage: (projectId: number, datasetId: number) => ['project', projectId, 'datasets', 'one', datasetId, 'coverage'] as const,
  providerKinds: ['provider-kinds'] as const,
  credentials: (projectId: number) => ['project', projectId, 'credentials'] as const,
  discover: (projectId: number, credentialId: number) =>
    ['project', projectId, 'credentials', credentialId, 'discover'] as const,
  modelConfigs: (projectId: number, includeArchived: boolean) =>
    ['project', projectId, 'models', 'configs', { includeArchived }] as const,
};
