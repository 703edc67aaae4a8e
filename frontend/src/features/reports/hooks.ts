import { useQuery } from '@tanstack/react-query';
import { reportsApi, type Versions } from './api';

const key = (projectId: number, ...rest: unknown[]) => ['project', projectId, 'reports', ...rest] as const;

export const useLeaderboard = (projectId: number, scorerId: number | null, versions: Versions, enabled = true) =>
  useQuery({ queryKey: key(projectId, 'leaderboard', scorerId, versions), queryFn: () => reportsApi.leaderboard(projectId, scorerId, versions), enabled });
export const useCosts = (projectId: number) => useQuery({ queryKey: key(projectId, 'costs'), queryFn: () => reportsApi.costs(projectId) });
export const useTokens = (projectId: number) => useQuery({ queryKey: key(projectId, 'tokens'), queryFn: () => reportsApi.tokens(projectId) });
export const useTrend = (projectId: number, scorerId: number | null, enabled = true) =>
  useQuery({ queryKey: key(projectId, 'trend', scorerId), queryFn: () => reportsApi.trend(projectId, scorerId), enabled });
export const useQuestionQuality = (projectId: number) =>
  useQuery({ queryKey: key(projectId, 'question-quality'), queryFn: () => reportsApi.questionQuality(projectId) });
export const useScorers = (projectId: number) => useQuery({ queryKey: key(projectId, 'scorers'), queryFn: () => reportsApi.scorers(projectId) });
export const useReportRuns = (projectId: number) => useQuery({ queryKey: key(projectId, 'runs'), queryFn: () => reportsApi.runs(projectId) });
export const useStatistics = (projectId: number, runId: number | null) =>
  useQuery({ queryKey: key(projectId, 'run', runId, 'statistics'), queryFn: () => reportsApi.statistics(projectId, runId!), enabled: runId !== null });
export const useFacets = (projectId: number, runId: number | null, versionId: number | null) =>
  useQuery({
    queryKey: key(projectId, 'run', runId, 'facets', versionId),
    queryFn: () => reportsApi.facets(projectId, runId!, versionId!),
    enabled: runId !== null && versionId !== null,
  });
export const useComparisonSummary = (projectId: number, runId: number | null) =>
  useQuery({ queryKey: key(projectId, 'run', runId, 'comparisons'), queryFn: () => reportsApi.comparisons(projectId, runId!), enabled: runId !== null });
