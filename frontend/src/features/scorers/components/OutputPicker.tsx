import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';
import { Field, Select } from '@/components/ui';

interface OutputPickerProps {
  projectId: number;
  runId: number | null;
  outputId: number | null;
  onRun: (runId: number | null) => void;
  onOutput: (outputId: number | null) => void;
  error?: string;
}

const preview = (text: string | null | undefined) => {
  const one = (text ?? '').replace(/\s+/g, ' ').trim();
  return one.length > 60 ? `${one.slice(0, 59)}…` : one;
};

/** A recorded, succeeded output of one of the project's recent runs. */
export function OutputPicker({ projectId, runId, outputId, onRun, onOutput, error }: OutputPickerProps) {
  const runs = useQuery({
    queryKey: ['project', projectId, 'runs', 'picker'],
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/projects/{project_id}/runs', { params: { path: { project_id: projectId }, query: { page: 1, page_size: 50 } }, signal })),
  });
  const outputs = useQuery({
    queryKey: ['project', projectId, 'run', runId ?? 0, 'outputs', 'picker'],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/projects/{project_id}/runs/{run_id}/outputs', {
          params: { path: { project_id: projectId, run_id: runId ?? 0 }, query: { page: 1, page_size: 100, status: 'succeeded' } },
          signal,
        }),
      ),
    enabled: runId !== null,
  });
  return (
    <div className="grid gap-3 sm:grid-cols-2">
      <Field id="try-run" label="Run">
        <Select
          id="try-run"
          className="w-full"
          value={runId ?? ''}
          onChange={(e) => {
            onRun(e.target.value ? Number(e.target.value) : null);
            onOutput(null);
          }}
        >
          <option value="">{runs.isPending ? 'Loading runs…' : runs.isError ? 'Could not load runs' : 'Choose a run'}</option>
          {runs.data?.items.map((r) => (
            <option key={r.id} value={r.id}>
              #{r.id} {r.name}
            </option>
          ))}
        </Select>
      </Field>
      <Field id="try-output" label="Output" error={error}>
        <Select
          id="try-output"
          className="w-full"
          value={outputId ?? ''}
          disabled={runId === null}
          aria-describedby={error ? 'try-output-error' : undefined}
          onChange={(e) => onOutput(e.target.value ? Number(e.target.value) : null)}
        >
          <option value="">{outputs.isFetching ? 'Loading outputs…' : 'Choose an output'}</option>
          {outputs.data?.items.map((o) => (
            <option key={o.id} value={o.id}>
              Case #{o.case_number ?? o.case_id} · {o.label}: {preview(o.text)}
            </option>
          ))}
        </Select>
      </Field>
    </div>
  );
}
