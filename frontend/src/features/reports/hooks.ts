import { useQueries, useQuery } from '@tanstack/react-query';
import { reportsApi, type Scope, type Versions } from './api';

const key = (projectId: number, ...rest: unknown[]) => ['project', projectId, 'reports', ...rest] as const;

export const useLeaderboard = (projectId: number, scorerId: number | null, versions: Versions, scope: Scope, enabled = true) =>
  useQuery({
    queryKey: key(projectId, 'leaderboard', scorerId, versions, scope),
    queryFn: () => reportsApi.leaderboard(projectId, scorerId, versions, scope),
    enabled,
  });
export const useCosts = (projectId: number, scope: Scope, enabled = true) =>
  useQuery({ queryKey: key(projectId, 'costs', scope), queryFn: () => reportsApi.costs(projectId, scope), enabled });
export const useTokens = (projectId: number, scope: Scope, enabled = true) =>
  useQuery({ queryKey: key(projectId, 'tokens', scope), queryFn: () => reportsApi.tokens(projectId, scope), enabled });
export const useTrend = (projectId: number, scorerId: number | null, scope: Scope, enabled = true) =>
  useQuery({ queryKey: key(projectId, 'trend', scorerId, scope), queryFn: () => reportsApi.trend(projectId, scorerId, scope), enabled });
export const useReportDatasets = (projectId: number) => useQuery({ queryKey: key(projectId, 'datasets'), queryFn: () => reportsApi.datasets(projectId) });
export const useQuestionQuality = (projectId: number) =>
  useQuery({ queryKey: key(projectId, 'question-quality'), queryFn: () => reportsApi.questionQuality(projectId) });
export const useScorers = (projectId: number) => useQuery({ queryKey: key(projectId, 'scorers'), queryFn: () => reportsApi.scorers(projectId) });
export const useScorerCoverage = (projectId: number) =>
  useQuery({ queryKey: key(projectId, 'scorer-coverage'), queryFn: () => reportsApi.scorerCoverage(projectId) });
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
export const useDashboard = (projectId: number, runId: number | null, scorerId: number | null) =>
  useQuery({ queryKey: key(projectId, 'run', runId, 'dashboard', scorerId), queryFn: () => reportsApi.dashboard(projectId, runId!, scorerId), enabled: runId !== null });
/** Every pair of the run's targets (first against each later one), compared on one scorer version. */
export const useTargetPairs = (projectId: number, runId: number, targetIds: number[], versionId: number | null) =>
  useQueries({
    queries: targetIds.flatMap((a, i) =>
      targetIds.slice(i + 1).map((b) => ({
        queryKey: key(projectId, 'run', runId, 'compare-targets', a, b, versionId),
        queryFn: () => reportsApi.compareTargets(projectId, runId, a, b, versionId!),
        enabled: versionId !== null,
      })),
    ),
  });
export const useReportRun = (projectId: number, runId: number | null) =>
  useQuery({ queryKey: key(projectId, 'run', runId, 'view'), queryFn: () => reportsApi.run(projectId, runId!), enabled: runId !== null });
export const useRatings = (projectId: number, scorerId: number | null, scope: Scope, enabled = true) =>
  useQuery({ queryKey: key(projectId, 'ratings', scorerId, scope), queryFn: () => reportsApi.ratings(projectId, scorerId, scope), enabled });
export const useCalibration = (projectId: number) =>
  useQuery({ queryKey: key(projectId, 'judge-calibration'), queryFn: () => reportsApi.calibration(projectId) });
export const useRag = (projectId: number, scorerId: number | null, scope: Scope, enabled = true) =>
  useQuery({ queryKey: key(projectId, 'rag', scorerId, scope), queryFn: () => reportsApi.rag(projectId, scorerId, scope), enabled });
