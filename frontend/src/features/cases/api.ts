// One case of a run with every target's outputs and scores (GET .../runs/{run}/cases/{case}).
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { paths } from '@/api/schema';
import { request, runPath } from '@/features/runs/api';

type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;

export type CaseView = Json<paths['/api/projects/{project_id}/runs/{run_id}/cases/{case_id}']['get']['responses'][200]>;
export type CaseTarget = CaseView['targets'][number];
export type CaseOutput = CaseTarget['outputs'][number];
export type Score = CaseOutput['scores'][number];
export type Evidence = Score['evidence'][number];

export const casePath = (projectId: number, runId: number, caseId: number) => `/projects/${projectId}/runs/${runId}/cases/${caseId}`;

export function useCaseView(projectId: number, runId: number, caseId: number) {
  return useQuery({
    queryKey: ['project', projectId, 'run', runId, 'case', caseId] as const,
    queryFn: ({ signal }) => request<CaseView>('GET', `${runPath(projectId, runId)}/cases/${caseId}`, { signal }),
    placeholderData: keepPreviousData,
  });
}

/** "GPT-4o", "GPT-4o · repeat 2", "GPT-4o · turn 2 · repeat 3": turn and repeat are named when
 * the target has more than one of them. */
export function outputLabel(
  label: string,
  o: Pick<CaseOutput, 'repeat' | 'turn'>,
  { turns, repeats }: { turns: boolean; repeats: boolean },
): string {
  const parts = [label || 'Target'];
  if (turns) parts.push(`turn ${o.turn + 1}`);
  if (repeats) parts.push(`repeat ${o.repeat + 1}`);
  return parts.join(' · ');
}

export interface LabelledOutput {
  key: string;
  label: string;
  output: CaseOutput;
}

/** Every output of the case, labelled, in target order. */
export function labelledOutputs(view: CaseView): LabelledOutput[] {
  return view.targets.flatMap((t) => {
    const shape = { turns: t.outputs.some((o) => o.turn > 0), repeats: t.outputs.some((o) => o.repeat > 0) };
    return t.outputs.map((o) => ({ key: String(o.id), label: outputLabel(t.label, o, shape), output: o }));
  });
}
