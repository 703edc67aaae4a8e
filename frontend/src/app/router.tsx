import { createBrowserRouter, Navigate, type RouteObject } from 'react-router-dom';
import { AppShell } from './AppShell';
import { NotFoundPage } from './NotFoundPage';
import { PublicOnly, RequireAuth } from './RequireAuth';
import { LoginPage } from '@/features/auth/pages/LoginPage';
import { RegisterPage } from '@/features/auth/pages/RegisterPage';
import { ProjectsPage } from '@/features/projects/pages/ProjectsPage';
import { ProjectLayout } from '@/features/projects/pages/ProjectLayout';
import { ProjectMembersPage } from '@/features/projects/pages/ProjectMembersPage';
import { ProjectRunsPage } from '@/features/projects/pages/ProjectRunsPage';
import { ModelsPage } from '@/features/models/pages/ModelsPage';
import { ProvidersPage } from '@/features/providers/pages/ProvidersPage';
import { DatasetPage } from '@/features/datasets/pages/DatasetPage';
import { DatasetsPage } from '@/features/datasets/pages/DatasetsPage';
import { JudgmentsPage } from '@/features/judgments/pages/JudgmentsPage';
import { NewRunPage } from '@/features/runs/pages/NewRunPage';
import { RunPage } from '@/features/runs/pages/RunPage';
import { TokensPage } from '@/features/tokens/pages/TokensPage';

export const routes: RouteObject[] = [
  {
    element: <PublicOnly />,
    children: [
      { path: '/login', element: <LoginPage /> },
      { path: '/register', element: <RegisterPage /> },
    ],
  },
  {
    element: <RequireAuth />,
    children: [
      {
        element: <AppShell />,
        children: [
          { path: '/', element: <Navigate to="/projects" replace /> },
          { path: '/projects', element: <ProjectsPage /> },
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
            ],
          },
          { path: '/projects/:projectId/runs/:runId', element: <RunPage /> },
          { path: '/settings/tokens', element: <TokensPage /> },
        ],
      },
    ],
  },
  { path: '*', element: <NotFoundPage /> },
];

export const router = createBrowserRouter(routes);
