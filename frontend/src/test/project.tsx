import { render } from '@testing-library/react';
import { QueryClientProvider } from '@tanstack/react-query';
import { createMemoryRouter, RouterProvider } from 'react-router-dom';
import { makeQueryClient } from '@/app/queryClient';
import { ModelsPage } from '@/features/models/pages/ModelsPage';
import { ProjectLayout } from '@/features/projects/pages/ProjectLayout';
import { ProjectMembersPage } from '@/features/projects/pages/ProjectMembersPage';
import { ProjectRunsPage } from '@/features/projects/pages/ProjectRunsPage';
import { DatasetPage } from '@/features/datasets/pages/DatasetPage';
import { DatasetsPage } from '@/features/datasets/pages/DatasetsPage';
import { JudgmentsPage } from '@/features/judgments/pages/JudgmentsPage';
import { ProvidersPage } from '@/features/providers/pages/ProvidersPage';
import { NewRunPage } from '@/features/runs/pages/NewRunPage';
import { LeaderboardPage } from '@/features/reports/pages/LeaderboardPage';
import { CostsPage } from '@/features/reports/pages/CostsPage';
import { TrendPage } from '@/features/reports/pages/TrendPage';
import { RunReportPage } from '@/features/reports/pages/RunReportPage';
import { RatingsPage } from '@/features/reports/pages/RatingsPage';
import { JudgesPage } from '@/features/reports/pages/JudgesPage';
import { RagPage } from '@/features/reports/pages/RagPage';

/** Renders the project pages as the app routes them (layout + tabs), starting at `route`. */
export function renderProject(route: string) {
  const client = makeQueryClient({ retry: false });
  const router = createMemoryRouter(
    [
      {
        path: '/projects/:projectId',
        element: <ProjectLayout />,
        children: [
          { index: true, element: <ProjectRunsPage /> },
          { path: 'runs/new', element: <NewRunPage /> },
          { path: 'datasets', element: <DatasetsPage /> },
          { path: 'datasets/:datasetId', element: <DatasetPage /> },
          { path: 'datasets/:datasetId/judgments/:runId', element: <JudgmentsPage /> },
          { path: 'providers', element: <ProvidersPage /> },
          { path: 'models', element: <ModelsPage /> },
          { path: 'members', element: <ProjectMembersPage /> },
          { path: 'reports', element: <LeaderboardPage /> },
          { path: 'reports/costs', element: <CostsPage /> },
          { path: 'reports/trend', element: <TrendPage /> },
          { path: 'reports/runs', element: <RunReportPage /> },
          { path: 'reports/ratings', element: <RatingsPage /> },
          { path: 'reports/judges', element: <JudgesPage /> },
          { path: 'reports/rag', element: <RagPage /> },
        ],
      },
      { path: '/projects/:projectId/runs/:runId', element: <p>Run page</p> },
      { path: '/projects', element: <p>Projects page</p> },
    ],
    { initialEntries: [route] },
  );
  return { client, router, ...render(<QueryClientProvider client={client}><RouterProvider router={router} /></QueryClientProvider>) };
}
