/** Hierarchical query keys: invalidating ['project', id] refreshes everything under it. */
export const qk = {
  me: ['me'] as const,
  projects: (params: { page: number; q?: string; role?: string }) => ['projects', params] as const,
  projectsAll: ['projects'] as const,
  project: (projectId: number) => ['project', projectId] as const,
  members: (projectId: number, page: number) => ['project', projectId, 'members', page] as const,
  membersAll: (projectId: number) => ['project', projectId, 'members'] as const,
  runs: (projectId: number, page: number) => ['project', projectId, 'runs', page] as const,
  runsAll: (projectId: number) => ['project', projectId, 'runs'] as const,
  run: (projectId: number, runId: number) => ['project', projectId, 'run', runId] as const,
  outputs: (projectId: number, runId: number, page: number) =>
    ['project', projectId, 'run', runId, 'outputs', page] as const,
  outputsAll: (projectId: number, runId: number) => ['project', projectId, 'run', runId, 'outputs'] as const,
  models: (projectId: number) => ['project', projectId, 'models'] as const,
  datasets: (projectId: number) => ['project', projectId, 'datasets'] as const,
  providerKinds: ['provider-kinds'] as const,
  credentials: (projectId: number) => ['project', projectId, 'credentials'] as const,
  discover: (projectId: number, credentialId: number) =>
    ['project', projectId, 'credentials', credentialId, 'discover'] as const,
  modelConfigs: (projectId: number, includeArchived: boolean) =>
    ['project', projectId, 'models', 'configs', { includeArchived }] as const,
  estimate: (projectId: number, body: { dataset_id: number; model_ids: number[]; repeats: number }) =>
    ['project', projectId, 'estimate', body] as const,
};
