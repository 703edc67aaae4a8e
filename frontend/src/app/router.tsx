import { createBrowserRouter, Navigate, type RouteObject } from 'react-router-dom';
import type { ComponentType } from 'react';
import { AppShell } from './AppShell';
import { NotFoundPage } from './NotFoundPage';
import { PublicOnly, RequireAuth } from './RequireAuth';
import { LoginPage } from '@/features/auth/pages/LoginPage';
import { ProjectLayout } from '@/features/projects/pages/ProjectLayout';

/**
 * Route-level code splitting: every page past the shell is its own chunk, loaded when
 * its route is first visited, so the first paint only waits for the shell and login.
 */
const page = <M,>(load: () => Promise<M>, pick: (m: M) => ComponentType) => async () => ({
  Component: pick(await load()),
});

// Shown while the first visited route's lazy page loads (instead of nothing, and of React
// Router's "No HydrateFallback element" warning): on each top-level route, where it looks.
const loadingPage = <div role="status" aria-label="Loading page" className="min-h-screen" />;

export const routes: RouteObject[] = [
  {
    hydrateFallbackElement: loadingPage,
    element: <PublicOnly />,
    children: [
      { path: '/login', element: <LoginPage /> },
      { path: '/register', lazy: page(() => import('@/features/auth/pages/RegisterPage'), (m) => m.RegisterPage) },
    ],
  },
  {
    hydrateFallbackElement: loadingPage,
    element: <RequireAuth />,
    children: [
      {
        element: <AppShell />,
        children: [
          { path: '/', element: <Navigate to="/projects" replace /> },
          { path: '/projects', lazy: page(() => import('@/features/projects/pages/ProjectsPage'), (m) => m.ProjectsPage) },
          {
            path: '/projects/:projectId',
            element: <ProjectLayout />,
            children: [
              { index: true, lazy: page(() => import('@/features/projects/pages/ProjectRunsPage'), (m) => m.ProjectRunsPage) },
              // the Runs tab's own address: the same page as the project's index
              { path: 'runs', lazy: page(() => import('@/features/projects/pages/ProjectRunsPage'), (m) => m.ProjectRunsPage) },
              { path: 'runs/new', lazy: page(() => import('@/features/runs/pages/NewRunPage'), (m) => m.NewRunPage) },
              { path: 'datasets', lazy: page(() => import('@/features/datasets/pages/DatasetsPage'), (m) => m.DatasetsPage) },
              { path: 'datasets/:datasetId', lazy: page(() => import('@/features/datasets/pages/DatasetPage'), (m) => m.DatasetPage) },
              {
                path: 'datasets/:datasetId/judgments/:runId',
                lazy: page(() => import('@/features/judgments/pages/JudgmentsPage'), (m) => m.JudgmentsPage),
              },
              { path: 'experiments', lazy: page(() => import('@/features/experiments/pages/ExperimentsPage'), (m) => m.ExperimentsPage) },
              { path: 'experiments/new', lazy: page(() => import('@/features/experiments/pages/WizardPage'), (m) => m.WizardPage) },
              { path: 'experiments/:experimentId/edit', lazy: page(() => import('@/features/experiments/pages/WizardPage'), (m) => m.WizardPage) },
              { path: 'experiments/:experimentId', lazy: page(() => import('@/features/experiments/pages/ExperimentPage'), (m) => m.ExperimentPage) },
              {
                path: 'experiments/:experimentId/iterations/:number/review',
                lazy: page(() => import('@/features/experiments/pages/ReviewPage'), (m) => m.ReviewPage),
              },
              { path: 'experiments/:experimentId/lineage', lazy: page(() => import('@/features/experiments/pages/LineagePage'), (m) => m.LineagePage) },
              { path: 'experiments/:experimentId/report', lazy: page(() => import('@/features/experiments/pages/ReportPage'), (m) => m.ReportPage) },
              { path: 'prompts', lazy: page(() => import('@/features/prompts/pages/PromptsPage'), (m) => m.PromptsPage) },
              { path: 'prompts/:promptId', lazy: page(() => import('@/features/prompts/pages/PromptPage'), (m) => m.PromptPage) },
              { path: 'providers', lazy: page(() => import('@/features/providers/pages/ProvidersPage'), (m) => m.ProvidersPage) },
              { path: 'models', lazy: page(() => import('@/features/models/pages/ModelsPage'), (m) => m.ModelsPage) },
              { path: 'scorers', lazy: page(() => import('@/features/scorers/pages/ScorersPage'), (m) => m.ScorersPage) },
              {
                path: 'scorers/:scorerId',
                lazy: page(() => import('@/features/scorers/pages/ScorerEditorPage'), (m) => m.ScorerEditorPage),
              },
              { path: 'reports', lazy: page(() => import('@/features/reports/pages/LeaderboardPage'), (m) => m.LeaderboardPage) },
              { path: 'reports/costs', lazy: page(() => import('@/features/reports/pages/CostsPage'), (m) => m.CostsPage) },
              { path: 'reports/trend', lazy: page(() => import('@/features/reports/pages/TrendPage'), (m) => m.TrendPage) },
              { path: 'reports/runs', lazy: page(() => import('@/features/reports/pages/RunReportPage'), (m) => m.RunReportPage) },
              { path: 'reports/ratings', lazy: page(() => import('@/features/reports/pages/RatingsPage'), (m) => m.RatingsPage) },
              { path: 'reports/judges', lazy: page(() => import('@/features/reports/pages/JudgesPage'), (m) => m.JudgesPage) },
              { path: 'reports/rag', lazy: page(() => import('@/features/reports/pages/RagPage'), (m) => m.RagPage) },
              { path: 'members', lazy: page(() => import('@/features/projects/pages/ProjectMembersPage'), (m) => m.ProjectMembersPage) },
              { path: 'settings', lazy: page(() => import('@/features/settings/pages/ProjectSettingsPage'), (m) => m.ProjectSettingsPage) },
            ],
          },
          {
            path: '/projects/:projectId/runs/compare',
            lazy: page(() => import('@/features/compare/pages/CompareRunsPage'), (m) => m.CompareRunsPage),
          },
          {
            path: '/projects/:projectId/runs/:runId/cases/:caseId',
            lazy: page(() => import('@/features/cases/pages/CaseViewPage'), (m) => m.CaseViewPage),
          },
          { path: '/projects/:projectId/runs/:runId', lazy: page(() => import('@/features/runs/pages/RunPage'), (m) => m.RunPage) },
          {
            path: '/projects/:projectId/runs/:runId/results',
            lazy: page(() => import('@/features/results/pages/ResultsPage'), (m) => m.ResultsPage),
          },
          {
            path: '/projects/:projectId/runs/:runId/review',
            lazy: page(() => import('@/features/results/pages/ReviewPage'), (m) => m.ReviewPage),
          },
          { path: '/arena', lazy: page(() => import('@/features/arena/pages/ArenaLibraryPage'), (m) => m.ArenaLibraryPage) },
          {
            path: '/arena/:challengeId',
            lazy: page(() => import('@/features/arena/pages/ArenaWorkspacePage'), (m) => m.ArenaWorkspacePage),
          },
          { path: '/settings/tokens', lazy: page(() => import('@/features/tokens/pages/TokensPage'), (m) => m.TokensPage) },
        ],
      },
    ],
  },
  { path: '*', element: <NotFoundPage />, hydrateFallbackElement: loadingPage },
];

export const router = createBrowserRouter(routes);
